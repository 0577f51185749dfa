"""Background work of the judges app."""

from celery import shared_task

from .outcome_judging import run_outcome_job


@shared_task
def run_outcome_job_task(job_id: int) -> str:
    """Judge a run's outcomes on a worker; progress, errors and cost go to the OutcomeJob."""
    return run_outcome_job(job_id).status
