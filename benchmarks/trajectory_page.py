"""The 30-step trajectory page of `web_load.py`'s database, rendered in this process: the CPU time per request
(the figure that decides its latency, the database's own time being about 2 ms), its queries and, with
`--profile`, where the time goes.

Generate the database first (`web_load.py --runs 500 --database NAME`, kept with `--reuse`); this script only
reads it. Requests go through the Django test client (every middleware, DEBUG off) as the reader account
web_load.py uses, after a few warm-up requests; each is timed with `time.process_time`, and the median and p90
are reported with the load average beside them, since other work on the machine inflates them.

    .venv/bin/python benchmarks/trajectory_page.py --database trajscope_bench_web [--requests 100] [--profile 30]
        [--queries] [--postgres-url postgres://postgres@127.0.0.1:5432/postgres]
"""

import argparse
import cProfile
import io
import os
import pstats
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--database", default="trajscope_bench_web", help="A database web_load.py generated.")
    parser.add_argument("--postgres-url", default="postgres://postgres@127.0.0.1:5432/postgres")
    parser.add_argument("--requests", type=int, default=100, help="Timed requests.")
    parser.add_argument("--profile", type=int, default=0, help="Requests to run under cProfile afterwards.")
    parser.add_argument("--queries", action="store_true", help="Print the SQL of one request.")
    args = parser.parse_args()
    os.environ.update({"DATABASE_URL": args.postgres_url.rsplit("/", 1)[0] + f"/{args.database}",
                       "DJANGO_SETTINGS_MODULE": "config.settings.base", "DEBUG": "false", "LOG_LEVEL": "WARNING"})
    import django

    django.setup()
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    from benchmarks.web_load import LONG_TRAJECTORY_STEPS
    from trajectories.models import AgentRun, Task, Trajectory

    settings.ALLOWED_HOSTS = ["testserver"]
    client = Client()
    client.force_login(get_user_model().objects.get_or_create(username="bench-reader")[0])
    run = AgentRun.objects.order_by("name").first()
    trajectory = Trajectory.objects.get(run=run, task=Task.objects.order_by("number").first())
    assert trajectory.step_count == LONG_TRAJECTORY_STEPS, trajectory.step_count
    url = f"/trajectories/{trajectory.pk}/"

    for _ in range(5):
        assert client.get(url).status_code == 200
    with CaptureQueriesContext(connection) as captured:
        size = len(client.get(url).content)
        queries = list(captured)  # read here: the next request empties the log it counts from
    cpu = []
    for _ in range(args.requests):
        started = time.process_time()
        client.get(url)
        cpu.append((time.process_time() - started) * 1000)
    cpu.sort()
    print(f"{url}: {len(queries)} queries, {size} bytes; CPU per request median {statistics.median(cpu):.1f} ms, "
          f"p90 {cpu[int(0.9 * len(cpu))]:.1f} ms over {len(cpu)} requests; load average {os.getloadavg()[0]:.1f}")
    if args.queries:
        for query in queries:
            print(f"  {query['time']} s  {query['sql'][:200]}")
    if args.profile:
        profiler = cProfile.Profile()
        profiler.enable()
        for _ in range(args.profile):
            client.get(url)
        profiler.disable()
        for order, count in (("cumulative", 40), ("tottime", 25)):
            out = io.StringIO()
            pstats.Stats(profiler, stream=out).sort_stats(order).print_stats(count)
            print(out.getvalue())


if __name__ == "__main__":
    main()
