"""Login protection (django-axes): which address a request comes from and what a locked-out client sees."""

from django.conf import settings
from django.http import JsonResponse
from django.shortcuts import render
from django.urls import reverse


def client_address(request) -> str | None:
    """The client's address: REMOTE_ADDR, or behind TRUSTED_PROXY_COUNT proxies the address the
    outermost of them saw (taken from the right of X-Forwarded-For, which a client cannot forge)."""
    proxies = settings.TRUSTED_PROXY_COUNT
    forwarded = [part.strip() for part in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",") if part.strip()]
    if proxies and len(forwarded) >= proxies:
        return forwarded[-proxies]
    return request.META.get("REMOTE_ADDR")


def lockout_message() -> str:
    minutes = round(settings.AXES_COOLOFF_TIME.total_seconds() / 60)
    return (
        f"Too many failed logins for this account or from this address: logging in is locked for "
        f"{minutes} minutes. An admin can unlock it sooner."
    )


def lockout_response(request, original_response=None, credentials=None):
    """429 with the same words on the login pages (HTML) and the API (JSON)."""
    if request.path.startswith("/api/"):
        return JsonResponse({"detail": lockout_message(), "code": "locked_out"}, status=429)
    return render(request, "accounts/locked_out.html",
                  {"message": lockout_message(), "login_url": reverse("login")}, status=429)
