"""An upload imported by 1 and then 2 Celery worker processes: its chunks spread over the workers.

Generates `--files` WebArena render files (as `ingest_render_run.py` does: the real samples' steps,
renumbered task ids, every screenshot unique) and their task configs, zipped into one upload. Then,
for each number of workers, in one run: a fresh PostgreSQL database (migrated, the tasks imported, an
admin's API token), a fresh media folder, gunicorn (1 sync worker, DEBUG off) and that many workers
(`celery worker --concurrency 1`, the default prefork pool as deployed: a daemonic process that cannot
fork a parsing pool; as on as many hosts) on a queue of their own on Redis; the zip
is POSTed to `/api/runs/import/` with `background=true` (curl streams it), and the job is polled through
`/api/import-jobs/<id>/` until it ends. Reported per number of workers: the upload's time (POST to
202), the job's (202 to done), both together, the files imported, how many chunks each worker
imported and how long its tasks ran (from its log), how long every worker ran a task at once, each
worker's CPU time and time runnable but waiting for a CPU (schedstat, its pool included), what the
database's backends were doing (pg_stat_activity, sampled ten times a second), and the load average
before and after.

    .venv/bin/python benchmarks/import_workers.py [--files 8120] [--workers 1 2] [--chunk-files 500]
        [--postgres-url postgres://postgres@127.0.0.1:5432/postgres] [--database trajscope_bench_import_workers]
        [--broker redis://127.0.0.1:6379/0]
"""

import argparse
import collections
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import uuid
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from ingest_render_run import ROOT, _postgres_database, generate_run, generate_tasks  # noqa: E402
from web_load import HOST, _serve  # noqa: E402

PYTHON = str(ROOT / ".venv" / "bin" / "python")


def _manage(env: dict, *args: str) -> str:
    return subprocess.run([PYTHON, "manage.py", *args], cwd=ROOT, env=env, check=True, capture_output=True,
                          text=True).stdout


def _token(env: dict) -> str:
    code = ("from django.contrib.auth import get_user_model; "
            "from accounts.services import create_api_token; "
            "user = get_user_model().objects.create_superuser('bench-admin', 'bench@example.org', 'unused-password-9'); "
            "print(create_api_token(user, name='import workers benchmark', expires_in_days=1)[1])")
    return _manage(env, "shell", "-c", code).strip().splitlines()[-1]


def _api(port: int, token: str, path: str) -> dict:
    output = subprocess.run(["curl", "-sS", "-H", f"Authorization: Token {token}", f"http://{HOST}:{port}{path}"],
                            check=True, capture_output=True, text=True).stdout
    return json.loads(output)


_LOGGED = re.compile(r"^\[(\S+ \S+): \w+/\S+\] Task trajectories\.tasks\.(\w+)\[([0-9a-f-]+)\] "
                     r"(received|succeeded in ([0-9.]+)s)", re.MULTILINE)


def _spans(log: Path) -> list[tuple[str, float, float]]:
    """(task, start, end) of each task a worker ran, in seconds since the epoch, from its INFO log."""
    from datetime import datetime

    spans = []
    for stamp, task, _id, event, seconds in _LOGGED.findall(log.read_text()):
        if event != "received":
            end = datetime.strptime(stamp, "%Y-%m-%d %H:%M:%S,%f").timestamp()
            spans.append((task, end - float(seconds), end))
    return spans


def _both_busy(spans: list[list[tuple[str, float, float]]]) -> float:
    """Seconds during which every worker ran a task at once."""
    edges = sorted((time_, delta) for worker in spans for _task, start, end in worker
                   for time_, delta in ((start, 1), (end, -1)))
    busy, total, since = 0, 0.0, 0.0
    for time_, delta in edges:
        if busy == len(spans):
            total += time_ - since
        busy += delta
        since = time_
    return total


def _cpu_seconds(pid: int) -> tuple[float, float]:
    """Seconds on a CPU and seconds runnable but waiting for one (the kernel's schedstat, every thread) of a
    process and its live descendants (a prefork worker and its pool)."""
    try:
        threads = list(Path(f"/proc/{pid}/task").iterdir())
        ran, waited = (sum(values) / 1e9 for values in zip(*(
            map(int, (thread / "schedstat").read_text().split()[:2]) for thread in threads)))
        children = [int(child) for thread in threads for child in (thread / "children").read_text().split()]
    except (OSError, ValueError):
        return 0.0, 0.0
    for child in children:
        child_ran, child_waited = _cpu_seconds(child)
        ran, waited = ran + child_ran, waited + child_waited
    return ran, waited


class _DatabaseWaits(threading.Thread):
    """Samples the database's active backends ten times a second: what each waits for (a lock, I/O, the
    client...) or on a CPU ("running")."""

    def __init__(self, url: str):
        super().__init__(daemon=True)
        self.url, self.stop, self.samples = url, threading.Event(), collections.Counter()

    def run(self) -> None:
        import psycopg

        with psycopg.connect(self.url, autocommit=True) as connection:
            while not self.stop.wait(0.1):
                for kind, event in connection.execute(
                        "SELECT wait_event_type, wait_event FROM pg_stat_activity WHERE datname = current_database() "
                        "AND state = 'active' AND pid <> pg_backend_pid()"):
                    self.samples["running" if kind is None else f"{kind}:{event}"] += 1

    def seconds(self) -> str:
        self.stop.set()
        self.join()
        return ", ".join(f"{name} {count / 10:.1f} s" for name, count in self.samples.most_common(4)) or "none"


def measure(workers: int, upload: Path, tasks: Path, args, scratch: Path) -> dict:
    media = scratch / f"media-{workers}"
    queue = f"bench-import-{uuid.uuid4().hex[:8]}"
    env = {**os.environ, "DATABASE_URL": _postgres_database(args.postgres_url, args.database, True),
           "DJANGO_SETTINGS_MODULE": "config.settings.base", "DEBUG": "false", "LOG_LEVEL": "WARNING",
           "MEDIA_ROOT": str(media), "STATIC_ROOT": str(scratch / "static"), "CELERY_BROKER_URL": args.broker,
           "CELERY_TASK_DEFAULT_QUEUE": queue, "IMPORT_CHUNK_FILES": str(args.chunk_files),
           "INGEST_MAX_FILES": str(args.files + 10), "INGEST_MAX_UPLOAD_BYTES": str(64 * 1024**3),
           "INGEST_MAX_UNCOMPRESSED_BYTES": str(64 * 1024**3), "API_THROTTLE_USER": "1000000/minute",
           "GUNICORN_CMD_ARGS": "--timeout 3600"}
    _manage(env, "migrate", "--noinput")
    _manage(env, "import_tasks", str(tasks))
    token = _token(env)
    server, port = _serve(1, env)
    logs = [scratch / f"worker-{workers}-{k}.log" for k in range(workers)]
    processes = [subprocess.Popen(
        [PYTHON, "-m", "celery", "-A", "config", "worker", "--concurrency", "1", "-Q", queue, "-n", f"bench{k}@%h",
         "--without-heartbeat", "--without-gossip", "--without-mingle", "-l", "INFO"],
        cwd=ROOT, env=env, stdout=log.open("w"), stderr=subprocess.STDOUT) for k, log in enumerate(logs)]
    try:
        deadline = time.monotonic() + 120
        while not all("ready." in log.read_text() for log in logs):
            if time.monotonic() > deadline:
                raise SystemExit("the workers were not ready within 120 s")
            time.sleep(0.5)
        load_before = os.getloadavg()
        cpu_before = [_cpu_seconds(process.pid) for process in processes]
        waits = _DatabaseWaits(env["DATABASE_URL"])
        waits.start()
        started = time.perf_counter()
        answer = json.loads(subprocess.run(
            ["curl", "-sS", "-H", f"Authorization: Token {token}", "-F", f"run=bench-{workers}-workers",
             "-F", "background=true", "-F", f"files=@{upload}", f"http://{HOST}:{port}/api/runs/import/"],
            check=True, capture_output=True, text=True).stdout)
        accepted = time.perf_counter()
        if "id" not in answer:
            raise SystemExit(f"the upload was not accepted: {answer}")
        while (job := _api(port, token, f"/api/import-jobs/{answer['id']}/"))["status"] in ("pending", "running"):
            time.sleep(0.5)
        done = time.perf_counter()
        load_after = os.getloadavg()
        cpu = [tuple(now - then for now, then in zip(_cpu_seconds(process.pid), before))
               for process, before in zip(processes, cpu_before)]
        database = waits.seconds()
    finally:
        for process in [*processes, server]:
            process.terminate()
            try:
                process.wait(timeout=60)
            except subprocess.TimeoutExpired:  # a worker's warm shutdown that hangs must not lose the numbers
                process.kill()
                process.wait(timeout=60)
        shutil.rmtree(media, ignore_errors=True)
    spans = [_spans(log) for log in logs]
    return {"workers": workers, "status": job["status"], "error": job["error"],
            "counts": (job["report"] or {}).get("counts"), "upload_s": accepted - started,
            "job_s": done - accepted, "total_s": done - started,
            "chunks_per_worker": [sum(task == "run_import_chunk_task" for task, _s, _e in worker) for worker in spans],
            "busy_s": [sum(end - start for _task, start, end in worker) for worker in spans],
            "both_busy_s": _both_busy(spans), "cpu_s": cpu, "database": database,
            "load_before": load_before, "load_after": load_after}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--files", type=int, default=8120)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--chunk-files", type=int, default=500, help="IMPORT_CHUNK_FILES of the workers.")
    parser.add_argument("--postgres-url", default="postgres://postgres@127.0.0.1:5432/postgres")
    parser.add_argument("--database", default="trajscope_bench_import_workers")
    parser.add_argument("--broker", default="redis://127.0.0.1:6379/0")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="import-workers-") as folder:
        scratch = Path(folder)
        tasks = scratch / "tasks.json"
        (scratch / "static").mkdir()
        started = time.perf_counter()
        size = generate_run(scratch / "run", generate_tasks(tasks, args.files), args.seed)
        upload = scratch / "run.zip"
        with zipfile.ZipFile(upload, "w", zipfile.ZIP_STORED) as archive:
            for path in sorted((scratch / "run").iterdir()):
                archive.write(path, f"run/{path.name}")
        shutil.rmtree(scratch / "run")
        print(f"generated {args.files} render files, {size / 1024**2:,.0f} MB, zipped in "
              f"{time.perf_counter() - started:.0f} s; {os.cpu_count()} CPUs", flush=True)
        results = []
        for workers in args.workers:
            results.append(measure(workers, upload, tasks, args, scratch))
            print(json.dumps(results[-1]), flush=True)
        _postgres_database(args.postgres_url, args.database, False)

    print("| workers | upload (POST to 202) | job (202 to done) | total | imported | chunks per worker "
          "| tasks' time per worker | all workers busy at once | workers' CPU (waiting for a CPU) "
          "| database backends (sampled) | load average before / after |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for result in results:
        counts = result["counts"] or {}
        print(f"| {result['workers']} | {result['upload_s']:.1f} s | {result['job_s']:.1f} s | "
              f"{result['total_s']:.1f} s | {counts.get('imported', 0)} of {args.files} ({result['status']}) | "
              f"{' + '.join(map(str, result['chunks_per_worker']))} | "
              f"{' + '.join(f'{busy:.1f} s' for busy in result['busy_s'])} | {result['both_busy_s']:.1f} s | "
              f"{' + '.join(f'{ran:.1f} s ({waited:.1f} s)' for ran, waited in result['cpu_s'])} | "
              f"{result['database']} | "
              f"{result['load_before'][0]:.1f} / {result['load_after'][0]:.1f} |")
    first = results[0]
    for result in results[1:]:
        print(f"{result['workers']} workers / {first['workers']}: job {result['job_s'] / first['job_s']:.2f}x, "
              f"total {result['total_s'] / first['total_s']:.2f}x")
    for result in results:
        if result["status"] != "done":
            print(f"{result['workers']} workers: the job ended {result['status']}: {result['error']}")


if __name__ == "__main__":
    main()
