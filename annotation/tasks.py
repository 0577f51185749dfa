"""Background work of the annotation app."""

from celery import shared_task
from celery.signals import worker_ready

from .models import GoldCheckJob
from .services.gold_checks import run_gold_check


@shared_task
def run_gold_check_task(job_id: int) -> str:
    """Gold quality checks or an agreement report; progress and results go to the GoldCheckJob."""
    return run_gold_check(job_id).status


@worker_ready.connect
def _resume_gold_checks(sender=None, **kwargs):
    """A worker that starts runs again the check jobs a previous worker left unfinished."""
    unfinished = GoldCheckJob.objects.filter(status__in=[GoldCheckJob.Status.PENDING, GoldCheckJob.Status.RUNNING])
    for job_id in unfinished.values_list("pk", flat=True):
        run_gold_check_task.delay(job_id)
