"""The memory one trajectory page takes when a step's reasoning is 10 MB: the page shows its first characters
(`trajectories.selectors.PAGE_TEXT_LIMIT`) with its length and a link to the whole, so what one request
allocates no longer grows with the text.

Migrates the database named (created if missing), stores one trajectory with one step whose reasoning holds
`--megabytes` MB of text, then renders its page through the Django test client (every middleware, DEBUG off)
after one warm-up request, and reports the peak of Python's allocations during the request (tracemalloc) and
the process's peak resident size.

    .venv/bin/python benchmarks/long_text_page.py [--database trajscope_bench_long_text] [--megabytes 10]
        [--postgres-url postgres://postgres@127.0.0.1:5432/postgres]
"""

import argparse
import os
import resource
import subprocess
import sys
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--database", default="trajscope_bench_long_text")
    parser.add_argument("--postgres-url", default="postgres://postgres@127.0.0.1:5432/postgres")
    parser.add_argument("--megabytes", type=int, default=10)
    args = parser.parse_args()
    server = args.postgres_url.rsplit("/", 1)[0]
    subprocess.run(["createdb", "-h", "127.0.0.1", "-U", "postgres", args.database], capture_output=True)
    os.environ.update({"DATABASE_URL": f"{server}/{args.database}", "DJANGO_SETTINGS_MODULE": "config.settings.base",
                       "DEBUG": "false", "LOG_LEVEL": "WARNING"})
    import django

    django.setup()
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.test import Client

    from tests.factories import StepFactory, TrajectoryFactory

    call_command("migrate", verbosity=0)
    settings.ALLOWED_HOSTS = ["testserver"]
    reasoning = ("the agent thinks about the page " * (args.megabytes * 1024 * 1024 // 32 + 1))[
        :args.megabytes * 1024 * 1024]
    trajectory = TrajectoryFactory()
    StepFactory(trajectory=trajectory, index=1, reasoning=reasoning)
    del reasoning
    client = Client()
    client.force_login(get_user_model().objects.get_or_create(username="bench-reader")[0])
    url = f"/trajectories/{trajectory.pk}/"
    assert client.get(url).status_code == 200
    tracemalloc.start()
    response = client.get(url)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert response.status_code == 200
    print(f"reasoning: {args.megabytes} MB; page: {len(response.content) / 1024:.0f} KB; "
          f"peak Python allocations during the request: {peak / 1024 / 1024:.1f} MB; "
          f"process peak resident size: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB; "
          f"load average {os.getloadavg()[0]:.1f}")
    trajectory.run.delete()


if __name__ == "__main__":
    main()
