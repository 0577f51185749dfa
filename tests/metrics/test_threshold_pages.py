"""τ is read by one rule on every page: one error, at the field, with the text typed kept."""

import pytest
from django.contrib.auth.models import Group

from annotation.models import GoldCheckJob
from judges.calibration import parse_threshold, read_threshold
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

TOO_LONG = "9" * 400


@pytest.mark.parametrize(("typed", "tau"), [("0.55", 0.55), (" 1 ", 1.0), ("0", 0.0), ("1e-1", 0.1)])
def test_a_number_from_0_to_1_is_read(typed, tau):
    assert parse_threshold(typed) == tau


@pytest.mark.parametrize(("typed", "reason"), [
    ("abc", "τ is a number from 0 to 1, such as 0.7; 'abc' is not a number"),
    ("1.5", "τ must be from 0 to 1; 1.5 is outside that range"),
    ("-0", None),
    (TOO_LONG, "τ must be from 0 to 1; 99999999999999999999… is outside that range"),
    ("nan", "τ must be from 0 to 1; nan is outside that range"),
    ("inf", "τ must be from 0 to 1; inf is outside that range"),
])
def test_anything_else_is_refused_saying_why(typed, reason):
    if reason is None:
        assert parse_threshold(typed) == 0.0
        return
    with pytest.raises(ValueError) as refused:
        parse_threshold(typed)
    assert str(refused.value) == reason


def test_pages_use_the_default_when_nothing_is_typed():
    assert read_threshold(None) == (0.7, "") and read_threshold("  ") == (0.7, "")
    assert read_threshold("x") == (0.7, "τ is a number from 0 to 1, such as 0.7; 'x' is not a number; showing τ = 0.7")


@pytest.fixture
def reviewer(client):
    user = UserFactory(username="rita")
    user.groups.add(Group.objects.get(name="reviewer"))
    client.force_login(user)
    return user


@pytest.mark.parametrize("path", ["/annotation/judge-quality/", "/annotation/agreement/", "/annotation/judge-audit/"])
@pytest.mark.parametrize("typed", ["abc", TOO_LONG])
def test_a_bad_tau_is_said_once_at_its_field_and_kept(client, reviewer, path, typed):
    page = client.get(path, {"tau": typed}).content.decode()
    assert page.count('id="tau-error"') == 1
    assert ("is not a number" in page) != ("outside that range" in page)
    assert f'name="tau" value="{typed}"' in page
    assert "showing τ = 0.7" in page


def test_a_bad_tau_starts_no_agreement_report(client, reviewer):
    response = client.post("/annotation/agreement/", {"tau": "2"})
    assert response.status_code == 302 and "tau=2" in response.url
    assert not GoldCheckJob.objects.exists()
    assert "τ must be from 0 to 1; 2 is outside that range" in client.get(response.url).content.decode()
