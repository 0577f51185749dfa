"""What django-axes locks for a failed login (`accounts.lockout`), asked directly: the address a request
comes from, the lockout parameters for one request, and the locked-out answer."""

from datetime import timedelta

import pytest
from axes.models import AccessAttempt, AccessLog
from django.test import RequestFactory
from django.utils import timezone

from accounts.lockout import PAIR_AND_ADDRESS, client_address, lockout_message, lockout_parameters, lockout_response
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

ACCOUNT_WIDE = [*PAIR_AND_ADDRESS, "username"]


@pytest.fixture(autouse=True)
def _limits(settings):
    settings.LOGIN_ACCOUNT_FAILURE_LIMIT = 6
    settings.AXES_COOLOFF_TIME = timedelta(minutes=15)
    settings.TRUSTED_PROXY_COUNT = 0


def _login_request(username="ann", address="10.0.0.9"):
    return RequestFactory().post("/accounts/login/", {"username": username, "password": "wrong"},
                                 REMOTE_ADDR=address)


def _failures(username, address, count, minutes_ago):
    attempt = AccessAttempt.objects.create(username=username, ip_address=address, user_agent=address,
                                           failures_since_start=count, get_data="", post_data="", http_accept="",
                                           path_info="/accounts/login/")
    # attempt_time is set on creation (auto_now_add): moved back by an update.
    AccessAttempt.objects.filter(pk=attempt.pk).update(attempt_time=timezone.now() - timedelta(minutes=minutes_ago))


def test_failures_summed_over_addresses_reaching_the_limit_lock_the_account_everywhere():
    _failures("ann", "10.0.0.1", 4, minutes_ago=1)
    _failures("ann", "10.0.0.2", 2, minutes_ago=14)  # 4 + 2 = 6 = the limit, both inside the 15 minutes
    _failures("bob", "10.0.0.3", 50, minutes_ago=1)  # another account's failures count for it alone

    assert lockout_parameters(_login_request("ann")) == ACCOUNT_WIDE


def test_one_failure_under_the_limit_locks_only_the_pair_and_the_address():
    _failures("ann", "10.0.0.1", 5, minutes_ago=1)
    _failures("bob", "10.0.0.1", 50, minutes_ago=1)  # another account's failures are not ann's

    assert lockout_parameters(_login_request("ann")) == PAIR_AND_ADDRESS


def test_an_account_without_failures_is_not_locked_account_wide_even_at_a_limit_of_one(settings):
    settings.LOGIN_ACCOUNT_FAILURE_LIMIT = 1
    assert lockout_parameters(_login_request("ann")) == PAIR_AND_ADDRESS
    _failures("ann", "10.0.0.1", 1, minutes_ago=1)
    assert lockout_parameters(_login_request("ann")) == ACCOUNT_WIDE


def test_failures_older_than_the_cool_off_do_not_count_toward_the_account_wide_limit():
    _failures("ann", "10.0.0.1", 6, minutes_ago=16)  # just past the 15-minute cool-off
    assert lockout_parameters(_login_request("ann")) == PAIR_AND_ADDRESS

    _failures("ann", "10.0.0.2", 1, minutes_ago=14)
    _failures("ann", "10.0.0.3", 5, minutes_ago=14)
    assert lockout_parameters(_login_request("ann")) == ACCOUNT_WIDE


def test_an_address_the_account_logged_in_from_is_never_locked_account_wide():
    _failures("ann", "10.0.0.1", 60, minutes_ago=1)
    AccessLog.objects.create(username="ann", ip_address="10.5.5.5", user_agent="", http_accept="", path_info="/")

    assert lockout_parameters(_login_request("ann", address="10.5.5.5")) == PAIR_AND_ADDRESS
    assert lockout_parameters(_login_request("ann", address="10.6.6.6")) == ACCOUNT_WIDE
    # a login of another account from that address is no pass for this one
    AccessLog.objects.create(username="bob", ip_address="10.6.6.6", user_agent="", http_accept="", path_info="/")
    assert lockout_parameters(_login_request("ann", address="10.6.6.6")) == ACCOUNT_WIDE


def test_without_a_request_or_a_username_only_the_pair_and_the_address_are_locked():
    _failures("", "10.0.0.1", 60, minutes_ago=1)

    assert lockout_parameters(None, {"username": "ann"}) == PAIR_AND_ADDRESS  # a backend called without a request
    assert lockout_parameters(_login_request("")) == PAIR_AND_ADDRESS


def test_the_username_may_come_from_the_credentials():
    _failures("ann", "10.0.0.1", 6, minutes_ago=1)

    assert lockout_parameters(_login_request("someone-else"), {"username": "ann"}) == ACCOUNT_WIDE


@pytest.mark.parametrize(("proxies", "forwarded", "expected"), [
    (0, "198.51.100.7", "10.0.0.9"),  # no trusted proxy: the header is the client's word, ignored
    (1, "forged, 198.51.100.7", "198.51.100.7"),  # the address the one proxy saw: the rightmost
    (2, "forged, 198.51.100.7, 10.1.1.1", "198.51.100.7"),  # two proxies: second from the right
    (2, "198.51.100.7", "10.0.0.9"),  # fewer addresses than proxies: not forwarded by them all
    (1, " , 198.51.100.7 ,", "198.51.100.7"),  # empty parts and spaces are no addresses
    (1, None, "10.0.0.9"),  # behind a proxy, but no header: the address the request came from
])
def test_the_client_address_is_read_from_the_right_of_x_forwarded_for_behind_trusted_proxies(
        settings, proxies, forwarded, expected):
    settings.TRUSTED_PROXY_COUNT = proxies
    headers = {} if forwarded is None else {"HTTP_X_FORWARDED_FOR": forwarded}
    request = RequestFactory().get("/", REMOTE_ADDR="10.0.0.9", **headers)

    assert client_address(request) == expected


def test_the_locked_out_answer_says_how_long_as_json_on_the_api_and_as_a_page_elsewhere(settings):
    settings.AXES_COOLOFF_TIME = timedelta(minutes=90)
    message = ("Too many failed logins for this account or from this address: logging in is locked for 90 minutes. "
               "An admin can unlock it sooner.")
    assert lockout_message() == message

    api = lockout_response(RequestFactory().post("/api/token/"))
    assert (api.status_code, api["Content-Type"]) == (429, "application/json")
    assert api.content.decode() == f'{{"detail": "{message}", "code": "locked_out"}}'

    request = RequestFactory().post("/admin/login/")
    request.user = UserFactory(username="signed-in-as-ann")  # e.g. logging in to the admin as another account
    page = lockout_response(request)
    html = page.content.decode()
    assert page.status_code == 429 and page["Content-Type"].startswith("text/html")
    assert message in html and '<a href="/accounts/login/">Back to the login page</a>' in html
    assert "signed-in-as-ann" in html  # rendered for the request, like every page: its account in the header
