"""Background work of the annotation app."""

from celery import shared_task

from .services.gold_checks import run_gold_check


@shared_task
def run_gold_check_task(job_id: int) -> str:
    """Gold quality checks or an agreement report; progress and results go to the GoldCheckJob."""
    return run_gold_check(job_id).status

