"""One account cannot fill the queue: unfinished imports and evaluations per account are limited."""

import json

import pytest
from django.contrib.auth.models import Group
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from rest_framework.test import APIClient

from accounts.roles import ADMIN
from metrics.models import EvaluationJob
from tests.factories import (
    AgentRunFactory, EvaluationJobFactory, ImportJobFactory, StepFactory, TrajectoryFactory, UserFactory,
)
from trajectories.models import AgentRun, ImportJob

pytestmark = pytest.mark.django_db


@pytest.fixture
def limits(settings):
    settings.JOB_LIMITS_PER_ACCOUNT = {"import": 2, "evaluation": 2}


def _api(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


def _upload():
    return SimpleUploadedFile("t.json", json.dumps({"schema": "trajectory/v1"}).encode())


def test_imports_beyond_the_limit_are_refused_until_one_finishes(limits):
    owner, other = UserFactory(username="owner"), UserFactory(username="other")
    waiting = [ImportJobFactory(created_by=owner, status=status) for status in ("pending", "running")]
    ImportJobFactory(created_by=owner, status="done")
    refused = _api(owner).post(reverse("api-run-import"), {"run": "r", "files": [_upload()], "background": "true"},
                               format="multipart")
    assert refused.status_code == 429 and refused.json()["code"] == "too_many_jobs"
    assert refused["Retry-After"] == "30"
    assert "2 imports waiting or running" in refused.json()["detail"]
    assert not AgentRun.objects.filter(name="r").exists() and ImportJob.objects.count() == 3
    # another account is not held up, nor an admin
    assert _api(other).post(reverse("api-run-import"), {"run": "o", "files": [_upload()]},
                            format="multipart").status_code == 200
    ImportJob.objects.filter(pk=waiting[0].pk).update(status="done")
    assert _api(owner).post(reverse("api-run-import"), {"run": "r", "files": [_upload()]},
                            format="multipart").status_code == 200


def test_the_upload_page_says_why(client, limits):
    owner = UserFactory(username="owner")
    for _ in range(2):
        ImportJobFactory(created_by=owner, status="pending")
    client.force_login(owner)
    page = client.post(reverse("trajectories:upload"), {"run": "r", "paradigm": "step_by_step", "files": [_upload()]})
    assert page.status_code == 200 and "2 imports waiting or running" in page.content.decode()


def test_evaluations_beyond_the_limit_are_refused_but_not_for_admins(limits):
    owner = UserFactory(username="owner")
    run = AgentRunFactory(name="mine", uploaded_by=owner)
    StepFactory(trajectory=TrajectoryFactory(run=run), index=1)
    for _ in range(2):
        EvaluationJobFactory(created_by=owner, status="running")
    refused = _api(owner).post(reverse("api-evaluations"), {"runs": ["mine"]}, format="json")
    assert refused.status_code == 429 and "2 evaluations waiting or running" in refused.json()["detail"]
    assert refused["Retry-After"] == "30"
    assert EvaluationJob.objects.count() == 2
    admin = UserFactory(username="adam")
    admin.groups.add(Group.objects.get(name=ADMIN))
    for _ in range(2):
        EvaluationJobFactory(created_by=admin, status="running")
    assert _api(admin).post(reverse("api-evaluations"), {"runs": ["mine"]}, format="json").status_code == 201
