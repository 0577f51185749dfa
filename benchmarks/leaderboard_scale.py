"""The leaderboard at 50, 500 and 5,000 runs of 812 trajectories each: it reads stored numbers per run, so its
time should follow the runs listed, not the trajectories held.

Data (a PostgreSQL database of its own, rebuilt): the 812 tasks of test.raw.json; runs added in steps up to each
size, each with 812 trajectories (harness verdicts), 812 verdicts of a named LLM judge, one finished evaluation
and that evaluation's stored aggregates (overall, per site group and on the task subset, computed once from random
scores and shared by every run: the leaderboard reads them, whatever their values), all written with COPY. The
runs' tallies (and their verdict counts on the subset) are then counted by the service every import calls
(`refresh_tallies`), timed. A database generated before the subset's numbers were stored gets them on `--reuse`
(the subset's counts by `refresh_subset_counts`, its aggregates by COPY). Scores, steps and
decisions are not generated: the leaderboard does not read them.

Measured in this process (Django test client, DEBUG off; the numbers are read on every request, the rendered
tables come from their cache as on a server): the leaderboard page (first page of 50 runs), its last page, the
page ranked by a metric (step success), by the named judge's success, with a site filter, with a task subset (the
165 tasks of WebArena-Lite's size: the first 165 task ids; by default and by the named judge's success), and the
leaderboard API (its first page of 50, a later page of 20, and the first page with the subset). Each cell: wall
median / p95, and the median CPU time of this process (the database's own time is in the wall time only). With
`--explain`, the EXPLAIN ANALYZE of the ranking query of the first page (the default order, and by the named judge's
success, each without and with the subset) is printed at the largest size.

`--skip NAME ...` leaves out the scenarios named (e.g. `--skip "subset filter"`). `--cold` empties the cache
before each request, so that every page renders its tables again (a new query string, evaluation or judge
confirmation does that on a server).

`--reuse` keeps the database if it exists and only adds runs up to the sizes asked beyond what it holds (sizes
below it are skipped): the 5,000-run database takes minutes to generate, its measurement seconds.

    .venv/bin/python benchmarks/leaderboard_scale.py [--runs 50 500 5000] [--requests 20] [--explain] [--reuse]
        [--skip "subset filter"] [--cold]
        [--postgres-url postgres://postgres@127.0.0.1:5432/postgres] [--database trajscope_bench_leaderboard]

The recorded runs (BENCHMARKS.md, "Stored verdict counts"), on databases generated once:

    .venv/bin/python benchmarks/leaderboard_scale.py --runs 500 --requests 20 \
        --database trajscope_lb1_bench_small --reuse
    .venv/bin/python benchmarks/leaderboard_scale.py --runs 5000 --requests 20 --explain \
        --database trajscope_lb1_bench --reuse
"""

import argparse
import json
import os
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from benchmarks.scale_data import SHARED_DATA, copy_rows, recreate_database  # noqa: E402

SHAPES = 20  # distinct sets of aggregates, cycled over the runs


def _aggregate_shapes(rng: random.Random, tasks, subset) -> list[list[tuple]]:
    """[(scope, group, metric, mean, std, count, null_count, data)] of random scores over the tasks, SHAPES times;
    the subset's are those of its tasks' scores, as `store_subset_aggregates` summarises them."""
    from metrics import aggregation
    from metrics.services.aggregates import LENGTH_METRICS

    shapes = []
    for _ in range(SHAPES):
        skill = rng.uniform(0.2, 0.9)
        rows = [{**{metric: rng.random() < skill for metric in aggregation.METRICS},
                 aggregation.CHECK_METRIC: rng.random() < skill, "agent_steps": rng.randint(2, 20),
                 "gold_steps": rng.randint(2, 12), "outcome_status": "answered", "outcome_reason": "",
                 "sites": task.sites, "paradigm": "step_by_step"} for task in tasks]
        shape = []
        in_subset = [row for row, task in zip(rows, tasks) if task.task_id in subset.task_ids]
        groups = {("run", ""): rows, **{("site", site): members for site, members in
                                         aggregation.group_rows(rows, aggregation.site_group).items()},
                  ("subset", subset.name): in_subset}
        for (scope, group), members in groups.items():
            metrics = aggregation.summarize_metrics(
                members, aggregation.METRICS + LENGTH_METRICS + (aggregation.CHECK_METRIC,))
            shape += [(scope, group, metric, s.mean, s.std, s.count, s.null_count, "{}")
                      for metric, s in metrics.items()]
            shape.append((scope, group, "outcomes", None, None, len(members), 0,
                           json.dumps(aggregation.outcome_table(members).to_dict())))
            shape.append((scope, group, "lengths", None, None, len(members), 0,
                          json.dumps(aggregation.length_comparison(members).to_dict())))
        shapes.append(shape)
    return shapes


def _add_runs(first: int, last: int, tasks, judge, source, shapes, rng: random.Random) -> list[int]:
    from django.db import transaction
    from django.utils import timezone

    from metrics.models import EvaluationJob
    from trajectories.models import AgentRun

    now = timezone.now()
    with transaction.atomic():
        runs = AgentRun.objects.bulk_create([
            AgentRun(name=f"agent-{number:04d}", agent=f"agent {number % 7}", model=f"model-{number % 5}")
            for number in range(first, last)])
        jobs = EvaluationJob.objects.bulk_create([
            EvaluationJob(judge_config=judge, status="done", total=len(tasks), done=len(tasks), started_at=now,
                          finished_at=now) for _ in runs])
        EvaluationJob.runs.through.objects.bulk_create([
            EvaluationJob.runs.through(evaluationjob_id=job.pk, agentrun_id=run.pk) for job, run in zip(jobs, runs)])
        copy_rows("trajectories_trajectory",
                  ("run_id", "task_id", "final_answer", "outcome_status", "outcome_reason", "outcome_message", "success",
                   "success_source", "success_by", "plan", "step_count", "content_hash", "source_name", "source_format",
                   "created_at", "updated_at"),
                  ((run.pk, task.pk, "an answer", "answered", "", "", rng.random() < 0.5, "", "", "[]",
                    rng.randint(1, 20), f"{run.pk:016x}{task.pk:048x}", "", "", now, now)
                   for run in runs for task in tasks))
        copy_rows("trajectories_verdict",
                  ("run_id", "task_id", "source_id", "grader", "success", "label", "labels", "score", "explanation",
                   "origin", "source_name", "created_at"),
                  ((run.pk, task.pk, source.pk, "", rng.random() < 0.4, "", "{}", None, "", "import", "", now)
                   for run in runs for task in tasks))
        _copy_aggregates([(job.pk, run.pk, first + index) for index, (job, run) in enumerate(zip(jobs, runs))],
                         shapes)
    return [run.pk for run in runs]


def _copy_aggregates(pairs, shapes, scope: str | None = None) -> None:
    """The aggregates of each (job, run, run number) of its shape (only those of `scope` when given)."""
    from django.utils import timezone

    now = timezone.now()
    copy_rows("metrics_aggregate",
              ("job_id", "run_id", "scope", '"group"', "metric", "mean", "std", "count", "null_count", "data",
               "computed_at"),
              ((job_id, run_id, *row[:8], now) for job_id, run_id, number in pairs
               for row in shapes[number % SHAPES] if scope in (None, row[0])))


def _add_subset_numbers(subset, shapes) -> None:
    """The subset's stored numbers for runs generated before they were stored (its counts may have been counted
    by the migration that added them)."""
    from django.db import transaction

    from metrics.models import Aggregate, EvaluationJob
    from trajectories.models import SubsetVerdictCount
    from trajectories.services.tallies import refresh_subset_counts

    pairs = EvaluationJob.runs.through.objects.values_list("evaluationjob_id", "agentrun_id", "agentrun__name")
    with transaction.atomic():
        if not Aggregate.objects.filter(scope="subset", group=subset.name).exists():
            _copy_aggregates([(job_id, run_id, int(name.rsplit("-", 1)[1])) for job_id, run_id, name in pairs],
                             shapes, "subset")
        if pairs.exists() and not SubsetVerdictCount.objects.filter(subset=subset).exists():
            refresh_subset_counts(subset)


def _timed(client, url: str, requests: int, cold: bool = False) -> tuple[float, float, float]:
    """(median, p95, median CPU time of this process), in ms; `cold`: the cache emptied before each request."""
    from django.core.cache import cache

    cache.clear()
    assert client.get(url).status_code == 200, url
    times, cpu = [], []
    for _ in range(requests):
        if cold:
            cache.clear()
        started, started_cpu = time.perf_counter(), time.process_time()
        response = client.get(url)
        times.append((time.perf_counter() - started) * 1000)
        cpu.append((time.process_time() - started_cpu) * 1000)
        assert response.status_code == 200, (url, response.status_code)
    ordered = sorted(times)
    return statistics.median(ordered), ordered[max(0, round(0.95 * len(ordered)) - 1)], statistics.median(cpu)


def _explain(source: str, subset: str) -> str:
    """The plans of the ranking query behind the first page: the default order, by `source`'s success, and both
    filtered to `subset`."""
    from django.db import connection

    from metrics.selectors.leaderboard import LeaderboardFilters, _filtered_runs, chosen_subset, ranking_query

    plans = []
    for filters in (LeaderboardFilters(), LeaderboardFilters(success_source=source), LeaderboardFilters(subset=subset),
                    LeaderboardFilters(subset=subset, success_source=source)):
        sql, params = ranking_query(_filtered_runs(filters, chosen_subset(filters)), filters, 0, 50)
        with connection.cursor() as cursor:
            cursor.execute(f"EXPLAIN ANALYZE {sql}", params)
            plans.append(f"{filters}\n" + "\n".join(line for (line,) in cursor.fetchall()))
    return "\n\n".join(plans)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, nargs="+", default=[50, 500, 5000])
    parser.add_argument("--requests", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--postgres-url", default="postgres://postgres@127.0.0.1:5432/postgres")
    parser.add_argument("--database", default="trajscope_bench_leaderboard")
    parser.add_argument("--explain", action="store_true", help="EXPLAIN ANALYZE the ranking query at the largest size")
    parser.add_argument("--reuse", action="store_true", help="keep the database and the runs it holds")
    parser.add_argument("--skip", nargs="*", default=[], help="scenarios to leave out, by name")
    parser.add_argument("--cold", action="store_true",
                        help="empty the cache before each request: the rendered tables are rendered again")
    args = parser.parse_args()

    os.environ.update(DATABASE_URL=recreate_database(args.postgres_url, args.database, keep=args.reuse),
                      DJANGO_SETTINGS_MODULE="config.settings.base", LOG_LEVEL="WARNING", DEBUG="false")
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection
    from django.test import Client
    from django.urls import reverse

    from judges.models import JudgeConfig
    from tests.factories import UserFactory
    from trajectories.models import AgentRun, Task, TaskSubset, VerdictSource
    from trajectories.services.tallies import refresh_tallies
    from trajectories.services.tasks import import_task_file
    from trajectories.verdict_agreement import named_source

    call_command("migrate", verbosity=0)
    held = AgentRun.objects.count()
    if not held:
        import_task_file(SHARED_DATA / "webarena" / "test.raw.json")
    tasks = list(Task.objects.order_by("number"))
    judge, _ = JudgeConfig.objects.get_or_create(name="offline", backend="offline")
    source, _ = VerdictSource.objects.get_or_create(kind="llm_judge", name="WebJudge", model="o4-mini", threshold=3)
    subset, _ = TaskSubset.objects.get_or_create(name="lite-sized", defaults={
        "task_ids": [task.task_id for task in tasks[:165]], "benchmark": tasks[0].benchmark})
    rng = random.Random(args.seed)
    shapes = _aggregate_shapes(rng, tasks, subset)
    _add_subset_numbers(subset, shapes)
    client = Client()
    client.force_login(UserFactory(username="bench-reader"))
    base = reverse("metrics:leaderboard")
    api = reverse("api-leaderboard")
    scenarios = {
        "leaderboard page": base,
        "last page": f"{base}?page=9999",
        "by step success": f"{base}?sort=-step_success",
        "by a named judge": f"{base}?success_source={named_source(source.pk)}",
        "site filter (gitlab)": f"{base}?site=gitlab",
        "subset filter": f"{base}?subset={subset.name}",
        "subset by a named judge": f"{base}?subset={subset.name}&success_source={named_source(source.pk)}",
        "API page 1": api,
        "API page 2 of 20": f"{api}?page=2&page_size=20",
        "API subset page 1": f"{api}?subset={subset.name}",
    }
    scenarios = {name: url for name, url in scenarios.items() if name not in args.skip}
    print(f"load average at start: {' '.join(f'{value:.2f}' for value in os.getloadavg())}")
    print("| runs | trajectories | generate (s) | count tallies (s) | " + " | ".join(
        f"{name} median / p95 (cpu) ms" for name in scenarios) + " |")
    for size in sorted(size for size in args.runs if size >= held):
        started = time.perf_counter()
        added = _add_runs(held, size, tasks, judge, source, shapes, rng)
        generated = time.perf_counter() - started
        started = time.perf_counter()
        refresh_tallies(added)
        counted = time.perf_counter() - started
        held = size
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")
        cells = [_timed(client, url, args.requests, args.cold) for url in scenarios.values()]
        print(f"| {size:,} | {size * len(tasks):,} | {generated:.0f} | {counted:.1f} | "
              + " | ".join(f"{median:.0f} / {p95:.0f} ({cpu:.0f})" for median, p95, cpu in cells)
              + f" |  (load {os.getloadavg()[0]:.1f})", flush=True)
    if args.explain:
        print(_explain(named_source(source.pk), subset.name))


if __name__ == "__main__":
    main()
