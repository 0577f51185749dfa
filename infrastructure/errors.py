"""The 403, 404 and 405 pages in the site's layout, with its navigation and a way back.

Django renders them through `handler403` / `handler404`, except that with DEBUG on it shows its
own technical page for a 404; the middleware below answers with the site's page in every mode
(a developer still finds the exception in the log). API paths keep their JSON errors.
"""

from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.http import Http404
from django.shortcuts import render
from django.utils.http import url_has_allowed_host_and_scheme

API_PREFIX = "/api/"


def _back(request) -> str:
    """Where "Go back" leads: the page the visitor came from on this site, else the home page."""
    referer = request.headers.get("Referer", "")
    if referer and url_has_allowed_host_and_scheme(referer, allowed_hosts={request.get_host()},
                                                   require_https=request.is_secure()):
        return referer
    return "/"


def _reason(exception) -> str:
    """The exception's own sentence when a view gave one (Django's resolver messages are not for visitors)."""
    message = exception.args[0] if exception is not None and exception.args else ""
    if not isinstance(message, str) or message.endswith("matches the given query."):
        return ""
    return message


def page_not_found(request, exception=None):
    return render(request, "404.html", {"reason": _reason(exception), "back": _back(request),
                                        "path": request.path}, status=404)


def permission_denied(request, exception=None):
    return render(request, "403.html", {"reason": _reason(exception), "back": _back(request),
                                        "path": request.path}, status=403)


def csrf_failure(request, reason=""):
    """A form refused by the CSRF check (an expired page, or a post from another site), in the site's layout."""
    return render(request, "403.html", {
        "reason": "this form was refused because the page it came from has expired or is from another site; "
                  "reload the page and send it again",
        "back": _back(request), "path": request.path,
    }, status=403)


class SiteErrorPagesMiddleware:
    """Pages (not the API) answer a missing page or a refusal with the site's own error pages."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        if (settings.DEBUG and response.status_code == 404 and getattr(request, "resolver_match", None) is None
                and not request.path.startswith(API_PREFIX)):
            # No URL matched: with DEBUG on, Django answered with its technical page.
            return page_not_found(request)
        if response.status_code == 405 and not response.content and not request.path.startswith(API_PREFIX):
            # A form's address opened as a page: Django's answer is empty, the browser shows a blank page.
            page = render(request, "405.html", {"back": _back(request), "path": request.path}, status=405)
            page["Allow"] = response["Allow"]
            return page
        return response

    def process_exception(self, request, exception):
        if request.path.startswith(API_PREFIX):
            return None
        if isinstance(exception, Http404):
            return page_not_found(request, exception)
        if isinstance(exception, PermissionDenied):
            return permission_denied(request, exception)
        return None
