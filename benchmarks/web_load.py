"""Web load: the leaderboard, a 30-step trajectory and run comparisons served by gunicorn on
PostgreSQL, under a load generator on loopback.

Data (a fresh PostgreSQL database of its own, `--database`): the 812 tasks of test.raw.json with an
approved reference gold each, and `--runs` runs x 812 trajectories written with COPY
(`benchmarks/scale_data.py`): per run a harness verdict, outcome and step count per trajectory, a
named LLM judge's verdict per task, one finished evaluation scoring every trajectory (metric values
and step-matching details from the pure metric functions on random judge matrices, 40 sets of them
cycled over the runs) and that evaluation's aggregates as `store_aggregates` computes them; agent
steps are stored for the first two runs. The runs' tallies are counted by `refresh_tallies`, as
every import does. Then one trajectory of the first run is replaced, through the import service, by
a 30-step trajectory built from the real render samples (accessibility trees, reasoning,
screenshots) and scored for real by the run's evaluation (offline judge), so its page shows real
steps, scores and judge decisions; then VACUUM ANALYZE.

Serving: gunicorn (`config.wsgi`, sync workers, DEBUG off) bound to 127.0.0.1 only.

Load: a bounded client in this process; each scenario first warms every worker, then sends a
fixed number of requests from C concurrent keep-alive connections and reports latency
percentiles (wall time from sending the request to reading the whole body). Comparisons are
measured twice: the same pair again and again (the comparison cache answers), and every request
a pair never asked before (cache empty: the paired statistics are computed).

    .venv/bin/python benchmarks/web_load.py --runs 50     # generate, serve, measure: about 2 min
    .venv/bin/python benchmarks/web_load.py --runs 500    # about 2 min to generate, 4-8 min in all
    .venv/bin/python benchmarks/web_load.py [--runs 50] [--requests 50] [--concurrency 1 2] [--workers 2]
        [--cold-pairs 24] [--reuse] [--database trajscope_bench_web] [--scenarios trajectory ...]
        [--postgres-url postgres://postgres@127.0.0.1:5432/postgres]
"""

import argparse
import http.client
import json
import os
import platform
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from urllib.parse import urlencode

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from benchmarks.scale_data import SHARED_DATA, add_scored_runs, base_fixtures, recreate_database, scored_shapes  # noqa: E402

HOST = "127.0.0.1"
SHAPES = 40  # distinct sets of scores, cycled over the runs (benchmarks/scale_data.py)
RUNS_PER_COPY = 50
STEPPED_RUNS = 2  # runs whose agent steps are stored too (the others hold step counts only)
LONG_TRAJECTORY_STEPS = 30
# p95 goals: issue 24's for the leaderboard (at 500 runs) and the trajectory page, issue 7's for comparisons.
TARGETS_MS = {"leaderboard page": 50, "leaderboard API": 50, "30-step trajectory page": 30,
              "comparison page": 500, "comparison API": 500}
# Beyond 500 runs the leaderboard's goal is 100 ms (issue 24: < 50 ms at 500 runs, < 100 ms at 5,000).
LARGE_RUNS, LARGE_TARGETS_MS = 500, {"leaderboard page": 100, "leaderboard API": 100}


def _target(label: str, runs: int) -> int | None:
    request = label.split(",")[0]
    if runs > LARGE_RUNS and request in LARGE_TARGETS_MS:
        return LARGE_TARGETS_MS[request]
    return TARGETS_MS.get(request)


def _database_url(admin_url: str, name: str, recreate: bool) -> str:
    return recreate_database(admin_url, name) if recreate else admin_url.rsplit("/", 1)[0] + f"/{name}"


def _long_trajectory_file(folder: Path, task) -> Path:
    """A trajectory/v1 file of 30 steps cycled from the steps of the real render samples."""
    from trajectories.formats.webarena_render import parse_render

    samples = sorted((SHARED_DATA / "trajectory-samples").glob("*.html"))
    parsed = [parse_render(path.read_text(encoding="utf-8"), path.name) for path in samples]
    pool = [step for trajectory in parsed for step in trajectory.steps if not step.action.startswith("stop")]
    document = parsed[0].to_dict()
    document["task"] = {"benchmark": task.benchmark, "task_id": task.task_id, "intent": task.intent}
    document["steps"] = []
    for index in range(1, LONG_TRAJECTORY_STEPS + 1):
        step = dict(vars(pool[(index - 1) % len(pool)]))
        step["action_parts"] = None
        document["steps"].append({**step, "index": index})
    document["outcome"] = {"status": "early_stop", "reason": "max_steps", "success": False,
                           "message": "Early stop: Reach max steps 30"}
    document["final_answer"] = None
    path = folder / "long.jsonl"
    path.write_text(json.dumps(document) + "\n", encoding="utf-8")
    return path


def _prepare(runs: int, seed: int) -> float:
    """Generate the runs, then import and score the long trajectory; the seconds it took."""
    from django.core.management import call_command
    from django.db import connection

    from annotation.models import GoldTrajectory
    from judges.services import get_judge
    from metrics.models import EvaluationJob
    from metrics.services.aggregates import store_aggregates
    from metrics.services.evaluation import evaluate_units
    from trajectories.models import AgentRun, Task
    from trajectories.services.ingest import import_paths
    from trajectories.services.tallies import refresh_tallies

    call_command("migrate", verbosity=0)
    started = time.perf_counter()
    rng = random.Random(seed)
    fixtures = base_fixtures()
    shapes = scored_shapes(rng, fixtures.tasks, min(runs, SHAPES))
    added = []
    for first in range(0, runs, RUNS_PER_COPY):  # a transaction of bounded size at a time
        added += add_scored_runs(first, min(first + RUNS_PER_COPY, runs), fixtures, shapes, rng,
                                 stepped=max(0, STEPPED_RUNS - first))
        print(f"  {len(added)}/{runs} runs stored", end="\r", flush=True)
    refresh_tallies(added)  # as every import counts them
    run = AgentRun.objects.order_by("name").first()
    task = Task.objects.order_by("number").first()
    with tempfile.TemporaryDirectory() as folder:
        report = import_paths([_long_trajectory_file(Path(folder), task)], run, replace=True)
    assert report.ok, report.to_dict()
    trajectory = run.trajectories.get(task=task)
    job = EvaluationJob.objects.filter(runs=run, status="done").select_related("judge_config").get()
    gold = GoldTrajectory.objects.get(task=task)
    evaluate_units(job, get_judge(job.judge_config), [(trajectory.pk, gold.pk)])
    score = job.scores.get(trajectory=trajectory, gold=gold)
    assert not score.error, score.error
    store_aggregates(job)
    with connection.cursor() as cursor:  # what autovacuum does to a table soon after a bulk load
        cursor.execute("VACUUM ANALYZE")
    seconds = time.perf_counter() - started
    print(f"generated {runs} runs x {len(fixtures.tasks)} scored trajectories and a {trajectory.step_count}-step "
          f"trajectory (scored with {score.decisions.count()} judge decisions) in {seconds:.0f} s")
    return seconds


def _credentials() -> dict:
    """A session cookie for the pages and a token for the API, of one reader account."""
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.test import Client

    from accounts.services import create_api_token
    from trajectories.models import AgentRun, Task, Trajectory

    user, _ = get_user_model().objects.get_or_create(username="bench-reader")
    client = Client()
    client.force_login(user)
    _, token = create_api_token(user, name="web load benchmark", expires_in_days=1)
    runs = list(AgentRun.objects.order_by("name").values_list("name", flat=True))
    long = Trajectory.objects.get(run__name=runs[0], task=Task.objects.order_by("number").first())
    assert long.step_count == LONG_TRAJECTORY_STEPS, long.step_count
    return {"cookie": f"{settings.SESSION_COOKIE_NAME}={client.cookies[settings.SESSION_COOKIE_NAME].value}",
            "token": token, "runs": runs, "long_trajectory": long.pk}


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind((HOST, 0))
        return probe.getsockname()[1]


def _serve(workers: int, env: dict, log=None) -> tuple[subprocess.Popen, int]:
    """gunicorn on a free port, once it answers /healthz; its output (Django's error log) to `log` if given."""
    port = _free_port()
    server = subprocess.Popen(
        [str(ROOT / ".venv" / "bin" / "gunicorn"), "config.wsgi:application", "--bind", f"{HOST}:{port}",
         "--workers", str(workers), "--worker-class", "sync", "--log-level", "warning"],
        cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT if log else None,
    )
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        try:
            connection = http.client.HTTPConnection(HOST, port, timeout=5)
            connection.request("GET", "/healthz")
            if connection.getresponse().status == 200:
                return server, port
        except OSError:
            time.sleep(0.3)
    server.terminate()
    raise SystemExit("gunicorn did not answer /healthz within 180 s")


class Load:
    """Fixed request counts from concurrent keep-alive connections; every answer must be a 200."""

    def __init__(self, port: int, headers: dict):
        self.port, self.headers = port, headers

    def _get(self, connection: http.client.HTTPConnection, path: str) -> float:
        start = time.perf_counter()
        connection.request("GET", path, headers=self.headers)
        response = connection.getresponse()
        body = response.read()
        elapsed = (time.perf_counter() - start) * 1000
        if response.status != 200:
            raise RuntimeError(f"GET {path} answered {response.status}: {body[:300]!r}")
        return elapsed

    def run(self, paths: list[str], concurrency: int) -> tuple[list[float], float]:
        """Each path of `paths` requested once, spread over `concurrency` connections."""
        queue, lock, times, errors = list(reversed(paths)), threading.Lock(), [], []

        def worker():
            connection = http.client.HTTPConnection(HOST, self.port, timeout=60)
            try:
                while True:
                    with lock:
                        if not queue or errors:
                            break
                        path = queue.pop()
                    elapsed = self._get(connection, path)
                    with lock:
                        times.append(elapsed)
            except Exception as exc:  # noqa: BLE001 - reported by the caller's thread
                errors.append(exc)
            finally:
                connection.close()

        threads = [threading.Thread(target=worker) for _ in range(concurrency)]
        started = time.perf_counter()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        if errors:
            raise SystemExit(f"load stopped: {errors[0]}")
        return times, time.perf_counter() - started


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[max(0, round(share * len(ordered)) - 1)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=50, help="Runs of 812 scored trajectories to generate.")
    parser.add_argument("--requests", type=int, default=50, help="Measured requests per scenario and concurrency.")
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--workers", type=int, default=2, help="gunicorn sync workers.")
    parser.add_argument("--cold-pairs", type=int, default=24, help="Distinct run pairs for the uncached comparisons.")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--reuse", action="store_true", help="Keep the database of a previous run.")
    parser.add_argument("--postgres-url", default="postgres://postgres@127.0.0.1:5432/postgres")
    parser.add_argument("--database", default="trajscope_bench_web", help="Name of the database to (re)create.")
    parser.add_argument("--scenarios", nargs="+", choices=["leaderboard", "trajectory", "comparison"],
                        default=["leaderboard", "trajectory", "comparison"], help="Which pages to measure.")
    args = parser.parse_args()

    media = tempfile.mkdtemp(prefix="trajscope-bench-web-")
    os.makedirs(f"{media}/static")
    env = {**os.environ, "DATABASE_URL": _database_url(args.postgres_url, args.database, recreate=not args.reuse),
           "DJANGO_SETTINGS_MODULE": "config.settings.base", "DEBUG": "false", "LOG_LEVEL": "WARNING",
           "MEDIA_ROOT": os.environ.get("MEDIA_ROOT", f"{media}/media"), "STATIC_ROOT": f"{media}/static",
           # one reader account measures serving speed, not the per-account API rate limit
           "API_THROTTLE_USER": os.environ.get("API_THROTTLE_USER", "1000000/minute")}
    os.environ.update(env)
    import django

    django.setup()
    from django.db import connections

    generated = None if args.reuse else _prepare(args.runs, args.seed)
    found = _credentials()
    connections.close_all()
    runs = found["runs"]
    rng = random.Random(args.seed)
    pairs = [(a, b) for a in runs for b in runs if a < b and (a, b) != (runs[0], runs[1])]
    rng.shuffle(pairs)
    compare = {"baseline": runs[0], "candidate": runs[1]}
    scenarios = {
        "leaderboard page": ("leaderboard", "/leaderboard/"),
        "leaderboard API": ("leaderboard", "/api/leaderboard/"),
        "30-step trajectory page": ("trajectory", f"/trajectories/{found['long_trajectory']}/"),
        "comparison page": ("comparison", "/compare/?" + urlencode(compare)),
        "comparison API": ("comparison", "/api/comparisons/?" + urlencode(compare)),
    }
    paths = {label: path for label, (scenario, path) in scenarios.items() if scenario in args.scenarios}
    comparing = "comparison" in args.scenarios
    headers = {"Cookie": found["cookie"], "Authorization": f"Token {found['token']}"}

    server, port = _serve(args.workers, env)
    load_before = os.getloadavg()
    results = []
    try:
        load = Load(port, headers)
        warm_pairs = pairs[: 4 * args.workers]
        cold = iter(pairs[4 * args.workers:])
        # Every worker imports its modules (scipy for comparisons) and fills its caches first.
        if comparing:
            load.run([f"/compare/?{urlencode({'baseline': a, 'candidate': b})}" for a, b in warm_pairs],
                     args.workers)
        for concurrency in args.concurrency:
            for label, path in paths.items():
                load.run([path] * 4 * args.workers, args.workers)
                times, seconds = load.run([path] * args.requests, concurrency)
                results.append((label, concurrency, times, seconds))
            cold_scenarios = (("comparison page, never asked pair", "/compare/?{}"),
                              ("comparison API, never asked pair", "/api/comparisons/?{}"))
            for label, template in cold_scenarios if comparing else ():
                chosen = [next(cold) for _ in range(args.cold_pairs)]
                cold_paths = [template.format(urlencode({"baseline": a, "candidate": b})) for a, b in chosen]
                times, seconds = load.run(cold_paths, concurrency)
                results.append((label, concurrency, times, seconds))
    finally:
        server.terminate()
        server.wait(timeout=30)

    print(f"\n{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}, "
          f"gunicorn {args.workers} sync workers, PostgreSQL, {len(runs)} runs x 812 scored trajectories"
          + (f" generated in {generated:.0f} s" if generated is not None else "")
          + f"; load average {load_before[0]:.1f} before, {os.getloadavg()[0]:.1f} after")
    print("| request | concurrency | requests | req/s | median ms | p95 ms | p99 ms | max ms | target p95 |")
    print("|---|---|---|---|---|---|---|---|---|")
    summary = []
    for label, concurrency, times, seconds in results:
        target = _target(label, len(runs))
        p95 = _percentile(times, 0.95)
        print(f"| {label} | {concurrency} | {len(times)} | {len(times) / seconds:.1f} | {statistics.median(times):.0f} "
              f"| {p95:.0f} | {_percentile(times, 0.99):.0f} | {max(times):.0f} | "
              f"{f'< {target} ms: ' + ('met' if p95 < target else 'MISSED') if target else '-'} |")
        summary.append({"request": label, "concurrency": concurrency, "requests": len(times),
                        "median_ms": round(statistics.median(times), 1), "p95_ms": round(p95, 1)})
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
