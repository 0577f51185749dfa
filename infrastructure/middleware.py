"""Request-level guards: NUL characters refused at the door, unreachable workers answered 503, every 429
saying when to come back.

Requests carrying a NUL character are refused at the door.

PostgreSQL text cannot hold NUL, so a NUL in a path, query or form field would otherwise reach
a lookup or a save as a database error (a 500). JSON bodies are checked by the API's fields.
Reading the form here also meets Django's request limits (files, fields, size) first: under
/api/ they are answered in the API's JSON body, like every other API error.
"""

from django.http import HttpResponseBadRequest, JsonResponse
from django.shortcuts import render

from infrastructure.error_bodies import REQUEST_LIMITS, request_limit_error, workers_unreachable_body
from infrastructure.jobs import WorkersUnreachable

FORM_TYPES = ("application/x-www-form-urlencoded", "multipart/form-data")


def _null_field(request) -> str | None:
    if "\x00" in request.path:
        return "path"
    fields = [("query", request.GET)]
    if request.method == "POST" and request.content_type in FORM_TYPES:
        fields.append(("form", request.POST))
    for where, data in fields:
        for key, values in data.lists():
            if "\x00" in key or any("\x00" in value for value in values):
                return f"{where} field '{key.replace(chr(0), '')}'"
    return None


class RejectNullCharactersMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        try:
            field = _null_field(request)
        except REQUEST_LIMITS as error:
            if not request.path.startswith("/api/"):
                raise
            body, status = request_limit_error(error)
            return JsonResponse(body, status=status)
        if field is None:
            return self.get_response(request)
        message = f"Null characters are not allowed ({field})."
        if request.path.startswith("/api/"):
            return JsonResponse({"detail": message, "code": "null_characters_not_allowed"}, status=400)
        return HttpResponseBadRequest(message, content_type="text/plain; charset=utf-8")


class WorkersUnreachableMiddleware:
    """A job saved while the broker is down: say so with a 503 and a link to the job, never a 500."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_exception(self, request, exception):
        if not isinstance(exception, WorkersUnreachable):
            return None
        if request.path.startswith("/api/"):
            response = JsonResponse(workers_unreachable_body(exception), status=503)
        else:
            response = render(request, "workers_unreachable.html", {"job": exception.job, "message": str(exception)},
                              status=503)
        response["Retry-After"] = RETRY_AFTER_SECONDS
        return response


RETRY_AFTER_SECONDS = "30"


class RetryAfterMiddleware:
    """Every 429 (rate limits, lockouts, job limits, on pages and the API) says when to try again: a client
    that is not told retries at once. An answer that knows its wait (a throttle, a lockout) keeps its own."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        if response.status_code == 429 and not response.has_header("Retry-After"):
            response["Retry-After"] = RETRY_AFTER_SECONDS
        return response
