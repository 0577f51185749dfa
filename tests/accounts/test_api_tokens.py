"""API tokens: hashed, named, expiring, their last use recorded, revoked from the user's page."""

from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone
from knox.crypto import hash_token
from rest_framework.test import APIClient

from accounts.models import ApiToken
from accounts.services import create_api_token
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

PASSWORD = "pw-for-tests-123"


def _api(token=None) -> APIClient:
    client = APIClient()
    if token:
        client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    return client


def test_the_token_endpoint_answers_a_named_expiring_token_stored_only_as_a_hash():
    user = UserFactory(username="bot")
    response = _api().post("/api/token/", {"username": "bot", "password": PASSWORD, "name": "CI uploads",
                                           "expires_in_days": 7}, format="json")
    assert response.status_code == 200
    body = response.json()
    assert body["name"] == "CI uploads" and len(body["token"]) == 64
    stored = ApiToken.objects.get(user=user)
    assert stored.digest == hash_token(body["token"]) and stored.name == "CI uploads"
    assert timedelta(days=6, hours=23) < stored.expiry - timezone.now() <= timedelta(days=7)
    with connection.cursor() as cursor:  # the token's text is nowhere in the table
        cursor.execute("SELECT * FROM accounts_apitoken")
        assert not any(body["token"] in str(value) for row in cursor.fetchall() for value in row)


def test_the_token_endpoint_defaults_and_limits(settings):
    UserFactory(username="bot")
    body = _api().post("/api/token/", {"username": "bot", "password": PASSWORD}).json()
    expiry = ApiToken.objects.get().expiry
    assert timedelta(days=settings.API_TOKEN_TTL_DAYS - 1) < expiry - timezone.now()
    assert body["name"].startswith("API token ")
    too_long = _api().post("/api/token/", {"username": "bot", "password": PASSWORD, "expires_in_days": 100000})
    assert too_long.status_code == 400 and "expires_in_days" in too_long.json()["errors"]


def test_a_token_works_records_its_last_use_and_stops_at_expiry():
    user = UserFactory()
    token, text = create_api_token(user, name="t")
    assert token.last_used is None
    assert _api(text).get("/api/tasks/").status_code == 200
    token.refresh_from_db()
    assert token.last_used is not None
    ApiToken.objects.filter(pk=token.pk).update(expiry=timezone.now() - timedelta(seconds=1))
    expired = _api(text).get("/api/tasks/")
    assert expired.status_code == 401 and expired.json()["code"] == "authentication_failed"


def test_the_number_of_live_tokens_per_user_is_bounded(settings):
    settings.API_TOKEN_LIMIT_PER_USER = 2
    UserFactory(username="bot")
    for _ in range(2):
        assert _api().post("/api/token/", {"username": "bot", "password": PASSWORD}).status_code == 200
    refused = _api().post("/api/token/", {"username": "bot", "password": PASSWORD})
    assert refused.status_code == 400 and "revoke one first" in refused.json()["detail"]


def test_the_tokens_page_shows_a_new_token_once_and_revokes(client):
    user = UserFactory()
    client.force_login(user)
    assert client.get("/accounts/tokens/").status_code == 200
    made = client.post("/accounts/tokens/", {"name": "laptop", "expires_in_days": 30}, follow=True)
    assert made.redirect_chain == [("/accounts/tokens/", 302)]  # a reload does not make another token
    assert made["Cache-Control"].startswith("max-age=0")
    text = made.context["new_token"]
    assert text.encode() in made.content and b"laptop" in made.content
    page = client.get("/accounts/tokens/")
    assert text.encode() not in page.content and b"laptop" in page.content
    assert ApiToken.objects.filter(user=user).count() == 1
    assert _api(text).get("/api/tasks/").status_code == 200

    token = ApiToken.objects.get(user=user)
    assert client.post(f"/accounts/tokens/{token.token_key}/revoke/").status_code == 302
    assert not ApiToken.objects.exists()
    assert _api(text).get("/api/tasks/").status_code == 401


def test_nobody_revokes_someone_elses_token(client):
    token, text = create_api_token(UserFactory(), name="theirs")
    client.force_login(UserFactory())
    response = client.post(f"/accounts/tokens/{token.token_key}/revoke/", follow=True)
    assert b"No such token among yours" in response.content
    assert ApiToken.objects.filter(pk=token.pk).exists()
    assert b"theirs" not in client.get("/accounts/tokens/").content


def test_the_tokens_page_needs_an_account(client):
    response = client.get("/accounts/tokens/")
    assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")


def test_the_tokens_page_refuses_a_bad_expiry(client):
    client.force_login(UserFactory())
    response = client.post("/accounts/tokens/", {"name": "x", "expires_in_days": 0})
    assert response.status_code == 200 and response.context["new_token"] is None
    assert response.context["form"].errors["expires_in_days"]
    assert not ApiToken.objects.exists()


def test_a_token_needs_a_name_on_the_page_and_a_blank_one_is_refused_by_the_api(client, django_user_model):
    from rest_framework.test import APIClient

    from accounts.models import ApiToken

    user = django_user_model.objects.create_user("named", password="a-long-password-1")
    client.force_login(user)
    page = client.post("/accounts/tokens/", {"name": "   ", "expires_in_days": 30}).content.decode()
    assert "Give the token a name, to recognise it later." in page
    api = APIClient().post("/api/token/", {"username": "named", "password": "a-long-password-1", "name": "  "},
                           format="json")
    assert api.status_code == 400 and api.json()["errors"] == {"name": "This field may not be blank."}
    assert not ApiToken.objects.filter(user=user).exists()
