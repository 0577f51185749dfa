"""Import of AgentLab episode folders against the WebArena render import of the same number of steps.

Generates, in a temporary folder, 1,000 AgentLab episode folders from the two real episodes in
shared/data/agent-outputs/browsergym-agentlab, alternately (2 and 1 agent steps, their files as
they are: `summary_info.json`, `exp_args.pkl`, `goal_object.pkl.gz`, `step_N.pkl.gz`,
`package_versions.txt`), each with its own seed written into its `exp_args.pkl` so that every
episode is a task of its own; with `--screenshots` each step also gets a `screenshot_step_N.png`
(a render sample's screenshot made unique), as AgentLab writes by default and the excerpt leaves
out. Then WebArena render files (benchmarks/ingest_render_run.py's generator, 5-15 steps each)
until they hold as many agent steps. Each folder is imported in a fresh process on a fresh
SQLite database (`import_paths`, the service behind the command line, upload page and API, with
INGEST_WORKERS parsing processes), one after the other in the same run of the script, and the
time per stored step compared.

    .venv/bin/python benchmarks/ingest_agentlab.py [--episodes 1000] [--screenshots] [--settle 61]
"""

import argparse
import base64
import json
import os
import platform
import shutil
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from ingest_render_run import (  # noqa: E402 - the render benchmark's generator, beside this script
    _IMAGE,
    ROOT,
    SAMPLES,
    SHARED_DATA,
    _cpu_seconds,
    _peak_mb,
    _settle,
    _unique_png,
    generate_run,
    generate_tasks,
)

STUDY = SHARED_DATA / "agent-outputs" / "browsergym-agentlab"
_SEED = b"task_seed\x94K"


def _with_seed(exp_args: bytes, seed: int) -> bytes:
    """The sample's `exp_args.pkl` with another `env_args.task_seed` (BININT2), its frame resized."""
    at = exp_args.index(_SEED) + len(_SEED) - 1
    patched = exp_args[:at] + b"M" + struct.pack("<H", seed) + exp_args[at + 2:]
    assert patched[2:3] == b"\x95", "expected one protocol-4 frame"
    return patched[:3] + struct.pack("<Q", len(patched) - 11) + patched[11:]


def generate_episodes(folder: Path, count: int, screenshots: bool) -> tuple[int, int]:
    """`count` episode folders; returns (agent steps, bytes)."""
    episodes = sorted(path for path in STUDY.iterdir() if path.is_dir())
    pngs = [base64.b64decode(match.group(2)) for sample in sorted(SAMPLES.glob("*.html"))
            for match in _IMAGE.finditer(sample.read_text(encoding="utf-8"))]
    steps = size = 0
    for number in range(count):
        source = episodes[number % len(episodes)]
        name = source.name.rsplit("_", 1)[0]
        target = folder / f"{name}_{number}"
        target.mkdir(parents=True)
        for path in source.iterdir():
            data = path.read_bytes()
            if path.name == "exp_args.pkl":
                data = _with_seed(data, number)
            (target / path.name).write_bytes(data)
        agent_steps = json.loads((source / "summary_info.json").read_text())["n_steps"]
        if screenshots:
            for step in range(agent_steps + 1):
                png = _unique_png(pngs[(number + step) % len(pngs)], f"{target.name} step {step}")
                (target / f"screenshot_step_{step}.png").write_bytes(png)
        steps += agent_steps
        size += sum(path.stat().st_size for path in target.iterdir())
    return steps, size


def child(folder: Path, tasks: Path | None) -> None:
    """One import in a fresh process, on the database of DATABASE_URL (printed as JSON)."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.base")
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.conf import settings
    from django.core.management import call_command

    from trajectories.models import Step
    from trajectories.services.ingest import import_paths
    from trajectories.services.runs import get_or_create_run
    from trajectories.services.tasks import import_task_file

    call_command("migrate", verbosity=0)
    if tasks is not None:
        import_task_file(tasks)
    run = get_or_create_run("benchmark-run")
    started, cpu = time.perf_counter(), _cpu_seconds()
    report = import_paths([folder], run)
    seconds = time.perf_counter() - started
    cpu = tuple(after - before for after, before in zip(_cpu_seconds(), cpu))
    started = time.perf_counter()
    again = import_paths([folder], run)
    print(json.dumps({
        "workers": settings.INGEST_WORKERS,
        "counts": report.counts(),
        "steps": Step.objects.filter(trajectory__run=run).count(),
        "seconds": seconds,
        "cpu_seconds": cpu[0] + cpu[1],
        "worker_cpu_seconds": cpu[2] + cpu[3],
        "reimport_seconds": time.perf_counter() - started,
        "reimport_counts": again.counts(),
        "peak_rss_mb": _peak_mb(),
    }))


def _measure(scratch: Path, folder: Path, tasks: Path | None) -> dict:
    database = scratch / "bench.sqlite3"
    environment = {**os.environ, "DATABASE_URL": f"sqlite:///{database}", "MEDIA_ROOT": str(scratch / "media"),
                   "INGEST_MAX_FILES": "100000", "INGEST_MAX_UNCOMPRESSED_BYTES": str(1 << 40)}
    command = [sys.executable, __file__, "--child", str(folder), str(tasks or "")]
    try:
        output = subprocess.run(command, env=environment, check=True, capture_output=True, text=True,
                                cwd=ROOT).stdout
    finally:
        database.unlink(missing_ok=True)
        shutil.rmtree(scratch / "media", ignore_errors=True)
    return json.loads(output.strip().splitlines()[-1])


def _line(label: str, result: dict) -> str:
    return (f"{label:28} {result['steps']:5} steps in {result['seconds']:.1f} s = "
            f"{result['seconds'] / result['steps'] * 1000:.2f} ms/step (CPU: importing process "
            f"{result['cpu_seconds']:.1f} s, parsing workers {result['worker_cpu_seconds']:.1f} s; "
            f"{result['workers']} workers); peak RSS {result['peak_rss_mb']:.0f} MB; re-import "
            f"{result['reimport_seconds']:.1f} s {result['reimport_counts']}; counts {result['counts']}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--episodes", type=int, default=1000)
    parser.add_argument("--screenshots", action="store_true",
                        help="a screenshot_step_N.png per step, as AgentLab saves")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--settle", type=int, default=61,
                        help="Seconds to wait after generating and after each measurement (see ingest_render_run.py)")
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(Path(args.child[0]), Path(args.child[1]) if args.child[1] else None)
        return
    with tempfile.TemporaryDirectory(prefix="trajscope-agentlab-") as scratch:
        scratch = Path(scratch)
        steps, size = generate_episodes(scratch / "agentlab", args.episodes, args.screenshots)
        renders, render_steps = 0, 0
        tasks = generate_tasks(scratch / "tasks.json", max(1, steps // 5))
        # Render files of 5-15 steps, generated one at a time until they hold as many agent steps.
        while render_steps < steps:
            generate_run(scratch / "renders", [tasks[renders]], args.seed + renders)
            text = (scratch / "renders" / f"render_{tasks[renders]['task_id']}.html").read_text(encoding="utf-8")
            render_steps += text.count("<div class='parsed_action'") - ("stop [Early stop" in text)
            renders += 1
        (scratch / "tasks.json").write_text(json.dumps(tasks[:renders]), encoding="utf-8")
        render_size = sum(path.stat().st_size for path in (scratch / "renders").iterdir())
        print(f"generated {args.episodes} AgentLab episodes ({steps} agent steps, {size / 1e6:.0f} MB"
              f"{', with screenshots' if args.screenshots else ''}) and {renders} render files "
              f"({render_steps} agent steps, {render_size / 1e6:.0f} MB)")
        _settle(args.settle)
        print(f"{os.cpu_count()} CPUs, Python {platform.python_version()}, load average before: "
              f"{' '.join(f'{load:.1f}' for load in os.getloadavg())}")
        agentlab = _measure(scratch, scratch / "agentlab", None)
        print(_line("AgentLab episode folders", agentlab))
        _settle(args.settle)
        render = _measure(scratch, scratch / "renders", scratch / "tasks.json")
        print(_line("WebArena render files", render))
        per_step = (agentlab["seconds"] / agentlab["steps"]) / (render["seconds"] / render["steps"])
        print(f"AgentLab / render, time per step: {per_step:.2f}; whole imports {agentlab['seconds']:.1f} s / "
              f"{render['seconds']:.1f} s; load average after: {' '.join(f'{load:.1f}' for load in os.getloadavg())}")


if __name__ == "__main__":
    main()
