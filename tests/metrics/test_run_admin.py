"""A run's uploader (and admins) rename and delete it from its page; the confirmation says what goes with it."""

import pytest
from django.contrib.auth.models import Group

from metrics.models import EvaluationJob, TrajectoryScore
from metrics.services.evaluation import create_evaluation, start_evaluation
from tests.factories import AgentRunFactory, ImportJobFactory, JudgeConfigFactory, UserFactory
from trajectories.models import AgentRun, Step, Trajectory

pytestmark = pytest.mark.django_db


@pytest.fixture
def owner(client, run):
    user = UserFactory(username="owner")
    AgentRun.objects.filter(pk=run.pk).update(uploaded_by=user)
    client.force_login(user)
    return user


def test_the_owner_renames_a_run_and_a_bad_name_is_refused_with_the_reason(client, owner, run):
    job = ImportJobFactory(run=run, run_name=run.name)
    AgentRunFactory(name="taken")
    client.post(f"/runs/{run.pk}/rename/", {"name": "  renamed  "})
    run.refresh_from_db()
    job.refresh_from_db()
    assert run.name == job.run_name == "renamed"
    for name, reason in (("taken", "another run is called &#x27;taken&#x27;"), ("", "a run needs a name"),
                         ("x" * 201, "a run&#x27;s name has at most 200 characters; this one has 201")):
        page = client.post(f"/runs/{run.pk}/rename/", {"name": name}, follow=True).content.decode()
        assert f"Not renamed: {reason}." in page
    run.refresh_from_db()
    assert run.name == "renamed"


def test_deleting_asks_first_saying_what_goes_with_the_run(client, owner, run):
    judge = JudgeConfigFactory(name="exact", backend="exact")
    alone = create_evaluation(runs=[run], judge_config=judge)
    start_evaluation(alone)
    other = AgentRunFactory(name="other")
    shared = create_evaluation(runs=[run, other], judge_config=judge)
    page = client.get(f"/runs/{run.pk}/delete/").content.decode()
    assert "1 trajectory with 1 step and their scores" in page
    assert "1 evaluation of this run alone, and this run's scores in 1 evaluation shared with other runs" in page
    assert AgentRun.objects.filter(pk=run.pk).exists()

    response = client.post(f"/runs/{run.pk}/delete/")
    assert response.status_code == 302 and response.url == "/runs/"
    assert not AgentRun.objects.filter(pk=run.pk).exists()
    assert not Trajectory.objects.filter(run_id=run.pk).exists() and not Step.objects.filter(trajectory__run_id=run.pk).exists()
    assert not EvaluationJob.objects.filter(pk=alone.pk).exists() and not TrajectoryScore.objects.filter(job=alone).exists()
    assert list(EvaluationJob.objects.get(pk=shared.pk).runs.all()) == [other]


def test_only_the_owner_and_admins_may_rename_or_delete(client, run):
    client.force_login(UserFactory(username="someone"))
    assert client.get(f"/runs/{run.pk}/delete/").status_code == 403
    assert client.post(f"/runs/{run.pk}/rename/", {"name": "mine"}).status_code == 403
    assert "Delete…" not in client.get(f"/runs/{run.pk}/").content.decode()
    admin = UserFactory(username="boss")
    admin.groups.add(Group.objects.get(name="admin"))
    client.force_login(admin)
    assert "Delete…" in client.get(f"/runs/{run.pk}/").content.decode()
    client.post(f"/runs/{run.pk}/rename/", {"name": "by-admin"})
    assert AgentRun.objects.get(pk=run.pk).name == "by-admin"
