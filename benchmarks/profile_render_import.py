"""Where the import of a run of WebArena render files spends its time, phase by phase.

Generates a run as `ingest_render_run.py` does (812 files by default), imports it into a fresh
database under cProfile with the files read in the importing thread itself (not a worker, not a
second thread), so that one profile holds every phase, and prints the cumulative seconds of each:
reading the files, UTF-8 decoding, parsing, decoding and hashing the screenshots, the content
hash, writing the screenshot files, and the rows (waits for the database apart). Profiled seconds
are inflated by the profiler: compare the phases with each other, not with the benchmark's times.

    .venv/bin/python benchmarks/profile_render_import.py [--files 812] [--database trajscope_bench_profile]
        [--database-url sqlite:///PATH] [--output FILE.prof]

The database is a PostgreSQL database (`--database`) on 127.0.0.1, created and dropped by the
script, unless `--database-url` names another.
"""

import argparse
import os
import pstats
import sys
import tempfile
from concurrent.futures import Executor, Future
from pathlib import Path

from ingest_render_run import ROOT, _postgres_database, generate_run, generate_tasks

# (label, file the function is in, function name) of each phase, in the order a file goes through them.
PHASES = (
    ("read the files", "~", "<method 'read' of '_io.BufferedReader' objects>"),
    ("UTF-8 decoding (screenshots' base64 kept apart)", "webarena_render.py", "decode_render"),
    ("parse the pages (steps, actions)", "webarena_render.py", "parse_render"),
    ("decode the screenshots (base64)", "~", "<built-in method pybase64._pybase64.b64decode>"),
    ("hash the screenshots and the content (SHA-256)", "~", "<built-in method _hashlib.openssl_sha256>"),
    ("content hash (whole)", "canonical.py", "content_hash"),
    ("write the screenshot files", "services/screenshots.py", "write_files"),
    ("  of which creating them (open)", "~", "<built-in method posix.open>"),
    ("store the rows (whole)", "services/ingest.py", "add"),
    ("  screenshot rows", "services/screenshots.py", "batch_screenshot_ids"),
    ("  trajectory row", "django/db/models/query.py", "bulk_create"),
    ("  step rows (COPY)", "services/trajectory_rows.py", "insert_steps"),
    ("  savepoints opened", "django/db/transaction.py", "__enter__"),
    ("  savepoints released, batches committed", "django/db/transaction.py", "__exit__"),
    ("  waiting for the database", "psycopg/connection.py", "wait"),
)


class _InThisThread(Executor):
    """Runs what is submitted at once, so that the reading happens where the profiler is."""

    def submit(self, function, /, *args, **kwargs):
        future = Future()
        try:
            future.set_result(function(*args, **kwargs))
        except Exception as error:  # noqa: BLE001 - handed to the caller, as a pool would
            future.set_exception(error)
        return future


def profile(folder: Path, tasks: Path, output: Path) -> None:
    import cProfile
    from functools import partial

    import django

    django.setup()
    from django.core.management import call_command

    from trajectories.services import reading
    from trajectories.services.ingest import import_paths
    from trajectories.services.runs import get_or_create_run
    from trajectories.services.tasks import import_task_file

    call_command("migrate", verbosity=0)
    import_task_file(tasks)
    run = get_or_create_run("profiled-run", agent="generated", model="samples")
    reading._pool = lambda workers, keep: (_InThisThread(), partial(reading.read_ahead, keep=keep), 1)
    profiler = cProfile.Profile()
    profiler.runcall(import_paths, [folder], run)
    profiler.dump_stats(output)
    stats = pstats.Stats(str(output)).stats
    total = max(cumulative for _, _, _, cumulative, _ in stats.values())
    print(f"{'phase':50} {'seconds':>8} {'share':>6}   (profiled import: {total:.1f} s; load average "
          f"{' '.join(f'{load:.1f}' for load in os.getloadavg())})")
    for label, where, name in PHASES:
        seconds = sum(cumulative for (path, _, function), (_, _, _, cumulative, _) in stats.items()
                      if function == name and where in path)
        print(f"{label:50} {seconds:8.2f} {seconds / total:6.0%}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=812)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--database", default="trajscope_bench_profile")
    parser.add_argument("--database-url", default="")
    parser.add_argument("--output", type=Path, default=None, help="Where to keep the profile (pstats)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="trajscope-profile-") as scratch:
        scratch = Path(scratch)
        tasks = generate_tasks(scratch / "tasks.json", args.files)
        generate_run(scratch / "run", tasks, args.seed)
        admin = "postgres://postgres@127.0.0.1:5432/postgres"
        url = args.database_url or _postgres_database(admin, args.database, create=True)
        os.environ.update({"DJANGO_SETTINGS_MODULE": "config.settings.base", "DATABASE_URL": url,
                           "MEDIA_ROOT": str(scratch / "media"), "INGEST_MAX_FILES": "100000",
                           "INGEST_MAX_UNCOMPRESSED_BYTES": str(1 << 40)})
        sys.path.insert(0, str(ROOT))
        try:
            profile(scratch / "run", scratch / "tasks.json", args.output or scratch / "import.prof")
        finally:
            if not args.database_url:
                from django.db import connection

                connection.close()
                _postgres_database(admin, args.database, create=False)


if __name__ == "__main__":
    main()
