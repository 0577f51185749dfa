import json
import socket
import subprocess
import time

import pytest
import redis
from django.core.management import call_command

from judges.backends.offline import _parts, compare_parts, identifiers
from judges.local_llm import LocalLLMServer
from judges.parsing import _plain_text_cached, parsed
from tests.factories import JudgeConfigFactory
from trajectories.models import AgentRun

FAST_RETRIES = {"backoff_base": 0.001, "backoff_cap": 0.01, "timeout": 0.5, "max_retries": 3,
                "requests_per_minute": 0, "concurrency": 4}


@pytest.fixture(autouse=True)
def fresh_step_caches():
    """Every test reads its steps anew: a result cached by an earlier test (or, under `bin/mutation`, by the
    process the mutant's is forked from) would hide what the code does now."""
    for cached in (_plain_text_cached, parsed, _parts, compare_parts, identifiers):
        cached.cache_clear()


@pytest.fixture
def llm_server():
    with LocalLLMServer() as server:
        yield server


@pytest.fixture
def om2w(shared_data):
    return shared_data / "agent-outputs" / "online-mind2web"


def import_run(path, run: str, capsys) -> AgentRun:
    """A folder or file imported as `run` by `import_trajectories`, as a user would."""
    call_command("import_trajectories", str(path), "--run", run, "--json", verbosity=0)
    assert json.loads(capsys.readouterr().out)["ok"] is True
    return AgentRun.objects.get(name=run)


@pytest.fixture
def openai_config(llm_server):
    return JudgeConfigFactory(name="local-llm", backend="openai", model="gpt-4o-mini", base_url=llm_server.base_url,
                              options=FAST_RETRIES, tested=True)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="session")
def redis_url(tmp_path_factory):
    """A Redis server of the tests' own, on a free loopback port, keeping nothing on disk."""
    port = _free_port()
    process = subprocess.Popen(
        ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
         "--dir", str(tmp_path_factory.mktemp("redis"))],
        stdout=subprocess.DEVNULL,
    )
    url = f"redis://127.0.0.1:{port}/0"
    client = redis.Redis.from_url(url)
    for _ in range(100):
        try:
            client.ping()
            break
        except redis.ConnectionError:
            time.sleep(0.05)
    yield url
    process.terminate()
    process.wait(timeout=10)
