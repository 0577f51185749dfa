"""Password guessing is locked out per account and per address, on every way in that checks a password."""

import logging
from datetime import timedelta

import pytest
from axes.models import AccessAttempt, AccessFailureLog, AccessLog
from django.contrib.auth.models import Group
from django.urls import reverse

from accounts.roles import ADMIN
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

PASSWORD = "pw-for-tests-123"
LOGIN_PAGES = ["/accounts/login/", "/admin/login/"]


@pytest.fixture(autouse=True)
def _limit(settings):
    settings.AXES_FAILURE_LIMIT = 3
    settings.AXES_COOLOFF_TIME = timedelta(minutes=15)


def _login(client, url, username, password, address="10.0.0.1"):
    return client.post(url, {"username": username, "password": password}, REMOTE_ADDR=address)


@pytest.mark.parametrize("url", LOGIN_PAGES)
def test_an_account_is_locked_at_the_guessing_address_after_repeated_wrong_passwords(client, url, caplog):
    UserFactory(username="ann", is_staff=True)
    for _ in range(2):
        response = _login(client, url, "ann", "wrong", address="10.0.0.9")
        assert response.status_code == 200  # the form again, with its error
    with caplog.at_level(logging.WARNING, logger="accounts.security"):
        locked = _login(client, url, "ann", "wrong", address="10.0.0.9")
    assert locked.status_code == 429 and locked["Retry-After"] == "900"
    assert b"Too many failed logins" in locked.content and b"15 minutes" in locked.content
    assert any("locked out" in record.getMessage() and "ann" in record.getMessage() for record in caplog.records)
    # the right password from the guessing address no longer gets in
    assert _login(client, url, "ann", PASSWORD, address="10.0.0.9").status_code == 429
    assert "_auth_user_id" not in client.session
    # the owner, elsewhere, still does
    assert _login(client, url, "ann", PASSWORD, address="10.0.0.77").status_code == 302


def test_failures_spread_over_addresses_do_not_keep_the_owner_out(client, settings):
    settings.LOGIN_ACCOUNT_FAILURE_LIMIT = 30
    UserFactory(username="root", is_staff=True)
    for attempt in range(20):  # below every per-address limit, far above the per-pair one in total
        _login(client, "/accounts/login/", "root", "wrong", address=f"10.0.{attempt}.1")
    assert _login(client, "/accounts/login/", "root", PASSWORD, address="10.9.9.9").status_code == 302


def test_an_account_is_locked_for_everyone_only_after_far_more_failures_but_never_at_a_known_address(
        client, settings):
    settings.LOGIN_ACCOUNT_FAILURE_LIMIT = 6
    UserFactory(username="root", is_staff=True)
    assert _login(client, "/accounts/login/", "root", PASSWORD, address="10.5.5.5").status_code == 302
    client.logout()
    for attempt in range(6):
        _login(client, "/accounts/login/", "root", "wrong", address=f"10.0.{attempt}.1")
    assert _login(client, "/accounts/login/", "root", PASSWORD, address="10.9.9.9").status_code == 429
    # where the owner logged in before, the account is not locked
    assert _login(client, "/accounts/login/", "root", PASSWORD, address="10.5.5.5").status_code == 302


def test_an_address_that_only_took_api_tokens_is_known_and_never_locked_account_wide(client, settings):
    settings.LOGIN_ACCOUNT_FAILURE_LIMIT = 6
    UserFactory(username="bot")
    assert client.post("/api/token/", {"username": "bot", "password": PASSWORD},
                       REMOTE_ADDR="10.5.5.5").status_code == 200
    assert AccessLog.objects.filter(username="bot", ip_address="10.5.5.5").exists()
    for attempt in range(6):
        _login(client, "/accounts/login/", "bot", "wrong", address=f"10.0.{attempt}.1")
    assert client.post("/api/token/", {"username": "bot", "password": PASSWORD},
                       REMOTE_ADDR="10.9.9.9").status_code == 429
    assert client.post("/api/token/", {"username": "bot", "password": PASSWORD},
                       REMOTE_ADDR="10.5.5.5").status_code == 200
    assert _login(client, "/accounts/login/", "bot", PASSWORD, address="10.5.5.5").status_code == 302


def test_an_address_is_locked_after_guessing_several_accounts(client):
    for name in ("a1", "a2", "a3", "victim"):
        UserFactory(username=name)
    for name in ("a1", "a2", "a3"):
        _login(client, "/accounts/login/", name, "wrong", address="10.1.1.1")
    assert _login(client, "/accounts/login/", "victim", PASSWORD, address="10.1.1.1").status_code == 429
    # the same account from another address is fine: only the guessing address is locked
    assert _login(client, "/accounts/login/", "victim", PASSWORD, address="10.2.2.2").status_code == 302


def test_failures_are_forgotten_after_the_cool_off(client):
    UserFactory(username="ann")
    for _ in range(3):
        _login(client, "/accounts/login/", "ann", "wrong")
    AccessAttempt.objects.update(attempt_time=AccessAttempt.objects.get().attempt_time - timedelta(minutes=16))
    assert _login(client, "/accounts/login/", "ann", PASSWORD).status_code == 302


def test_a_proxy_forwarded_address_counts_only_behind_trusted_proxies(client, settings):
    UserFactory(username="ann")
    for n in range(3):  # a client forging X-Forwarded-For gains nothing without a trusted proxy
        client.post("/accounts/login/", {"username": f"x{n}", "password": "wrong"},
                    REMOTE_ADDR="10.3.3.3", HTTP_X_FORWARDED_FOR=f"192.0.2.{n}")
    assert AccessAttempt.objects.filter(ip_address="10.3.3.3").count() == 3
    settings.TRUSTED_PROXY_COUNT = 1
    client.post("/accounts/login/", {"username": "y", "password": "wrong"},
                REMOTE_ADDR="10.9.9.9", HTTP_X_FORWARDED_FOR="forged, 198.51.100.7")
    assert AccessAttempt.objects.filter(ip_address="198.51.100.7").exists()


def test_the_token_endpoint_is_locked_out_too(client):
    UserFactory(username="bot")
    for _ in range(2):
        assert client.post("/api/token/", {"username": "bot", "password": "wrong"}).status_code == 400
    for password in ("wrong", PASSWORD):  # the third failure locks; then even the right password is refused
        locked = client.post("/api/token/", {"username": "bot", "password": password})
        assert locked.status_code == 429 and locked["Retry-After"] == "900"
        assert locked.json()["code"] == "locked_out" and "Too many failed logins" in locked.json()["detail"]


def test_admins_see_failed_logins_and_unlock(client):
    UserFactory(username="ann")
    for _ in range(3):
        _login(client, "/accounts/login/", "ann", "wrong")
    assert _login(client, "/accounts/login/", "ann", PASSWORD).status_code == 429

    admin = UserFactory(username="root", is_staff=True, is_superuser=True)
    client.force_login(admin)
    attempts = client.get(reverse("admin:axes_accessattempt_changelist"))
    assert attempts.status_code == 200 and b"ann" in attempts.content
    failures = client.get(reverse("admin:axes_accessfailurelog_changelist"))
    assert failures.status_code == 200 and b"10.0.0.1" in failures.content
    assert AccessFailureLog.objects.filter(username="ann").count() == 4
    attempt = AccessAttempt.objects.get(username="ann")
    response = client.post(reverse("admin:axes_accessattempt_changelist"),
                           {"action": "delete_selected", "_selected_action": [attempt.pk], "post": "yes"})
    assert response.status_code == 302
    client.logout()
    assert _login(client, "/accounts/login/", "ann", PASSWORD).status_code == 302


def test_only_staff_reach_the_unlock_page(client):
    client.force_login(UserFactory(username="plain"))
    response = client.get(reverse("admin:axes_accessattempt_changelist"))
    assert response.status_code == 302 and "/admin/login/" in response["Location"]


def test_a_staff_admin_without_superuser_status_may_unlock(client):
    UserFactory(username="ann")
    for _ in range(3):
        _login(client, "/accounts/login/", "ann", "wrong")
    admin = UserFactory(username="ops", is_staff=True)
    admin.groups.add(Group.objects.get(name=ADMIN))
    client.force_login(admin)
    attempt = AccessAttempt.objects.get(username="ann")
    assert client.get(reverse("admin:axes_accessattempt_changelist")).status_code == 200
    client.post(reverse("admin:axes_accessattempt_changelist"),
                {"action": "delete_selected", "_selected_action": [attempt.pk], "post": "yes"})
    assert not AccessAttempt.objects.exists()
