"""Background work of the failures app."""

from celery import shared_task

from .services.llm_attribution import run_attribution_job
from .services.step_vectors import index_step_vectors
from .services.themes import compute_themes


@shared_task
def compute_themes_task(job_id: int) -> str:
    """Failure themes of a run, a benchmark or every run; the result goes to the ThemeJob."""
    return compute_themes(job_id).status


@shared_task
def index_step_vectors_task() -> int:
    """Sentence vectors of the steps stored since the last run, for search by meaning."""
    return index_step_vectors()


@shared_task
def run_attribution_job_task(job_id: int) -> str:
    """An LLM method's attribution of a run's failures; progress, errors and cost go to the AttributionJob."""
    return run_attribution_job(job_id).status
