import pytest
from django.contrib.auth.models import Group

from accounts.roles import ADMIN, ANNOTATOR, REVIEWER, has_role
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def test_migrate_creates_the_role_groups():
    assert set(Group.objects.values_list("name", flat=True)) >= {ANNOTATOR, REVIEWER, ADMIN}


def test_login_and_logout_pages(client):
    UserFactory(username="ann")
    assert client.get("/accounts/login/").status_code == 200
    response = client.post("/accounts/login/", {"username": "ann", "password": "pw-for-tests-123"})
    assert response.status_code == 302
    assert b"ann" in client.get("/").content
    assert client.post("/accounts/logout/").status_code == 302
    assert b"Log in" in client.get("/").content


def test_wrong_password_is_refused(client):
    UserFactory(username="ann")
    response = client.post("/accounts/login/", {"username": "ann", "password": "nope"})
    assert response.status_code == 200
    assert b"match. Please try again" in response.content


def test_api_token_authentication(client):
    UserFactory(username="bot")
    response = client.post("/api/token/", {"username": "bot", "password": "pw-for-tests-123"})
    assert response.status_code == 200
    token = response.json()["token"]
    assert client.post("/api/token/", {"username": "bot", "password": "x"}).status_code == 400
    from rest_framework.test import APIClient

    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    assert api.get("/api/token/").status_code == 405  # authenticated, wrong method: the token was accepted


@pytest.mark.parametrize(
    ("groups", "role", "expected"),
    [
        ([], ANNOTATOR, False),
        ([ANNOTATOR], ANNOTATOR, True),
        ([ANNOTATOR], REVIEWER, False),
        ([REVIEWER], ANNOTATOR, True),
        ([REVIEWER], ADMIN, False),
        ([ADMIN], REVIEWER, True),
    ],
)
def test_roles(groups, role, expected):
    user = UserFactory()
    user.groups.set(Group.objects.filter(name__in=groups))
    assert has_role(user, role) is expected


def test_superuser_holds_every_role():
    user = UserFactory(is_superuser=True)
    assert all(has_role(user, role) for role in (ANNOTATOR, REVIEWER, ADMIN))
