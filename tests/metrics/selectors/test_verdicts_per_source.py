"""One read of every source's verdicts: the named sources' rows and the built-in four under theirs."""

import pytest

from metrics.selectors.verdicts_per_source import benchmark_verdicts, sources_of, verdicts_of
from tests.factories import AgentRunFactory, TaskFactory, TrajectoryFactory
from tests.metrics.verdict_data import three_voices
from trajectories.models import Verdict, VerdictSource

pytestmark = pytest.mark.django_db


def test_built_in_sources_are_rows_with_their_verdicts(django_capture_on_commit_callbacks):
    made = three_voices(django_capture_on_commit_callbacks)
    run, disputed = made["run"], made["disputed"]
    found = {(verdict.source.name, verdict.task_id, verdict.grader): verdict for verdict in verdicts_of([run.pk])}
    assert found[("harness", disputed.task_id, "")].success is False
    assert found[("offline check", disputed.task_id, "")].success is True
    gina = found[("human graders", disputed.task_id, "gina")]
    assert (gina.success, gina.label, gina.score, gina.trajectory_id) == (True, "correct", 1.0, disputed.pk)
    partial = found[("human graders", made["agreed"].task_id, "hugo")]
    assert (partial.success, partial.label) == (False, "partially correct")
    assert len(found) == 2 + 2 + 4  # the exact judge gives no answer verdict of an LLM
    assert {source.kind for source in sources_of(list(found.values()))} == {"harness", "rule_check", "human"}
    assert VerdictSource.objects.filter(name="harness", kind="harness").count() == 1


def test_named_verdicts_with_graders_and_labels_and_not_executable():
    run = AgentRunFactory(name="SeeAct")
    task, other = TaskFactory(), TaskFactory()
    trajectory = TrajectoryFactory(run=run, task=task, success=None)
    experts = VerdictSource.objects.create(kind="human", name="AgentRewardBench experts")
    labels = VerdictSource.objects.create(kind="human", name="Online-Mind2Web human labels")
    Verdict.objects.create(run=run, task=task, trajectory=trajectory, source=experts, grader="a1", success=True,
                           labels={"side_effect": False, "optimality": 3, "looping": False})
    Verdict.objects.create(run=run, task=task, trajectory=trajectory, source=experts, grader="a2", success=False)
    Verdict.objects.create(run=run, task=other, source=labels, success=None, label="not_executable")
    found = verdicts_of([run.pk])
    assert [(verdict.source.name, verdict.grader, verdict.success) for verdict in found] == [
        ("AgentRewardBench experts", "a1", True), ("AgentRewardBench experts", "a2", False),
        ("Online-Mind2Web human labels", "", None)]
    assert found[0].labels["optimality"] == 3 and found[0].trajectory_id == trajectory.pk
    assert found[2].counted_success is False
    assert verdicts_of([run.pk], task_pks=[other.pk]) == [found[2]]
    assert benchmark_verdicts(run.benchmark) == found and benchmark_verdicts("elsewhere") == []
