"""Stored summaries of a job's scores per run, site, paradigm, task subset and within successful tasks."""

from itertools import groupby

from django.db import transaction
from django.db.models import F

from metrics import aggregation
from metrics.models import Aggregate, EvaluationJob, TrajectoryScore
from trajectories.models import TaskSubset

LENGTH_METRICS = ("agent_steps", "gold_steps")
ROW_FIELDS = aggregation.METRICS + LENGTH_METRICS + (
    aggregation.CHECK_METRIC, "outcome_status", "outcome_reason", "failed_questions")


def score_rows(job: EvaluationJob, run_id: int) -> list[dict]:
    """Plain rows for the pure aggregation functions (errored scores are left out)."""
    rows = job.scores.filter(trajectory__run_id=run_id, error="").values(
        *ROW_FIELDS, "trajectory__task__sites", "trajectory__run__paradigm", "trajectory__task__benchmark",
        "trajectory__task__task_id",
    )
    return [
        {**row, "sites": row.pop("trajectory__task__sites"), "paradigm": row.pop("trajectory__run__paradigm"),
         "task": (row.pop("trajectory__task__benchmark"), row.pop("trajectory__task__task_id"))}
        for row in rows
    ]


def _summary_rows(job_id: int, run_id: int, scope, group, rows) -> list[Aggregate]:
    metrics = aggregation.summarize_metrics(rows, aggregation.METRICS + LENGTH_METRICS + (aggregation.CHECK_METRIC,))
    records = [
        Aggregate(job_id=job_id, run_id=run_id, scope=scope, group=group, metric=metric, mean=summary.mean,
                  std=summary.std, count=summary.count, null_count=summary.null_count)
        for metric, summary in metrics.items()
    ]
    records.append(Aggregate(job_id=job_id, run_id=run_id, scope=scope, group=group, metric="outcomes",
                             count=len(rows), data=aggregation.outcome_table(rows).to_dict()))
    records.append(Aggregate(job_id=job_id, run_id=run_id, scope=scope, group=group, metric="lengths", count=len(rows),
                             data=aggregation.length_comparison(rows).to_dict()))
    return records


def run_aggregates(job_id: int | None, run_id: int | None, rows: list[dict]) -> list[Aggregate]:
    """The unsaved aggregates of one run's score rows (`score_rows`): overall, per site group, per paradigm and
    within successful tasks."""
    records = _summary_rows(job_id, run_id, Aggregate.Scope.RUN, "", rows)
    for site, site_rows in aggregation.group_rows(rows, aggregation.site_group).items():
        records += _summary_rows(job_id, run_id, Aggregate.Scope.SITE, site, site_rows)
    for paradigm, paradigm_rows in aggregation.group_rows(rows, aggregation.paradigm_group).items():
        records += _summary_rows(job_id, run_id, Aggregate.Scope.PARADIGM, paradigm, paradigm_rows)
    return records + _summary_rows(job_id, run_id, Aggregate.Scope.SUCCESSFUL, "", aggregation.within_successful(rows))


def store_aggregates(job: EvaluationJob) -> None:
    """Recompute and replace the job's aggregates (called inside the job's finishing transaction)."""
    subsets = [(subset, set(subset.benchmarks), set(subset.task_ids)) for subset in TaskSubset.objects.all()]
    records = []
    for run in job.runs.all():
        rows = score_rows(job, run.pk)
        records += run_aggregates(job.pk, run.pk, rows)
        for subset, benchmarks, task_ids in subsets:  # the same rows on the subset's tasks, as `_subset_rows` reads
            on_subset = [row for row in rows if row["task"][0] in benchmarks and row["task"][1] in task_ids]
            if on_subset:
                records += _summary_rows(job.pk, run.pk, Aggregate.Scope.SUBSET, subset.name, on_subset)
    Aggregate.objects.filter(job=job).delete()
    Aggregate.objects.bulk_create(records, batch_size=500)


@transaction.atomic
def store_subset_aggregates(subset: TaskSubset) -> None:
    """Recompute and replace every finished evaluation's numbers on the subset's tasks (its tasks are new or
    changed), so the leaderboard ranks a subset's runs by stored numbers as it ranks all runs. A renamed subset's
    numbers under its old name go."""
    stored = Aggregate.objects.filter(scope=Aggregate.Scope.SUBSET)
    stored.filter(group=subset.name).delete()
    stored.exclude(group__in=TaskSubset.objects.values("name")).delete()
    finished = EvaluationJob.objects.filter(status=EvaluationJob.Status.DONE)
    Aggregate.objects.bulk_create(_subset_rows(subset, finished), batch_size=500)


def drop_subset_aggregates(subset: TaskSubset) -> None:
    Aggregate.objects.filter(scope=Aggregate.Scope.SUBSET, group=subset.name).delete()


def _subset_rows(subset: TaskSubset, jobs) -> list[Aggregate]:
    """The `jobs`' summaries per run of its scores on the subset's tasks, for runs with one there at least (the
    rows `metrics.subsets.subset_numbers` summarises); read a run at a time, however many runs were evaluated."""
    scores = TrajectoryScore.objects.filter(subset.task_filter("trajectory__task__"), job__in=jobs, error="",
                                            trajectory__run__evaluation_jobs=F("job"))
    rows = scores.order_by("job_id", "trajectory__run_id").values(*ROW_FIELDS, "job_id", "trajectory__run_id")
    records = []
    for (job_id, run_id), pair_rows in groupby(rows.iterator(chunk_size=2000),
                                               key=lambda row: (row.pop("job_id"), row.pop("trajectory__run_id"))):
        records += _summary_rows(job_id, run_id, Aggregate.Scope.SUBSET, subset.name, list(pair_rows))
    return records
