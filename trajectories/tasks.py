"""Background work of the trajectories app."""

from pathlib import Path

from celery import shared_task
from django.conf import settings

from .services.import_jobs import fail_import_chunk, run_import_chunk, run_import_job
from .services.tasks import import_task_file


@shared_task
def import_task_file_task(path: str, benchmark: str | None = None) -> dict:
    """Import task configs on a worker, e.g. when a large config set is uploaded through the API."""
    return import_task_file(Path(path), benchmark=benchmark).to_dict()


@shared_task
def run_import_job_task(job_id: int) -> str:
    """Import an uploaded batch of trajectories on a worker; progress and report go to the ImportJob."""
    return run_import_job(job_id, in_chunks=True).status


@shared_task(bind=True, max_retries=None)
def run_import_chunk_task(self, chunk_id: int):
    """Import one chunk of an import job; a chunk that fails is retried alone, with a growing delay, and
    after IMPORT_CHUNK_RETRIES retries its files are reported failed."""
    try:
        run_import_chunk(chunk_id)
    except Exception as error:  # noqa: BLE001 - any failure of the chunk is retried, then reported
        if self.request.retries >= settings.IMPORT_CHUNK_RETRIES:
            fail_import_chunk(chunk_id, error)
            return None
        retry = self.retry(exc=error, countdown=settings.IMPORT_CHUNK_RETRY_SECONDS * 2 ** self.request.retries,
                           throw=False)
        if self.request.is_eager:
            return retry  # in-process, `apply` runs the retry at once
        raise retry from error
    return None
