"""The API tokens page and the lockout page in Debian's Chromium."""

import pytest
from django.conf import settings
from playwright.sync_api import expect
from rest_framework.test import APIClient

from accounts.models import ApiToken
from tests.factories import UserFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _log_in(page, live_server, username, password="pw-for-tests-123"):
    page.goto(f"{live_server.url}/accounts/login/?next=/accounts/tokens/")
    page.fill("#id_username", username)
    page.fill("#id_password", password)
    page.click("button[type=submit]")


def test_make_copy_use_and_revoke_a_token(page, live_server, tmp_path):
    UserFactory(username="dev")
    _log_in(page, live_server, "dev")
    expect(page.get_by_role("heading", name="API tokens")).to_be_visible()
    page.fill("#id_name", "laptop <b>bold</b>")
    page.fill("#id_expires_in_days", "30")
    page.click("text=Make token")
    token = page.locator("#new-token").input_value()
    assert len(token) == 64
    expect(page.locator("table.api-tokens")).to_contain_text("laptop <b>bold</b>")  # escaped, shown as text
    page.screenshot(path=str(tmp_path / "tokens.png"), full_page=True)

    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    assert api.get("/api/tasks/").status_code == 200
    page.reload()
    expect(page.locator("#new-token")).to_have_count(0)  # shown once
    expect(page.locator("table.api-tokens")).not_to_contain_text("never")  # its use is recorded

    page.click("text=Revoke")
    expect(page.locator(".messages")).to_contain_text("revoked")
    assert not ApiToken.objects.exists()
    assert api.get("/api/tasks/").status_code == 401


def test_the_login_page_says_why_it_refuses_after_repeated_failures(page, live_server):
    UserFactory(username="dev")
    for _ in range(settings.AXES_FAILURE_LIMIT):
        _log_in(page, live_server, "dev", "wrong")
    expect(page.locator("h1")).to_have_text("Login locked")
    expect(page.locator(".error")).to_contain_text("Too many failed logins")
