"""Evaluation on Celery: one task plans a job, chunk tasks score its trajectories; charts are drawn here too."""

from celery import shared_task

from metrics import plots
from metrics.models import EvaluationJob
from metrics.services import evaluation


@shared_task
def run_evaluation(job_id: int) -> None:
    job = EvaluationJob.objects.get(pk=job_id)
    for chunk in evaluation.begin(job):
        evaluate_chunk.delay(job_id, chunk)


@shared_task
def evaluate_chunk(job_id: int, units: list) -> None:
    evaluation.evaluate_chunk(job_id, [tuple(unit) for unit in units])


@shared_task
def draw_plot(job_id: int) -> None:
    plots.draw_job(job_id)
