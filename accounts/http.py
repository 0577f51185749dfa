"""Where a form may send the browser next: only to a path of this site (no other host, no script URL)."""

from django.shortcuts import resolve_url
from django.utils.http import url_has_allowed_host_and_scheme


def next_url(request, fallback: str, *args, **kwargs) -> str:
    """The request's `next` (POST, else GET) when it is a path on this site, else `fallback`
    (a URL name with its arguments, or a path)."""
    target = request.POST.get("next") or request.GET.get("next") or ""
    if target.startswith("/") and url_has_allowed_host_and_scheme(
        target, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        return target
    return resolve_url(fallback, *args, **kwargs)
