"""`next=` on forms sends back only to a path of this site: never another host, never a script URL."""

import pytest
from django.contrib.auth.models import Group
from django.test import RequestFactory

from accounts.http import next_url
from accounts.roles import REVIEWER
from tests.factories import AgentRunFactory, StepFactory, TrajectoryFactory, UserFactory

pytestmark = pytest.mark.django_db

HOSTILE = ["javascript:alert(1)", "https://evil.example/", "//evil.example/x", "/\\evil.example", "http:evil.example",
           "JavaScript:alert(document.domain)", " javascript:alert(1)", "data:text/html,hi", "runs/", ""]


@pytest.mark.parametrize("target", HOSTILE)
def test_the_helper_refuses_anything_but_a_local_path(target):
    request = RequestFactory().post("/x/", {"next": target})
    assert next_url(request, "home") == "/"


@pytest.mark.parametrize("target", ["/runs/", "/runs/3/?page=2#top", "/annotation/judge-audit/?kind=step_match"])
def test_the_helper_keeps_a_local_path(target):
    assert next_url(RequestFactory().post("/x/", {"next": target}), "home") == target


@pytest.mark.parametrize("target", HOSTILE)
def test_a_refused_evaluation_never_leaves_the_site(client, target):
    """The evaluate form takes no `next`: a refused request shows the run's page again, with its errors."""
    user = UserFactory()
    run = AgentRunFactory(uploaded_by=user)
    StepFactory(trajectory=TrajectoryFactory(run=run), index=1)
    client.force_login(user)
    response = client.post(f"/runs/{run.pk}/evaluate/", {"judge": "no-such-judge", "next": target})
    assert response.status_code == 400 and "Location" not in response
    assert "Evaluation not started" in response.content.decode()
    empty = AgentRunFactory(uploaded_by=user)
    response = client.post(f"/runs/{empty.pk}/evaluate/", {"next": target})
    assert response.status_code == 302 and response["Location"] == f"/runs/{empty.pk}/"


@pytest.mark.parametrize("target", ["javascript:alert(1)", "https://testserver/annotation/", "//evil.example/"])
def test_the_judge_audit_verdict_never_leaves_the_site(client, target):
    reviewer = UserFactory()
    reviewer.groups.add(Group.objects.get(name=REVIEWER))
    client.force_login(reviewer)
    response = client.post("/annotation/judge-audit/verdict/", {"decision": "0", "next": target})
    assert response.status_code == 302 and response["Location"] == "/annotation/judge-audit/"


@pytest.mark.parametrize("target", ["javascript:alert(1)", "https://evil.example/", "//evil.example/"])
def test_login_and_logout_never_leave_the_site(client, target):
    UserFactory(username="ann")
    response = client.post("/accounts/login/", {"username": "ann", "password": "pw-for-tests-123", "next": target})
    assert response.status_code == 302 and response["Location"] == "/"
    response = client.post("/accounts/logout/", {"next": target})
    assert response.status_code == 302 and response["Location"] == "/"


def test_login_goes_on_to_a_local_next(client):
    UserFactory(username="ann")
    response = client.post("/accounts/login/", {"username": "ann", "password": "pw-for-tests-123", "next": "/runs/"})
    assert response["Location"] == "/runs/"
