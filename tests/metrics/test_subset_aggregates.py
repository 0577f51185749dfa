"""A task subset's numbers are stored (aggregates of scope `subset`, `SubsetVerdictCount`) and after every kind of
change equal what `metrics.subsets` and `trajectories.selectors.verdict_counts` compute from scores and verdicts."""

import json

import pytest

from metrics.aggregation import METRICS
from metrics.models import Aggregate
from metrics.selectors.latest_evaluations import finished_evaluations
from metrics.selectors.leaderboard import LeaderboardFilters, Ranking
from metrics.services.aggregates import LENGTH_METRICS
from metrics.subsets import subset_numbers
from tests.factories import AgentRunFactory, JudgeConfigFactory, TaskFactory
from tests.metrics.reports import evaluate, trajectory, two_evaluated_runs
from trajectories.models import AgentRun, SubsetTally, SubsetVerdictCount, TaskResult, TaskSubset, Trajectory
from trajectories.selectors import verdict_counts
from trajectories.services.subsets import import_subset_bytes
from trajectories.services.tallies import refresh_tallies

pytestmark = pytest.mark.django_db


def _stored(name: str) -> dict:
    found: dict = {}
    for job_id, run_id, metric, mean, std, count, null_count, data in Aggregate.objects.filter(
            scope=Aggregate.Scope.SUBSET, group=name).values_list(
            "job_id", "run_id", "metric", "mean", "std", "count", "null_count", "data"):
        numbers = found.setdefault((job_id, run_id), {})
        numbers[metric] = data if metric in ("outcomes", "lengths") else (mean, std, count, null_count)
    return found


def _computed(subset: TaskSubset) -> dict:
    """Every finished evaluation's numbers on the subset, as `metrics.subsets` summarises them from scores."""
    found = {}
    for run_id, job_id in finished_evaluations().values_list("agentrun_id", "evaluationjob_id"):
        numbers = subset_numbers({run_id: job_id}, subset).get(run_id)
        if numbers is not None:
            found[job_id, run_id] = {
                **{metric: (summary.mean, summary.std, summary.count, summary.null_count)
                   for metric, summary in numbers.metrics.items()},
                # as stored: JSON, whose arrays read back as lists
                "outcomes": json.loads(json.dumps(numbers.outcomes)),
                "lengths": json.loads(json.dumps(numbers.lengths))}
    return found


def _held(subset: TaskSubset) -> dict:
    """{run id: its trajectories on the subset's tasks} of every run with a trajectory or a task result there."""
    on_tasks = subset.task_filter("task__")
    held = {run.pk: run.trajectories.filter(on_tasks).count() for run in AgentRun.objects.all()}
    return {run_id: count for run_id, count in held.items()
            if count or TaskResult.objects.filter(on_tasks, run_id=run_id).exists()}


def _counts(subset: TaskSubset) -> set:
    run_ids = AgentRun.objects.values_list("pk", flat=True)
    return set(verdict_counts(run_ids, subset.task_filter("task__")))


def _assert_stored_as_computed(subset: TaskSubset) -> dict:
    stored = _stored(subset.name)
    computed = _computed(subset)
    assert {key: {metric: numbers[metric] for metric in (*METRICS, *LENGTH_METRICS, "outcomes", "lengths")}
            for key, numbers in stored.items()} == computed
    assert set(SubsetVerdictCount.objects.filter(subset=subset).values_list(
        "run_id", "source", "site", "passed", "total")) == _counts(subset)
    assert dict(SubsetTally.objects.filter(subset=subset).values_list("run_id", "trajectories")) == _held(subset)
    return stored


def test_the_stored_subset_numbers_follow_every_change():
    made = two_evaluated_runs()
    lite = TaskSubset.objects.create(name="lite", benchmark="webarena", task_ids=["101", "201"])
    created = _assert_stored_as_computed(lite)
    assert len(created) == 2 and SubsetVerdictCount.objects.filter(subset=lite).exists()

    lite.task_ids = ["102", "201", "301"]  # its tasks change (the admin)
    lite.save()
    assert _assert_stored_as_computed(lite) != created

    evaluate(made.alpha, JudgeConfigFactory(name="second", backend="exact"))  # a new evaluation of one run
    assert len(_assert_stored_as_computed(lite)) == 3

    late = AgentRunFactory(name="late")  # a new run's trajectories and verdicts
    trajectory(late, made.tasks["a2"], ["click [1]"], success=True)
    TaskResult.objects.create(run=late, task=made.tasks["g1"], success=False)
    refresh_tallies([late.pk])
    evaluate(late)
    assert len(_assert_stored_as_computed(lite)) == 4

    import_subset_bytes(b'["101", "401"]', "lite.json", name="lite")  # replaced by a file
    lite.refresh_from_db()
    _assert_stored_as_computed(lite)

    lite.name = "renamed"
    lite.save()
    assert not _stored("lite") and _assert_stored_as_computed(lite)

    lite.delete()
    assert not Aggregate.objects.filter(scope=Aggregate.Scope.SUBSET).exists()
    assert not SubsetVerdictCount.objects.exists() and not SubsetTally.objects.exists()


def test_a_subset_of_tasks_no_run_has_stores_nothing():
    two_evaluated_runs()
    TaskFactory(task_id="999", number=999)
    empty = TaskSubset.objects.create(name="empty", benchmark="webarena", task_ids=["999"])
    assert _assert_stored_as_computed(empty) == {}
    assert not SubsetVerdictCount.objects.exists() and not SubsetTally.objects.exists()


def test_a_run_given_a_trajectory_by_a_single_write_is_listed_on_the_subset_at_the_next_read():
    made = two_evaluated_runs()
    TaskSubset.objects.create(name="lite", benchmark="webarena", task_ids=["101"])
    late = AgentRunFactory(name="late")
    Trajectory.objects.create(run=late, task=made.tasks["a1"], success=True)  # drops the run's tallies
    ranking = Ranking(LeaderboardFilters(subset="lite"))
    assert ranking.count() == 3
    assert sorted(row.name for row in ranking[:]) == ["alpha", "beta", "late"]
