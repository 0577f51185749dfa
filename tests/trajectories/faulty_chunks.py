"""The project's Celery app for worker tests of chunked imports, with faults as a database that goes away
would give: the chunk holding FAULTY_CHUNK_SOURCE fails its first FAULTY_CHUNK_TIMES imports. Every
chunk import and every tallies refresh is written as a line to FAULTY_CHUNK_LOG, shared by the workers,
so that a test counts them over all workers: `celery -A tests.trajectories.faulty_chunks worker`."""

import os
from pathlib import Path

from celery.signals import task_prerun

from config.celery import app  # noqa: F401 - the app the worker runs

_LOG = Path(os.environ.get("FAULTY_CHUNK_LOG", "faulty-chunks.log"))


def _written(line: str) -> int:
    """Append `line` and return how many lines equal to it the log now holds (O_APPEND: whole lines)."""
    with _LOG.open("a") as log:
        log.write(line + "\n")
    return _LOG.read_text().splitlines().count(line)


@task_prerun.connect
def _install(**_):
    """Patched once Django is set up, before the worker's first task."""
    from trajectories.services import import_jobs

    if getattr(import_jobs.import_paths, "faulty", False):
        return
    real_import, real_refresh = import_jobs.import_paths, import_jobs.refresh_tallies
    source, times = os.environ["FAULTY_CHUNK_SOURCE"], int(os.environ.get("FAULTY_CHUNK_TIMES", "0"))

    def import_paths(paths, run, **options):
        only = options.get("only") or ()
        if only:
            attempt = _written("import " + " ".join(sorted(only)))
            if source in only and attempt <= times:
                raise ConnectionError("the database went away")
        return real_import(paths, run, **options)

    def refresh_tallies(run_ids):
        _written(f"refresh {sorted(run_ids)}")
        return real_refresh(run_ids)

    import_paths.faulty = True
    import_jobs.import_paths, import_jobs.refresh_tallies = import_paths, refresh_tallies
