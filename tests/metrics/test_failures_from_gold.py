"""The decisive step of a run's failures from the gold path of its latest evaluation."""

import pytest
from django.urls import reverse

from failures.models import FailureAttribution, SourceKind
from metrics.services import evaluation
from metrics.services.failure_attribution import NoEvaluation, attribute_from_gold
from tests.factories import (AgentRunFactory, GoldStepFactory, GoldTrajectoryFactory, JudgeConfigFactory, StepFactory,
                             TaskFactory, TrajectoryFactory, UserFactory)

pytestmark = pytest.mark.django_db


def _trajectory(run, actions, *, success=False, gold=("click [1]", "click [2]", "click [3]")):
    task = TaskFactory()
    golden = GoldTrajectoryFactory(task=task, status="approved")
    for index, text in enumerate(gold, start=1):
        GoldStepFactory(gold=golden, index=index, text=text)
    trajectory = TrajectoryFactory(run=run, task=task, success=success, step_count=len(actions))
    for index, action in enumerate(actions, start=1):
        StepFactory(trajectory=trajectory, index=index, action=action)
    return trajectory


def _evaluate(run, django_capture_on_commit_callbacks):
    job = evaluation.create_evaluation(runs=[run], judge_config=JudgeConfigFactory(name="exact", backend="exact"))
    with django_capture_on_commit_callbacks(execute=True):
        evaluation.start_evaluation(job)
    job.refresh_from_db()
    assert job.status == "done"
    return job


def test_each_failure_is_attributed_where_it_left_the_gold_path_for_good(django_capture_on_commit_callbacks):
    run = AgentRunFactory()
    # Gold 1 and 2 matched; step 3 leaves the path expecting gold 3 and nothing after comes back.
    left = _trajectory(run, ["click [1]", "click [2]", "scroll [down]", "type [5] [x]"])
    # Steps 2-3 leave and step 4 comes back (gold 2); step 4 then is the last step, before gold 3.
    stopped = _trajectory(run, ["click [1]", "scroll [down]", "scroll [up]", "click [2]"])
    followed = _trajectory(run, ["click [1]", "click [2]", "click [3]"])
    _trajectory(run, ["scroll [down]"], success=True)
    with pytest.raises(NoEvaluation, match="has no finished evaluation"):
        attribute_from_gold(run)
    job = _evaluate(run, django_capture_on_commit_callbacks)

    assert attribute_from_gold(run) == (2, 3)
    assert attribute_from_gold(run) == (2, 3)

    rows = {row.trajectory_id: row for row in FailureAttribution.objects.filter(source__kind=SourceKind.GOLD)}
    assert set(rows) == {left.pk, stopped.pk}
    assert rows[left.pk].step_index == 3
    assert rows[left.pk].note.startswith("left the gold path at step 3 and never came back; gold step 3 was expected")
    assert rows[left.pk].note.endswith(f"evaluation job {job.pk})")
    assert (rows[stopped.pk].step_index, rows[stopped.pk].note[:43]) == (
        4, "stopped on the gold path before gold step 3")
    assert followed.pk not in rows


def test_the_run_page_starts_it_for_the_runs_uploader(client, django_capture_on_commit_callbacks):
    uploader = UserFactory()
    run = AgentRunFactory(uploaded_by=uploader)
    _trajectory(run, ["click [1]", "scroll [down]"])
    url = reverse("metrics:run-failures-from-gold", args=[run.pk])
    client.force_login(UserFactory())
    assert client.post(url).status_code == 403

    client.force_login(uploader)
    assert "Nothing attributed from gold: run" in client.post(url, follow=True).content.decode()
    _evaluate(run, django_capture_on_commit_callbacks)
    page = client.post(url, follow=True).content.decode()

    assert "From gold: 1 of 1 failed trajectories scored against gold left its path for good." in page
    assert 'id="run-gold-form"' in page
