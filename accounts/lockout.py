"""Login protection (django-axes): which address a request comes from and what a locked-out client sees."""

from axes.helpers import get_client_username
from axes.models import AccessAttempt, AccessLog
from django.conf import settings
from django.contrib.auth.signals import user_logged_in
from django.db.models import Sum
from django.http import HttpRequest, JsonResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils import timezone


def client_address(request) -> str | None:
    """The client's address: REMOTE_ADDR, or behind TRUSTED_PROXY_COUNT proxies the address the
    outermost of them saw (taken from the right of X-Forwarded-For, which a client cannot forge)."""
    proxies = settings.TRUSTED_PROXY_COUNT
    forwarded = [part.strip() for part in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",") if part.strip()]
    if proxies and len(forwarded) >= proxies:
        return forwarded[-proxies]
    return request.META.get("REMOTE_ADDR")


PAIR_AND_ADDRESS = [["username", "ip_address"], "ip_address"]


def lockout_parameters(request, credentials=None) -> list:
    """Lock a guessing (account, address) pair and a guessing address; lock an account for everyone only
    after LOGIN_ACCOUNT_FAILURE_LIMIT failures, and never at an address it has logged in from before, so
    that nobody elsewhere can keep its owner out."""
    if not isinstance(request, HttpRequest):
        return PAIR_AND_ADDRESS
    username = get_client_username(request, credentials)
    if not username:
        return PAIR_AND_ADDRESS
    if AccessLog.objects.filter(username=username, ip_address=client_address(request)).exists():
        return PAIR_AND_ADDRESS
    since = timezone.now() - settings.AXES_COOLOFF_TIME
    failures = (AccessAttempt.objects.filter(username=username, attempt_time__gte=since)
                .aggregate(n=Sum("failures_since_start"))["n"] or 0)
    if failures >= settings.LOGIN_ACCOUNT_FAILURE_LIMIT:
        return [*PAIR_AND_ADDRESS, "username"]
    return PAIR_AND_ADDRESS


def record_login(request: HttpRequest, user) -> None:
    """A password login that made no session (an API token) counts as a login from its address, as a page
    login does: that address is then never locked account-wide by others' failures."""
    user_logged_in.send(sender=type(user), request=request, user=user)


def lockout_seconds() -> int:
    """The Retry-After of a lockout: a failure restarts the wait, so this is the soonest a retry can pass."""
    return round(settings.AXES_COOLOFF_TIME.total_seconds())


def lockout_message() -> str:
    minutes = round(settings.AXES_COOLOFF_TIME.total_seconds() / 60)
    return (
        f"Too many failed logins for this account or from this address: logging in is locked for "
        f"{minutes} minutes. An admin can unlock it sooner."
    )


def lockout_response(request, original_response=None, credentials=None):
    """429 with the same words on the login pages (HTML) and the API (JSON)."""
    if request.path.startswith("/api/"):
        response = JsonResponse({"detail": lockout_message(), "code": "locked_out"}, status=429)
    else:
        response = render(request, "accounts/locked_out.html",
                          {"message": lockout_message(), "login_url": reverse("login")}, status=429)
    response["Retry-After"] = str(lockout_seconds())
    return response
