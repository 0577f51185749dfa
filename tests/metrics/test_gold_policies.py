"""Which gold a score is measured against: the reference gold by default, never "the newest"."""

import pytest
from django.contrib.auth.models import Group
from django.core.management import CommandError, call_command
from django.urls import reverse
from rest_framework.test import APIClient

from accounts.roles import REVIEWER
from annotation.errors import GoldPermissionDenied
from annotation.models import GoldTrajectory
from annotation.services.reference import set_reference
from metrics import exports
from metrics.models import EvaluationJob, GoldPolicy, parse_gold_policy
from metrics.selectors.jobs_and_scores import scores_off_reference, stale_scores, tasks_without_reference
from metrics.services import evaluation
from metrics.tasks import run_evaluation
from tests.factories import AgentRunFactory, TaskFactory, UserFactory
from tests.metrics.reports import exact_judge, gold, trajectory

pytestmark = pytest.mark.django_db


@pytest.fixture
def reviewer():
    user = UserFactory(username="rita", is_superuser=True)
    user.groups.add(Group.objects.get_or_create(name=REVIEWER)[0])
    return user


def _evaluate(run, policy=GoldPolicy.REFERENCE, **fields) -> EvaluationJob:
    job = evaluation.create_evaluation(runs=[run], judge_config=exact_judge(), gold_policy=policy, **fields)
    run_evaluation(job.pk)
    job.refresh_from_db()
    return job


@pytest.fixture
def two_approved():
    """A task with two approved golds; the second, approved later, fits the agent better."""
    task = TaskFactory(task_id="7", number=7)
    first = gold(task, ["click [1]", "click [9]"])
    second = gold(task, ["click [1]", "click [2]"])
    run = AgentRunFactory(name="agent")
    trajectory(run, task, ["click [1]", "click [2]"])
    return task, first, second, run


def test_the_first_approved_gold_is_the_reference_and_a_later_one_does_not_replace_it(two_approved):
    task, first, second, run = two_approved

    job = _evaluate(run)

    assert [g.pk for g in GoldTrajectory.objects.filter(task=task, is_reference=True)] == [first.pk]
    score = job.scores.get()
    assert (score.gold_id, score.step_success) == (first.pk, 0.5)
    row = exports.scores_frame({run.pk: job.pk}).iloc[0]
    assert (row["gold_id"], row["gold_policy"], bool(row["gold_is_reference"])) == (first.pk, "reference", True)


def test_a_reviewer_changes_the_reference_and_re_evaluation_follows(two_approved, reviewer, client):
    task, first, second, run = two_approved
    job = _evaluate(run)
    with pytest.raises(GoldPermissionDenied):
        set_reference(second.pk, user=first.annotator)

    set_reference(second.pk, user=reviewer)

    assert scores_off_reference(job) == 1
    assert stale_scores([job.pk]) == {job.pk: 1}  # announced on the run page and the leaderboard
    client.force_login(reviewer)
    assert "no longer the task's reference" in client.get(reverse("metrics:job", args=[job.pk])).content.decode()
    rerun = evaluation.rerun_evaluation(job)
    run_evaluation(rerun.pk)
    assert rerun.scores.get().gold_id == second.pk and scores_off_reference(rerun) == 0
    assert job.scores.get().gold_id == first.pk  # the replaced evaluation is kept as it was
    assert stale_scores([rerun.pk]) == {}


def test_best_keeps_the_best_approved_gold_per_trajectory_and_records_the_choice(two_approved):
    task, first, second, run = two_approved

    job = _evaluate(run, GoldPolicy.BEST)

    score = job.scores.get()
    assert (score.gold_id, score.step_success, job.total, job.done) == (second.pk, 1.0, 1, 1)
    choice = score.details["gold_choice"]
    assert [(c["gold_id"], c["step_success"], c["chosen"]) for c in choice] == [
        (second.pk, 1.0, True), (first.pk, 0.5, False)]


def test_each_and_annotator_policies_are_kept(two_approved):
    task, first, second, run = two_approved

    assert {s.gold_id for s in _evaluate(run, GoldPolicy.EACH).scores.all()} == {first.pk, second.pk}
    annotated = _evaluate(run, GoldPolicy.ANNOTATOR, gold_annotator=second.annotator)
    assert annotated.scores.get().gold_id == second.pk  # that annotator's newest gold


def test_tasks_with_approved_gold_but_no_reference_are_listed(two_approved, reviewer, client):
    task, first, second, run = two_approved
    GoldTrajectory.objects.filter(task=task).update(is_reference=False)

    job = _evaluate(run)

    assert job.scores.get().gold_id is None
    assert list(tasks_without_reference(job)) == [task]
    api = APIClient()
    api.force_authenticate(reviewer)
    assert api.get(reverse("api-evaluation", args=[job.pk])).json()["tasks_without_reference"] == ["7"]
    client.force_login(reviewer)
    page = client.get(reverse("metrics:job", args=[job.pk])).content.decode()
    assert "Tasks with approved gold but no reference gold" in page


@pytest.mark.parametrize(("text", "expected"), [
    ("reference", ("reference", "")), ("approved", ("reference", "")), ("best", ("best", "")),
    ("each", ("each", "")), ("annotator=paper", ("annotator", "paper")), ("annotator:paper", ("annotator", "paper")),
])
def test_policy_spellings(text, expected):
    assert parse_gold_policy(text) == expected


@pytest.mark.parametrize("text", ["newest", "each=paper", ""])
def test_unknown_policies_are_refused(text):
    with pytest.raises(ValueError, match="expected reference, best, each or annotator=NAME"):
        parse_gold_policy(text)


def test_the_command_and_the_api_accept_every_spelling(two_approved, reviewer, client):
    task, first, second, run = two_approved
    with pytest.raises(CommandError, match="unknown gold policy 'newest'"):
        call_command("evaluate", "--run", "agent", "--gold", "newest")
    call_command("evaluate", "--run", "agent", "--gold", f"annotator={second.annotator.username}")
    assert EvaluationJob.objects.get().gold_annotator == second.annotator
    client.force_login(reviewer)
    response = client.post(reverse("api-evaluations"), {"runs": ["agent"], "gold_policy": "approved"},
                           content_type="application/json")
    assert response.status_code in (201, 202), response.content
    assert response.json()["gold_policy"] == "reference"


def test_the_trajectory_page_names_the_gold_and_the_policy(two_approved, reviewer, client):
    task, first, second, run = two_approved
    job = _evaluate(run, GoldPolicy.BEST)
    score = job.scores.get()
    client.force_login(reviewer)

    html = client.get(f"/trajectories/{score.trajectory_id}/").content.decode()

    assert f'#{second.pk}</a> by annotator (v1)' in html and "policy best of the approved golds" in html
    assert "Best of 2 approved golds" in html and "<strong>chosen</strong>" in html
    reference = _evaluate(run)
    html = client.get(f"/trajectories/{score.trajectory_id}/?job={reference.pk}").content.decode()
    assert f'#{first.pk}</a> by annotator (v1, reference)' in html
