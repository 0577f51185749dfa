"""API rate limits, from the settings: per address without an account, per account with one."""

import pytest
from rest_framework.test import APIClient

from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def _get(client, address, path):
    return client.get(path, REMOTE_ADDR=address)


def test_anonymous_requests_are_limited_per_address(low_rates, settings):
    settings.PUBLIC_LEADERBOARD = True  # an endpoint anonymous visitors may read
    client = APIClient()
    answers = [_get(client, "10.5.0.1", "/api/leaderboard/").status_code for _ in range(4)]
    assert answers == [200, 200, 200, 429]
    throttled = _get(client, "10.5.0.1", "/api/leaderboard/")
    assert throttled.json()["code"] == "throttled" and int(throttled["Retry-After"]) > 0
    assert _get(client, "10.5.0.2", "/api/leaderboard/").status_code == 200  # another address has its own budget


def test_authenticated_requests_are_limited_per_account(low_rates):
    first, second = APIClient(), APIClient()
    first.force_authenticate(UserFactory())
    second.force_authenticate(UserFactory())
    assert [_get(first, "10.6.0.1", "/api/tasks/").status_code for _ in range(6)] == [200] * 5 + [429]
    assert _get(first, "10.6.0.9", "/api/tasks/").status_code == 429  # a new address does not help an account
    assert _get(second, "10.6.0.1", "/api/tasks/").status_code == 200


def test_the_token_endpoint_has_its_own_lower_limit(low_rates):
    client = APIClient()
    answers = [client.post("/api/token/", {"username": "x", "password": "y"}, REMOTE_ADDR="10.7.0.1").status_code
               for _ in range(3)]
    assert answers == [400, 400, 429]


def test_the_schema_documents_the_429(client):
    schema = client.get("/api/schema/?format=json").json()
    assert "429" in schema["paths"]["/api/tasks/"]["get"]["responses"]
    assert "429" in schema["paths"]["/api/token/"]["post"]["responses"]
