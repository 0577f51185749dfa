import os

from celery import Celery
from celery.signals import worker_ready

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.base")

app = Celery("trajscope")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@worker_ready.connect
def _sweep_jobs(sender=None, **kwargs):
    """Every worker sends again the jobs whose messages are missing, at start and then periodically."""
    from config import jobs

    jobs.start_sweeper()
