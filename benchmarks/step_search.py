"""Latency of a step search (`failures.search_selectors.search_steps`) over 100,000 generated steps: the
keyword half, the meaning half and the whole (both, merged, with the results' texts read), p50 and p95, on
SQLite (a fresh file) or PostgreSQL (a database of its own, rebuilt).

Data: 5,000 trajectories of 20 steps over 50 runs and two benchmarks, each step a WebArena-style action with
reasoning made from templates of web-agent steps with varied values (seeded) and a 2,000-character page text.
The step vectors are the shipped sentence model's, computed for 2,000 distinct sentences and shared by the
steps made from them (encoding 100,000 texts takes the worker tens of minutes, and a search reads the stored
vectors whatever they are). Every query is a different text, so none is served from the encoder's cache; the
first query, which loads the vectors into memory, is reported apart. On PostgreSQL the generated tables
are vacuumed and analyzed before the queries, as autovacuum would have done on a server that has it on.

    .venv/bin/python benchmarks/step_search.py [--steps 100000] [--queries 40]
        [--postgres-url postgres://postgres@127.0.0.1:5432/postgres --database trajscope_bench_search [--keep]]
        [--statements]
"""

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from scale_data import recreate_database  # noqa: E402

STEPS_PER_TRAJECTORY = 20
SENTENCES = 2000
TEMPLATES = (  # (action, reasoning)
    ("click [{n}]", "The {site} login page shows a captcha; I will try to sign in again."),
    ("type [{n}] [{value}]", "Entering {value} into the {field} field of the {site} form."),
    ("scroll [down]", "The {field} results on {site} may be further down the list."),
    ("stop [{value}]", "The answer is {value}, as the {site} page showed."),
    ("click [{n}]", "Opening the {field} menu of {site} to find the orders."),
    ("goto [http://{site}/{field}]", "The {site} page returned an error 500; reloading it."),
    ("hover [{n}]", "Checking the tooltip of the {field} button on {site}."),
    ("press [Enter]", "Submitting the {field} search on {site} for {value}."),
)
SITES = ("shopping", "gitlab", "reddit", "maps", "wikipedia", "booking", "airline", "cms", "forum", "bank")
FIELDS = ("date", "quantity", "search", "address", "price", "title", "account", "settings", "filter", "review")
WORDS = ("captcha login", "wrong date typed", "error 500 reload", "orders menu", "price filter", "review title",
         "booking address", "account settings", "quantity field", "search results")
MEANINGS = ("the site wanted proof that I am human", "the server failed and the page broke",
            "looking for where my purchases are listed", "entered the day of the trip", "kept going down the page",
            "gave the final reply to the user", "sent the query with the keyboard", "moved the mouse over a control")


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def generate(steps: int, seed: int) -> None:
    from failures.models import StepVector
    from failures.step_search import quantize
    from judges.embeddings import sentence_encoder
    from trajectories.models import AgentRun, Step, Task, Trajectory

    rng = random.Random(seed)
    sentences = []
    for _ in range(SENTENCES):
        values = {"site": rng.choice(SITES), "field": rng.choice(FIELDS), "n": rng.randint(1, 900),
                  "value": rng.randint(1, 3000)}
        sentences.append(tuple(part.format(**values) for part in rng.choice(TEMPLATES)))
    started = time.perf_counter()
    vectors = quantize(sentence_encoder().encode([" ".join(pair) for pair in sentences]))
    print(f"encoded {SENTENCES} sentences in {time.perf_counter() - started:.1f} s")
    runs = [AgentRun.objects.create(name=f"run-{number}") for number in range(50)]
    tasks = [Task.objects.create(benchmark=("webarena", "mind2web")[number % 2], task_id=str(number), intent="x")
             for number in range(100)]
    count = steps // STEPS_PER_TRAJECTORY
    trajectories = Trajectory.objects.bulk_create(
        [Trajectory(run=runs[number % len(runs)], task=tasks[number // len(runs) % len(tasks)], success=rng.random() < 0.4,
                    final_answer=str(rng.randint(1, 3000))) for number in range(count)], batch_size=2000)
    page = " ".join(rng.choice(FIELDS + SITES) for _ in range(300))[:2000]
    for start in range(0, count, 500):
        rows, picked = [], []
        for trajectory in trajectories[start:start + 500]:
            for index in range(1, STEPS_PER_TRAJECTORY + 1):
                chosen = rng.randrange(SENTENCES)
                action, reasoning = sentences[chosen]
                rows.append(Step(trajectory=trajectory, index=index, action=action, reasoning=reasoning,
                                 observation=page))
                picked.append(chosen)
        stored = Step.objects.bulk_create(rows, batch_size=2000)
        StepVector.objects.bulk_create([StepVector(step_id=step.pk, trajectory_id=step.trajectory_id,
                                                   vector=vectors[chosen].tobytes())
                                        for step, chosen in zip(stored, picked)], batch_size=2000)
    print(f"generated {count * STEPS_PER_TRAJECTORY} steps in {time.perf_counter() - started:.1f} s")


def signed_in(user):
    """The user as a request would carry it: read afresh, nothing about them (their groups) read yet."""
    return type(user).objects.get(pk=user.pk)


def statement_table(sql: str) -> str:
    """The table a statement reads (its outermost FROM's first): what names it in the breakdown."""
    depth = 0
    for position, character in enumerate(sql):
        depth += (character == "(") - (character == ")")
        if depth == 0 and sql.startswith(" FROM ", position):
            return sql[position + 6:].split()[0].strip('"')
    return sql.split(" FROM ", 1)[-1].split()[0].strip('"') + " (union)"


def breakdown(user, texts: list[str]) -> None:
    """Median time and count per search of the whole search's SQL statements over all runs, by table read."""
    from django.db import connection

    from failures import search_selectors as search

    spent: list[dict[str, list[float]]] = []

    def timed(execute, sql, params, many, context):
        started = time.perf_counter()
        try:
            return execute(sql, params, many, context)
        finally:
            spent[-1].setdefault(statement_table(sql), []).append((time.perf_counter() - started) * 1000)

    for text in texts:
        viewer = signed_in(user)
        spent.append({})
        with connection.execute_wrapper(timed):
            search.search_steps(viewer, text + " for the breakdown")
    tables = sorted({table for search_spent in spent for table in search_spent},
                    key=lambda table: -statistics.median(sum(search_spent.get(table, [0])) for search_spent in spent))
    for table in tables:
        print(f"statements\t{table}\tmedian {statistics.median(sum(one.get(table, [0])) for one in spent):.1f} ms"
              f"\t{statistics.median(len(one.get(table, [])) for one in spent):.0f} a search")
    print(f"statements\tall\tmedian {statistics.median(sum(map(sum, one.values())) for one in spent):.1f} ms"
          f"\t{statistics.median(sum(map(len, one.values())) for one in spent):.0f} a search")


def measure(queries: int, statements: bool) -> None:
    from failures import search_selectors as search
    from tests.factories import UserFactory
    from trajectories.models import AgentRun

    user, run = UserFactory(), AgentRun.objects.order_by("pk").first()
    texts = [f"{query} {number}" if number else query
             for number in range(queries // len(WORDS + MEANINGS) + 1) for query in WORDS + MEANINGS][:queries]
    started = time.perf_counter()
    search.search_steps(user, "first query loads the vectors")
    print(f"first query (vectors loaded into memory): {(time.perf_counter() - started) * 1000:.0f} ms")
    for label, filters in (("all runs", search.SearchFilters()), ("one run", search.SearchFilters(run_id=run.pk))):
        times = {"keyword": [], "meaning": [], "whole search": []}
        for text in texts:
            scope = search.scoped_trajectories(user, filters)
            for name, call in (
                    ("keyword", lambda viewer: search.keyword_ranking(search.query_terms(text), scope, viewer,
                                                                      filters == search.SearchFilters())),
                    ("meaning", lambda _: search.meaning_ranking(text + " again", scope,
                                                                 filters == search.SearchFilters())),
                    ("whole search", lambda viewer: search.search_steps(viewer, text + " once more", filters))):
                viewer = signed_in(user)
                started = time.perf_counter()
                call(viewer)
                times[name].append((time.perf_counter() - started) * 1000)
        for name, values in times.items():
            print(f"{label}\t{name}\tp50 {statistics.median(values):.0f} ms\tp95 {percentile(values, 0.95):.0f} ms"
                  f"\t({len(values)} queries)")
    if statements:
        breakdown(user, texts)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=40)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--postgres-url", default="")
    parser.add_argument("--database", default="trajscope_bench_search")
    parser.add_argument("--keep", action="store_true", help="PostgreSQL: search the steps a previous run generated")
    parser.add_argument("--statements", action="store_true",
                        help="then the whole search's SQL statements over all runs: median time and count a search")
    args = parser.parse_args()
    if args.postgres_url:
        url = recreate_database(args.postgres_url, args.database, keep=args.keep)
    else:
        url = "sqlite:///" + os.path.join(tempfile.mkdtemp(), "search.sqlite3")
    os.environ.update(DATABASE_URL=url, DJANGO_SETTINGS_MODULE="config.settings.base", LOG_LEVEL="WARNING",
                      DEBUG="false")
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    from trajectories.models import Step

    if not Step.objects.exists():
        generate(args.steps, args.seed)
    if args.postgres_url:
        from django.db import connection

        with connection.cursor() as cursor:  # as autovacuum would have by now, where it is on
            cursor.execute("VACUUM ANALYZE")
    measure(args.queries, args.statements)


if __name__ == "__main__":
    main()
