"""Background work of the trajectories app."""

from pathlib import Path

from celery import shared_task

from .services.import_jobs import run_import_job
from .services.tasks import import_task_file


@shared_task
def import_task_file_task(path: str, benchmark: str | None = None) -> dict:
    """Import task configs on a worker, e.g. when a large config set is uploaded through the API."""
    return import_task_file(Path(path), benchmark=benchmark).to_dict()


@shared_task
def run_import_job_task(job_id: int) -> str:
    """Import an uploaded batch of trajectories on a worker; progress and report go to the ImportJob."""
    return run_import_job(job_id).status
