"""Leaderboard, comparison, plot and export pages at scale: 50 runs x 812 scored trajectories.

Fills a fresh PostgreSQL database of its own with the 812 tasks of test.raw.json, 50 runs of one
trajectory per task, one finished evaluation per run with a score per trajectory (metric values
and the step-matching details an evaluation stores, from the pure metric functions applied to
random judge score matrices; no judge runs) and the aggregates the evaluation service stores.
Agent steps are stored for two runs only, the two that the side-by-side view opens.

Then times the pages in-process through Django's test client (the view, its queries and the
template; no network), each request repeated: the leaderboard (sorted by success, and filtered to
one site) and its CSV export, a comparison of two runs with the comparison cache empty and then
warm, the side-by-side view of one task, the three plots (not cached, then cached) and the CSV
export of one run's scores. Besides wall time it reports, per request, the CPU time of this
process and the time spent waiting for SQL, which stay meaningful when the machine is busy.

    .venv/bin/python benchmarks/reports.py [--runs 50] [--repeats 30]
        [--postgres-url postgres://postgres@127.0.0.1:5432/postgres] [--database trajscope_bench_reports]
"""

import argparse
import gc
import os
import random
import statistics
import sys
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from benchmarks.scale_data import SHARED_DATA, recreate_database, scored  # noqa: E402

DATABASE = "trajscope_bench_reports"


def _generate(runs: int, rng: random.Random):
    from django.contrib.auth import get_user_model
    from django.utils import timezone

    from annotation.models import GoldStep, GoldTrajectory
    from judges.models import JudgeConfig
    from metrics.models import EvaluationJob, TrajectoryScore
    from metrics.services.aggregates import store_aggregates
    from trajectories.models import AgentRun, Step, Task, Trajectory
    from trajectories.services.tasks import import_task_file

    import_task_file(SHARED_DATA / "webarena" / "test.raw.json")
    tasks = list(Task.objects.order_by("number"))
    annotator, _ = get_user_model().objects.get_or_create(username="bench-annotator")
    golds = GoldTrajectory.objects.bulk_create(
        [GoldTrajectory(task=task, annotator=annotator, status="approved", source="bench") for task in tasks])
    GoldStep.objects.bulk_create([GoldStep(gold=gold, index=i, text=f"Click on the 'Item {i}' link")
                                  for gold in golds for i in range(1, 13)], batch_size=2000)
    gold_of = {gold.task_id: gold for gold in golds}
    judge, _ = JudgeConfig.objects.get_or_create(name="offline", defaults={"backend": "offline"})
    paradigms = ["step_by_step", "tree_search", "full_plan", "other"]
    for number in range(runs):
        run = AgentRun.objects.create(name=f"agent-{number:02d}", agent=f"agent {number % 7}",
                                      model=f"model-{number % 5}", paradigm=paradigms[number % 4])
        skill = rng.uniform(0.2, 0.9)
        trajectories = Trajectory.objects.bulk_create([
            Trajectory(run=run, task=task, outcome_status="answered", content_hash=uuid.uuid4().hex,
                       final_answer="an answer") for task in tasks], batch_size=1000)
        now = timezone.now()
        job = EvaluationJob.objects.create(judge_config=judge, status="done", total=len(tasks), done=len(tasks),
                                           started_at=now, finished_at=now)
        job.runs.add(run)
        scores, steps = [], []
        for trajectory in trajectories:
            values, details, n, m = scored(rng, skill)
            values["gold_steps"] = min(m, 12)
            scores.append(TrajectoryScore(job=job, trajectory=trajectory, gold=gold_of[trajectory.task_id],
                                          details=details, **values))
            if number < 2:
                steps += [Step(trajectory=trajectory, index=i, action=f"click [{i}]", action_type="click")
                          for i in range(1, n + 1)]
        TrajectoryScore.objects.bulk_create(scores, batch_size=1000)
        Step.objects.bulk_create(steps, batch_size=2000)
        store_aggregates(job)
        print(f"  run {number + 1}/{runs} stored", end="\r", flush=True)
    print()


class _Timings:
    """Wall time of each request, with the CPU time of this process and the time spent in SQL calls.

    On a busy machine wall times grow with the load; CPU and SQL times show what a request costs.
    """

    def __init__(self):
        self.wall, self.cpu, self.sql = [], [], []
        self._sql = 0.0

    def __call__(self, execute, sql, params, many, context):
        start = time.perf_counter()
        try:
            return execute(sql, params, many, context)
        finally:
            self._sql += time.perf_counter() - start

    def request(self, client, url: str) -> None:
        from django.db import connection

        self._sql = 0.0
        wall, cpu = time.perf_counter(), time.process_time()
        with connection.execute_wrapper(self):
            response = client.get(url)
        self.wall.append((time.perf_counter() - wall) * 1000)
        self.cpu.append((time.process_time() - cpu) * 1000)
        self.sql.append(self._sql * 1000)
        assert response.status_code == 200, (url, response.status_code, response.content[:300])


def _time(client, url: str, repeats: int, before=None) -> _Timings:
    client.get(url)  # templates compiled, connections open
    timings = _Timings()
    for _ in range(repeats):
        if before:
            before()
        timings.request(client, url)
    return timings


def _report(label: str, timings: _Timings) -> None:
    ordered = sorted(timings.wall)
    p95 = ordered[max(0, round(0.95 * len(ordered)) - 1)]
    print(f"| {label} | {len(ordered)} | {statistics.median(ordered):.0f} | {p95:.0f} | {max(ordered):.0f} | "
          f"{statistics.median(timings.cpu):.0f} | {statistics.median(timings.sql):.0f} |")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--postgres-url", default="postgres://postgres@127.0.0.1:5432/postgres")
    parser.add_argument("--database", default=DATABASE, help="Name of the database to (re)create")
    args = parser.parse_args()

    os.environ.update(DATABASE_URL=recreate_database(args.postgres_url, args.database),
                      DJANGO_SETTINGS_MODULE="config.settings.base",
                      LOG_LEVEL="WARNING", DEBUG="false")
    import django

    django.setup()
    from django.core.cache import cache
    from django.core.management import call_command
    from django.db import connection
    from django.test import Client
    from django.urls import reverse

    from tests.factories import UserFactory
    from trajectories.models import AgentRun, Task

    call_command("migrate", verbosity=0)
    started = time.perf_counter()
    _generate(args.runs, random.Random(args.seed))
    print(f"generated {args.runs} runs x 812 scored trajectories in {time.perf_counter() - started:.0f} s")
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")  # what autovacuum does after bulk inserts: the planner sees the rows
    # The generator's leftovers would make every later garbage collection slower than a server's.
    gc.collect()
    gc.freeze()
    print("load average before timing: {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))

    client = Client()
    client.force_login(UserFactory(username="bench-viewer"))
    first, second = AgentRun.objects.order_by("name")[:2]
    task = Task.objects.order_by("number").first()
    leaderboard = reverse("metrics:leaderboard")
    compare = reverse("metrics:compare") + f"?baseline={first.name}&candidate={second.name}"
    repeats = args.repeats
    print("| page | requests | median ms | p95 ms | max ms | median CPU ms | median SQL ms |")
    print("|---|---|---|---|---|---|---|")
    _report("leaderboard, sorted by success", _time(client, leaderboard, repeats))
    _report("leaderboard, one site", _time(client, leaderboard + "?site=shopping_admin&sort=-step_success", repeats))
    _report("leaderboard, success from the harness", _time(client, leaderboard + "?success_source=harness", repeats))
    _report("leaderboard CSV export", _time(client, reverse("metrics:export", args=["leaderboard", "csv"]), repeats))
    _report("comparison of two runs, cache empty", _time(client, compare, max(5, repeats // 3), before=cache.clear))
    _report("comparison of two runs, cached", _time(client, compare, repeats))
    _report("side by side of one task",
            _time(client, reverse("metrics:compare-task", args=[first.pk, second.pk, task.pk]), repeats))
    for name in ("distribution", "sites", "success-recovery"):
        url = reverse("metrics:plot", args=[name, "svg"])
        _report(f"plot {name} (SVG), not cached", _time(client, url, 5, before=cache.clear))
        _report(f"plot {name} (SVG), cached", _time(client, url, repeats))
    _report("scores CSV export of one run (812 rows)",
            _time(client, reverse("metrics:export", args=["scores", "csv"]) + f"?run={first.pk}", max(5, repeats // 3)))
    print("load average after timing: {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))


if __name__ == "__main__":
    main()
