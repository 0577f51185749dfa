"""Which evaluation speaks for a run: its *latest finished evaluation*, i.e. among the evaluation jobs that
include the run and have status `done`, the one that finished last (ties: the newer job). Naming a judge
configuration restricts the choice to that judge's jobs. A job that is being re-run does not count until it
finishes again, so the previous numbers stay up meanwhile. The leaderboard, the verdict reads and the
comparison all choose the same way, here.
"""

import hashlib
from dataclasses import dataclass
from datetime import datetime

from django.db.models import F, Window
from django.db.models.functions import RowNumber

from metrics.models import EvaluationJob


@dataclass(frozen=True)
class Evaluation:
    """The evaluation job that represents a run."""

    job_id: int
    judge: str
    finished_at: datetime


def finished_evaluations(judge: str = ""):
    """The memberships (run, job) of finished evaluations, latest first per run."""
    memberships = EvaluationJob.runs.through.objects.filter(evaluationjob__status=EvaluationJob.Status.DONE)
    if judge:
        memberships = memberships.filter(evaluationjob__judge_config__name=judge)
    return memberships.order_by("agentrun_id", "-evaluationjob__finished_at", "-evaluationjob_id")


def latest_evaluations(run_ids=None, *, judge: str = "") -> dict[int, Evaluation]:
    """{run id: its latest finished evaluation}, for the given runs (all runs when None)."""
    memberships = finished_evaluations(judge)
    if run_ids is not None:
        memberships = memberships.filter(agentrun_id__in=list(run_ids))
    rows = memberships.values_list(
        "agentrun_id", "evaluationjob_id", "evaluationjob__judge_config__name", "evaluationjob__finished_at"
    )
    chosen: dict[int, Evaluation] = {}
    for run_id, job_id, judge_name, finished_at in rows:
        chosen.setdefault(run_id, Evaluation(job_id, judge_name, finished_at))
    return chosen


def latest_evaluation_jobs(judge: str = ""):
    """`latest_evaluations` of every run as rows (`run`, `job`), chosen by the database in one pass over the
    finished memberships (a window), for a query to join rather than look up run by run."""
    chosen = finished_evaluations(judge).order_by().annotate(rank=Window(
        RowNumber(), partition_by=F("agentrun_id"),
        order_by=(F("evaluationjob__finished_at").desc(), F("evaluationjob_id").desc())))
    return chosen.filter(rank=1).values(run=F("agentrun_id"), job=F("evaluationjob_id"))


def cache_key(kind: str, *parts) -> str:
    """A cache key for something derived from finished evaluations: name them (id and finish time) in `parts`."""
    digest = hashlib.sha256(repr(parts).encode()).hexdigest()
    return f"{kind}:{digest}"
