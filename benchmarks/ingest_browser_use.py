"""Import of browser-use histories against the import of WebArena render files of the same number
of steps, in one run of this script.

Generates, in a temporary folder, N browser-use runs shaped like the real samples in
shared/data/agent-outputs/browser-use, half in each layout: the current one as WebArena-Infinity
writes it (`task_<n>/history.json` of 3 steps, its `result.json` and two `screenshots/step_N.png`
named by absolute paths of another machine) and the early one (`<n>/AgentHistoryList.json` of 4
steps, the page's base64 screenshot and indexed elements in every state). Every screenshot is made
unique (a PNG text chunk), so that deduplication does not flatter the numbers. Beside them, N
render_<id>.html files from ingest_render_run.py's generator with the same number of steps each
(so the same total), and N WebArena task configs for them; the histories' tasks are created by
their import, as a new user's would be.

A fresh child process migrates an empty SQLite database, imports the tasks, then times
`import_paths` (the service behind the command, the upload page and the API) on the render folder
and on the browser-use folder, each into a run of its own, then both again into two new runs
(screenshot files then already stored, for both alike). The ratio is browser-use / render.

    .venv/bin/python benchmarks/ingest_browser_use.py [--runs 1000] [--seed 0] [--workers N]
"""

import argparse
import base64
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ingest_render_run import SHARED_DATA, _settle, _unique_png, generate_run, generate_tasks

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = SHARED_DATA / "agent-outputs" / "browser-use"
CURRENT = SAMPLES / "webarena-infinity-gmail" / "task_e1"
EARLY = SAMPLES / "legacy-2024-11" / "AgentHistoryList.json"


def _current_run(folder: Path, number: int, history: dict, result: dict, pngs: dict[str, bytes]) -> int:
    task_id = f"task_g{number}"
    (folder / task_id / "screenshots").mkdir(parents=True)
    machine = f"/var/folders/xy/T/browser_use_agent_{number}"
    for item in history["history"]:
        path = item["state"]["screenshot_path"]
        if path:
            name = path.rsplit("/", 1)[1]
            item["state"]["screenshot_path"] = f"{machine}/screenshots/{name}"
            (folder / task_id / "screenshots" / name).write_bytes(_unique_png(pngs[name], f"{task_id} {name}"))
    (folder / task_id / "history.json").write_text(json.dumps(history), encoding="utf-8")
    (folder / task_id / "result.json").write_text(json.dumps({**result, "task_id": task_id}), encoding="utf-8")
    return len(history["history"])


def _early_run(folder: Path, number: int, history: dict, pngs: list[bytes]) -> int:
    (folder / f"early_{number}").mkdir(parents=True)
    for step, (item, png) in enumerate(zip(history["history"], pngs), start=1):
        item["state"]["screenshot"] = base64.b64encode(_unique_png(png, f"early_{number} step {step}")).decode()
    (folder / f"early_{number}" / "AgentHistoryList.json").write_text(json.dumps(history), encoding="utf-8")
    return len(history["history"])


def generate_histories(folder: Path, count: int) -> tuple[list[int], int]:
    """`count` browser-use runs, alternating layouts; returns their step counts and total size."""
    current, early = (CURRENT / "history.json").read_text(encoding="utf-8"), EARLY.read_text(encoding="utf-8")
    result = json.loads((CURRENT / "result.json").read_text(encoding="utf-8"))
    pngs = {path.name: path.read_bytes() for path in (CURRENT / "screenshots").glob("*.png")}
    early_pngs = [base64.b64decode(item["state"]["screenshot"]) for item in json.loads(early)["history"]]
    steps = []
    for number in range(count):
        if number % 2:
            steps.append(_early_run(folder, number, json.loads(early), early_pngs))
        else:
            steps.append(_current_run(folder, number, json.loads(current), result, pngs))
    size = sum(path.stat().st_size for path in folder.rglob("*") if path.is_file())
    return steps, size


def child(scratch: Path) -> None:
    """The measurements, in a fresh process on the SQLite database of DATABASE_URL (printed as JSON)."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.base")
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.conf import settings
    from django.core.management import call_command

    from trajectories.services.ingest import import_paths
    from trajectories.services.runs import get_or_create_run
    from trajectories.services.tasks import import_task_file

    call_command("migrate", verbosity=0)
    import_task_file(scratch / "tasks.json")
    measured = []
    for round_number in (1, 2):
        for kind in ("render", "browser-use"):
            run = get_or_create_run(f"{kind}-{round_number}", agent="generated", model="samples")
            started = time.perf_counter()
            report = import_paths([scratch / kind], run)
            measured.append({"round": round_number, "kind": kind, "seconds": time.perf_counter() - started,
                             "counts": report.counts(), "steps": sum(t.step_count for t in run.trajectories.all())})
    print(json.dumps({"workers": settings.INGEST_WORKERS, "measured": measured}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=1000, help="browser-use runs, and render files")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=os.cpu_count(), help="Parsing processes")
    parser.add_argument("--settle", type=int, default=61, help="Seconds to wait after generating the files")
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child)
        return
    with tempfile.TemporaryDirectory(prefix="trajscope-browser-use-") as scratch:
        scratch = Path(scratch)
        started = time.perf_counter()
        steps, size = generate_histories(scratch / "browser-use", args.runs)
        tasks = generate_tasks(scratch / "tasks.json", args.runs)
        render_size = generate_run(scratch / "render", tasks, args.seed, steps)
        print(f"generated {args.runs} browser-use runs ({sum(steps)} steps, {size / 1e6:.0f} MB) and {args.runs} "
              f"render files (the same steps, {render_size / 1e6:.0f} MB) in {time.perf_counter() - started:.1f} s")
        _settle(args.settle)
        print(f"{os.cpu_count()} CPUs, Python {platform.python_version()}, load average before: "
              f"{' '.join(f'{load:.1f}' for load in os.getloadavg())}")
        environment = {**os.environ, "DATABASE_URL": f"sqlite:///{scratch / 'bench.sqlite3'}",
                       "MEDIA_ROOT": str(scratch / "media"), "INGEST_WORKERS": str(args.workers),
                       "INGEST_MAX_FILES": "100000", "INGEST_MAX_UNCOMPRESSED_BYTES": str(1 << 40)}
        output = subprocess.run([sys.executable, __file__, "--child", str(scratch)], env=environment, check=True,
                                capture_output=True, text=True, cwd=ROOT).stdout
        result = json.loads(output.strip().splitlines()[-1])
        measured = {(item["round"], item["kind"]): item for item in result["measured"]}
        for item in result["measured"]:
            print(f"round {item['round']} {item['kind']:12} {item['steps']} steps in {item['seconds']:.1f} s = "
                  f"{item['steps'] / item['seconds']:.0f} steps/s; {item['counts']}")
        for round_number in (1, 2):
            history, render = measured[(round_number, "browser-use")], measured[(round_number, "render")]
            # A render file's harness-forced stop is a step of the file but not an agent step: per stored step too.
            per_step = (history["seconds"] / history["steps"]) / (render["seconds"] / render["steps"])
            print(f"round {round_number}: browser-use / render = {history['seconds'] / render['seconds']:.2f} in time, "
                  f"{per_step:.2f} per stored step ({result['workers']} parsing processes)")
        print(f"load average after: {' '.join(f'{load:.1f}' for load in os.getloadavg())}")


if __name__ == "__main__":
    main()
