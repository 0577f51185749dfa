"""Stored summaries of a job's scores per run, site, paradigm and within successful tasks."""

from metrics import aggregation
from metrics.models import Aggregate, EvaluationJob

LENGTH_METRICS = ("agent_steps", "gold_steps")
ROW_FIELDS = aggregation.METRICS + LENGTH_METRICS + (aggregation.CHECK_METRIC, "outcome_status", "outcome_reason")


def score_rows(job: EvaluationJob, run_id: int) -> list[dict]:
    """Plain rows for the pure aggregation functions (errored scores are left out)."""
    rows = job.scores.filter(trajectory__run_id=run_id, error="").values(
        *ROW_FIELDS, "trajectory__task__sites", "trajectory__run__paradigm"
    )
    return [
        {**row, "sites": row.pop("trajectory__task__sites"), "paradigm": row.pop("trajectory__run__paradigm")}
        for row in rows
    ]


def _summary_rows(job, run, scope, group, rows) -> list[Aggregate]:
    metrics = aggregation.summarize_metrics(rows, aggregation.METRICS + LENGTH_METRICS + (aggregation.CHECK_METRIC,))
    records = [
        Aggregate(job=job, run=run, scope=scope, group=group, metric=metric, mean=summary.mean, std=summary.std,
                  count=summary.count, null_count=summary.null_count)
        for metric, summary in metrics.items()
    ]
    records.append(Aggregate(job=job, run=run, scope=scope, group=group, metric="outcomes", count=len(rows),
                             data=aggregation.outcome_table(rows).to_dict()))
    records.append(Aggregate(job=job, run=run, scope=scope, group=group, metric="lengths", count=len(rows),
                             data=aggregation.length_comparison(rows).to_dict()))
    return records


def run_aggregates(job: EvaluationJob, run, rows: list[dict]) -> list[Aggregate]:
    """The unsaved aggregates of one run's score rows (`score_rows`): overall, per site group, per paradigm and
    within successful tasks."""
    records = _summary_rows(job, run, Aggregate.Scope.RUN, "", rows)
    for site, site_rows in aggregation.group_rows(rows, aggregation.site_group).items():
        records += _summary_rows(job, run, Aggregate.Scope.SITE, site, site_rows)
    for paradigm, paradigm_rows in aggregation.group_rows(rows, aggregation.paradigm_group).items():
        records += _summary_rows(job, run, Aggregate.Scope.PARADIGM, paradigm, paradigm_rows)
    return records + _summary_rows(job, run, Aggregate.Scope.SUCCESSFUL, "", aggregation.within_successful(rows))


def store_aggregates(job: EvaluationJob) -> None:
    """Recompute and replace the job's aggregates (called inside the job's finishing transaction)."""
    records = []
    for run in job.runs.all():
        records += run_aggregates(job, run, score_rows(job, run.pk))
    Aggregate.objects.filter(job=job).delete()
    Aggregate.objects.bulk_create(records, batch_size=500)

