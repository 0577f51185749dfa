"""A run's numbers restricted to a task subset (WebArena-Lite, Verified hard, ...), from stored scores.

A subset's numbers are summarised from the scores of the same evaluations, with the same pure
functions, so a subset defined after a run was evaluated applies at once: nothing is imported or
evaluated again. The leaderboard reads them as stored for every finished evaluation
(`metrics.services.aggregates.store_subset_aggregates`, which these equal); the run page, the
exports and the charts' per-site cells summarise the few runs they show here.
"""

from dataclasses import dataclass

from django.db.models import Count, Q

from metrics import aggregation
from metrics.models import TrajectoryScore
from metrics.services.aggregates import LENGTH_METRICS, ROW_FIELDS
from trajectories.models import AgentRun, TaskSubset
from trajectories.selectors import subsets_of_run


@dataclass(frozen=True)
class SubsetNumbers:
    metrics: dict  # metric name -> aggregation.Summary
    outcomes: dict  # aggregation.OutcomeTable.to_dict()
    lengths: dict  # aggregation.LengthComparison.to_dict()


def subset_scores(job_by_run: dict[int, int], subset: TaskSubset):
    """Scores (without errors) of each run's chosen evaluation on the subset's tasks."""
    scores = TrajectoryScore.objects.none()
    for run_id, job_id in job_by_run.items():
        scores |= TrajectoryScore.objects.filter(job_id=job_id, trajectory__run_id=run_id)
    return scores.filter(subset.task_filter("trajectory__task__"))


def subset_numbers(job_by_run: dict[int, int], subset: TaskSubset) -> dict[int, SubsetNumbers]:
    """{run id: its numbers on the subset} for runs with at least one scored trajectory there."""
    if not job_by_run:
        return {}
    rows_by_run = _rows_by_run(job_by_run, subset)
    return {
        run_id: SubsetNumbers(
            metrics=aggregation.summarize_metrics(rows, aggregation.METRICS + LENGTH_METRICS),
            outcomes=aggregation.outcome_table(rows).to_dict(),
            lengths=aggregation.length_comparison(rows).to_dict(),
        )
        for run_id, rows in rows_by_run.items()
    }


def _rows_by_run(job_by_run: dict[int, int], subset: TaskSubset) -> dict[int, list[dict]]:
    rows_by_run: dict[int, list[dict]] = {}
    rows = subset_scores(job_by_run, subset).filter(error="").values(*ROW_FIELDS, "trajectory__run_id",
                                                                     "trajectory__task__sites")
    for row in rows:
        row["sites"] = row.pop("trajectory__task__sites")
        rows_by_run.setdefault(row.pop("trajectory__run_id"), []).append(row)
    return rows_by_run


def subset_site_summaries(job_by_run: dict[int, int], subset: TaskSubset, metric: str) -> dict[int, dict]:
    """{run id: {site group: Summary of `metric`}} on the subset's tasks."""
    if not job_by_run:
        return {}
    return {
        run_id: {site: summaries[metric] for site, summaries in
                 aggregation.summarize_groups(rows, aggregation.site_group, (metric,)).items()}
        for run_id, rows in _rows_by_run(job_by_run, subset).items()
    }


@dataclass(frozen=True)
class RunSubset:
    """A run's part in one subset: its trajectories there, harness verdicts, and its latest evaluation's numbers."""

    subset: TaskSubset
    trajectories: int
    passed: int
    judged: int
    job_id: int | None
    numbers: SubsetNumbers | None


def run_subsets(run: AgentRun, job_id: int | None) -> list[RunSubset]:
    """Every subset the run has trajectories in, with the numbers of evaluation `job_id` (None: not evaluated)."""
    found = []
    for subset, count in subsets_of_run(run):
        verdicts = run.trajectories.filter(subset.task_filter("task__")).aggregate(
            passed=Count("pk", filter=Q(success=True)), judged=Count("pk", filter=Q(success__isnull=False)))
        numbers = subset_numbers({run.pk: job_id}, subset).get(run.pk) if job_id else None
        found.append(RunSubset(subset, count, verdicts["passed"], verdicts["judged"], job_id, numbers))
    return found
