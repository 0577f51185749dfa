"""Job rows and their queue messages: sent after commit, a 503 when the broker is down, sent again
by the sweeper when missing, stalled jobs shown with a retry."""

from datetime import timedelta
from unittest import mock

import pytest
from django.contrib.auth.models import Group
from django.utils import timezone
from rest_framework.test import APIClient

from infrastructure import jobs
from metrics.models import EvaluationJob
from tests.conftest import use_broker
from tests.factories import (
    AgentRunFactory,
    EvaluationJobFactory,
    GoldStepFactory,
    GoldTrajectoryFactory,
    StepFactory,
    TaskFactory,
    TrajectoryFactory,
    UserFactory,
)
from trajectories.models import ImportJob

pytestmark = pytest.mark.django_db(transaction=True)

DEAD_BROKER = "redis://127.0.0.1:9/0"  # the discard port: nothing listens, connections are refused


@pytest.fixture
def broker_down(monkeypatch):
    """Tasks are sent to a broker that refuses connections."""
    use_broker(DEAD_BROKER, monkeypatch)


@pytest.fixture
def reviewer():
    user = UserFactory(username="rita")
    user.groups.add(Group.objects.get(name="reviewer"))
    return user


@pytest.fixture
def run():
    run = AgentRunFactory(name="agent-a")
    task = TaskFactory()
    GoldStepFactory(gold=GoldTrajectoryFactory(task=task, status="approved"), index=1, text="click [1]")
    StepFactory(trajectory=TrajectoryFactory(run=run, task=task), index=1, action="click [1]")
    return run


def test_api_answers_503_and_keeps_the_job_when_the_broker_is_down(broker_down, reviewer, run):
    api = APIClient()
    api.force_authenticate(reviewer)
    response = api.post("/api/evaluations/", {"runs": ["agent-a"]}, format="json")
    assert response.status_code == 503, response.content
    body = response.json()
    job = EvaluationJob.objects.get()
    assert body["code"] == "workers_unreachable" and "saved" in body["detail"]
    assert body["job"] == {"kind": "evaluation", "id": job.pk, "url": f"/evaluations/{job.pk}/"}
    assert response["Retry-After"] == "30"
    assert job.status == "pending" and job.dispatched_at is None


def test_page_answers_503_with_a_link_to_the_saved_job(broker_down, client, reviewer, run):
    client.force_login(reviewer)
    response = client.post(f"/runs/{run.pk}/evaluate/", {"gold_policy": "approved",
                                                          "tau": "0.7", "window": "1"})
    job = EvaluationJob.objects.get()
    assert response.status_code == 503
    content = response.content.decode()
    assert "Background workers are unreachable" in content and f'href="/evaluations/{job.pk}/"' in content
    page = client.get(f"/evaluations/{job.pk}/").content.decode()
    assert "this job is saved and will start when they are back" in page


def test_upload_answers_503_and_keeps_the_import_job(broker_down, client, reviewer, shared_data):
    client.force_login(reviewer)
    with (shared_data / "trajectory-samples" / "llama3-8b_render_6.html").open("rb") as upload:
        response = client.post("/runs/import/", {"run": "outage", "paradigm": "step_by_step", "files": [upload]})
    assert response.status_code == 503
    job = ImportJob.objects.get()
    assert job.status == "pending" and job.dispatched_at is None
    assert client.get(f"/imports/{job.pk}/").status_code == 200


def test_sent_jobs_are_marked_and_run_in_process(reviewer, run):
    api = APIClient()
    api.force_authenticate(reviewer)
    response = api.post("/api/evaluations/", {"runs": ["agent-a"]}, format="json")
    assert response.status_code == 201
    job = EvaluationJob.objects.get()
    assert job.status == "done" and job.dispatched_at is not None and job.heartbeat_at is not None


def _job(status="pending", dispatched=None, heartbeat=None, age=0):
    job = EvaluationJobFactory(status=status)
    created = timezone.now() - timedelta(seconds=age)
    EvaluationJob.objects.filter(pk=job.pk).update(created_at=created, dispatched_at=dispatched, heartbeat_at=heartbeat)
    return EvaluationJob.objects.get(pk=job.pk)


def test_sweeper_finds_exactly_the_jobs_whose_message_is_missing(settings):
    settings.JOB_REDISPATCH_AFTER = 60
    now = timezone.now()
    never_sent = _job(age=5)
    before_restart = _job(status="running", dispatched=now - timedelta(seconds=30), age=30)
    after_restart = _job(dispatched=now - timedelta(seconds=5), age=5)
    silent = _job(status="running", dispatched=now - timedelta(seconds=300), heartbeat=now - timedelta(seconds=90),
                  age=300)
    busy = _job(status="running", dispatched=now - timedelta(seconds=300), heartbeat=now - timedelta(seconds=10),
                age=300)
    _job(status="done", age=500)
    _job(status="cancelled", age=500)

    def found(**kwargs):
        return set(jobs.jobs_to_send(EvaluationJob, now=now, **kwargs).values_list("pk", flat=True))

    restart = now - timedelta(seconds=10)
    assert found(broker_start=None, queue_empty=False) == {never_sent.pk}
    # Whatever was sent to the broker before it restarted is lost with its queue.
    assert found(broker_start=restart, queue_empty=False) == {never_sent.pk, before_restart.pk, silent.pk, busy.pk}
    # A silent job is resent only when its message cannot be waiting in the queue; a busy one is not.
    assert found(broker_start=None, queue_empty=True) == {never_sent.pk, silent.pk}
    assert after_restart.pk not in found(broker_start=restart, queue_empty=True)


def test_two_sweeps_send_a_missing_message_once():
    job = _job(age=5)
    sent = []
    with (mock.patch.object(jobs, "_send", side_effect=sent.append), mock.patch.object(jobs, "_queue_is_empty",
                                                                                        return_value=False),
          mock.patch.object(jobs, "broker_started_at", return_value=None)):
        assert jobs.sweep() == 1
        assert jobs.sweep() == 0
    assert [j.pk for j in sent] == [job.pk]
    assert EvaluationJob.objects.get(pk=job.pk).dispatched_at is not None


def test_a_sweep_that_cannot_send_leaves_the_job_for_the_next_one():
    job = _job(age=5)
    with (mock.patch.object(jobs, "_send", side_effect=ConnectionError("down")),
          mock.patch.object(jobs, "_queue_is_empty", return_value=False),
          mock.patch.object(jobs, "broker_started_at", return_value=None)):
        assert jobs.sweep() == 0
    assert EvaluationJob.objects.get(pk=job.pk).dispatched_at is None


def test_a_stalled_job_is_shown_with_a_retry_that_sends_it_again(client, reviewer, settings):
    settings.JOB_STALLED_AFTER = 120
    client.force_login(reviewer)
    old = timezone.now() - timedelta(minutes=10)
    job = _job(status="running", dispatched=old, heartbeat=old, age=900)
    assert job.is_stalled
    page = client.get(f"/evaluations/{job.pk}/").content.decode()
    assert "Stalled: no progress for 10 minutes." in page and f'action="/evaluations/{job.pk}/rerun/"' in page
    fresh = _job(status="running", dispatched=timezone.now(), heartbeat=timezone.now(), age=900)
    assert "Stalled" not in client.get(f"/evaluations/{fresh.pk}/").content.decode()


def test_a_stalled_import_is_retried_from_its_page(client, reviewer, settings):
    settings.JOB_STALLED_AFTER = 120
    client.force_login(reviewer)
    job = ImportJob.objects.create(run=AgentRunFactory(), created_by=reviewer)
    old = timezone.now() - timedelta(minutes=10)
    ImportJob.objects.filter(pk=job.pk).update(created_at=old, dispatched_at=old, heartbeat_at=old, status="running")
    page = client.get(f"/imports/{job.pk}/").content.decode()
    assert "Stalled" in page and f'action="/imports/{job.pk}/retry/"' in page
    response = client.post(f"/imports/{job.pk}/retry/")
    assert response.status_code == 302 and response.url == f"/imports/{job.pk}/"
    job.refresh_from_db()
    assert job.status == "done"  # in-process: the retry ran the (empty) import at once


def test_healthz_counts_jobs_that_wait_for_the_workers(client):
    _job(age=5)
    body = client.get("/healthz").json()
    assert body["jobs"]["waiting"]["evaluation"] == {"not_sent": 1, "stalled": 0}
    assert body["jobs"]["waiting"]["import"] == {"not_sent": 0, "stalled": 0}
