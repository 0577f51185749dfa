"""A judge's endpoint that does not answer at all (it went down after its test) stops the job at the
first request with one message naming the endpoint, rather than retrying every question and failing
every trajectory."""

import html

import pytest
from django.test import Client
from django.urls import reverse

from judges import questions as q
from judges.backends import make_backend
from judges.backends.base import EndpointUnreachable
from judges.endpoint_checks import run_endpoint_test
from judges.models import OutcomeJob
from judges.outcome_judging import create_outcome_job, run_outcome_job
from judges.services import backend_spec
from judges.steps import JudgeStep
from metrics.models import EvaluationJob, TrajectoryScore
from metrics.services import evaluation
from tests.api.conftest import client_for, make_users
from tests.factories import (
    AgentRunFactory,
    GoldStepFactory,
    GoldTrajectoryFactory,
    JudgeConfigFactory,
    StepFactory,
    TaskFactory,
    TrajectoryFactory,
)

from .conftest import FAST_RETRIES, _free_port

pytestmark = pytest.mark.django_db


@pytest.fixture
def endpoint() -> str:
    """An address nothing listens on: each connection is refused."""
    return f"http://127.0.0.1:{_free_port()}/v1"


@pytest.fixture
def config(endpoint):
    return JudgeConfigFactory(name="gone", backend="openai", model="m", base_url=endpoint, tested=True,
                              options={**FAST_RETRIES, "judge_outcomes": False})


@pytest.fixture
def run():
    run = AgentRunFactory(name="shopper")
    for number in range(3):
        task = TaskFactory(intent=f"Open item {number}")
        gold = GoldTrajectoryFactory(task=task, status="approved")
        GoldStepFactory(gold=gold, index=1, text=f"Click on the 'Item {number}' link")
        trajectory = TrajectoryFactory(run=run, task=task, final_answer="done")
        StepFactory(trajectory=trajectory, index=1, action=f"click [{number}] where [{number}] is link 'Item'")
    return run


def expected(endpoint: str) -> str:
    return f"the judge's endpoint {endpoint} did not answer: "


def test_the_backend_raises_at_the_first_refused_connection(config, endpoint):
    backend = make_backend(backend_spec(config))
    question = q.step_match(JudgeStep("Click on the 'Orders' link"), JudgeStep("click [12]"))
    with pytest.raises(EndpointUnreachable) as unreachable:
        backend.answer([question])
    message = str(unreachable.value)
    assert message.startswith(expected(endpoint)) and len(message) > len(expected(endpoint))
    assert "APIConnectionError" not in message


def test_an_evaluation_fails_early_with_one_clear_message(config, endpoint, run, settings,
                                                           django_capture_on_commit_callbacks):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    with django_capture_on_commit_callbacks(execute=True):
        job = evaluation.create_evaluation(runs=[run], judge_config=config)
        evaluation.start_evaluation(job)
    job.refresh_from_db()
    assert job.status == EvaluationJob.Status.FAILED and job.finished_at is not None
    [error] = job.errors
    assert error.startswith(expected(endpoint))
    assert not TrajectoryScore.objects.filter(job=job).exists()  # nothing half-scored: a re-run scores all
    # A chunk still queued finds the job failed and asks nothing.
    evaluation.evaluate_chunk(job.pk, [(trajectory.pk, None) for trajectory in run.trajectories.all()])
    assert not TrajectoryScore.objects.filter(job=job).exists()
    users = make_users()
    followed = client_for(users["reviewer"]).get(f"/api/evaluations/{job.pk}/").json()
    assert (followed["status"], followed["errors"]) == ("failed", [error])
    page = Client()
    page.force_login(users["reviewer"])
    assert f"Stopped: {error}" in html.unescape(page.get(reverse("metrics:job", args=[job.pk])).content.decode())


def test_an_outcome_job_fails_with_the_same_message(config, endpoint, run):
    job = create_outcome_job(run, config, quiet=True)
    run_outcome_job(job.pk)
    job.refresh_from_db()
    assert job.status == "failed"
    assert job.error.startswith(expected(endpoint)) and "APIConnectionError" not in job.error
    assert OutcomeJob.objects.get().judged == 0


def test_the_endpoint_test_reports_it_once(config, endpoint):
    report = run_endpoint_test(config)
    assert report["ok"] is False
    assert report["error"].startswith(expected(endpoint))
    asked = [row for row in report["questions"] if row["asked"]]
    assert asked and all(row["error"] == report["error"] for row in asked)
