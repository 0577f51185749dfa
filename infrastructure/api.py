"""API-wide pieces: one error body for every endpoint, pagination, and the role permissions.

Every error answers `{"detail": sentence, "code": word}`; a validation error adds `errors`,
a map from field path (`steps[2].text`, `runs`) to its message, the shape gold edits use too.
"""

import logging

import django_filters
from django import forms
from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.core.signals import got_request_exception
from django.http import Http404, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from drf_spectacular.utils import extend_schema_field
from rest_framework import exceptions, filters, permissions, serializers, status
from rest_framework.pagination import PageNumberPagination
from rest_framework.response import Response
from rest_framework.settings import api_settings
from rest_framework.views import exception_handler as drf_exception_handler

from accounts.roles import ADMIN, has_role
from infrastructure.error_bodies import REQUEST_LIMITS, request_limit_error, workers_unreachable_body
from infrastructure.jobs import WorkersUnreachable

log = logging.getLogger(__name__)

MAX_ID = 2**63 - 1  # the largest bigint primary key


@extend_schema_field({"type": "integer", "minimum": 1, "maximum": MAX_ID})
class IdFilter(django_filters.NumberFilter):
    """A row id: a whole number within the database's range, else a 400 (never a database error)."""

    field_class = forms.IntegerField

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("min_value", 1)
        kwargs.setdefault("max_value", MAX_ID)
        super().__init__(*args, **kwargs)


class NameField(serializers.SlugRelatedField):
    """A row named by a text field; a NUL character is a 400, not a database error (PostgreSQL refuses it)."""

    def to_internal_value(self, data):
        if isinstance(data, str) and "\x00" in data:
            raise exceptions.ValidationError("Null characters are not allowed.", code="null_characters_not_allowed")
        return super().to_internal_value(data)


class OrderingFilter(filters.OrderingFilter):
    """`?ordering=` on the columns a list view names in `ordering_fields`, and on nothing else.

    DRF would otherwise offer every serializer field, computed ones included, and ordering by
    one of those is a database error."""

    def get_valid_fields(self, queryset, view, context=None):
        if getattr(view, "ordering_fields", None) is None:
            return []
        return super().get_valid_fields(queryset, view, context or {})


class Pagination(PageNumberPagination):
    """`?page=N&page_size=M`, at most 500 rows a page."""

    page_size_query_param = "page_size"
    max_page_size = 500


def valid_query(serializer_class, request) -> serializers.Serializer:
    """The request's query string read by `serializer_class`; a 400 naming each bad parameter otherwise."""
    query = serializer_class(data=request.query_params)
    query.is_valid(raise_exception=True)
    return query


def _flatten(detail, path: str = "") -> dict[str, str]:
    """Nested DRF errors as {field path: message}: `steps[0].text`, `runs`, `parameters`."""
    if isinstance(detail, dict):
        flat = {}
        for key, value in detail.items():
            if isinstance(key, int):
                child = f"{path}[{key}]"
            else:
                child = f"{path}.{key}" if path else str(key)
            flat.update(_flatten(value, child))
        return flat
    if isinstance(detail, list) and any(isinstance(item, (dict, list)) for item in detail):
        flat = {}
        for index, item in enumerate(detail):
            flat.update(_flatten(item, f"{path}[{index}]"))
        return flat
    messages = detail if isinstance(detail, list) else [detail]
    return {path or api_settings.NON_FIELD_ERRORS_KEY: " ".join(str(message) for message in messages)}


def error_body(exc: exceptions.APIException) -> dict:
    if isinstance(exc, exceptions.ValidationError):
        errors = _flatten(exc.detail)
        detail = "; ".join(message if field == api_settings.NON_FIELD_ERRORS_KEY else f"{field}: {message}"
                           for field, message in errors.items())
        return {"detail": detail or "invalid input", "code": "invalid", "errors": errors}
    code = getattr(exc.detail, "code", None) or exc.default_code
    return {"detail": str(exc.detail), "code": code}


def exception_handler(exc, context):
    """DRF's handler with one body shape; anything unexpected is logged and answered 500 alike."""
    if isinstance(exc, WorkersUnreachable):
        return Response(workers_unreachable_body(exc), status=status.HTTP_503_SERVICE_UNAVAILABLE,
                        headers={"Retry-After": "30"})
    if isinstance(exc, Http404):
        exc = exceptions.NotFound(*exc.args)
    elif isinstance(exc, PermissionDenied):
        exc = exceptions.PermissionDenied(*exc.args)
    elif isinstance(exc, REQUEST_LIMITS):
        body, status_code = request_limit_error(exc)
        return Response(body, status=status_code)
    response = drf_exception_handler(exc, context)
    if response is not None:
        response.data = error_body(exc)
        return response
    request = context.get("request")
    log.exception("API error on %s", getattr(request, "path", "?"), exc_info=exc)
    got_request_exception.send(sender=None, request=request)
    return Response({"detail": "server error", "code": "server_error"},
                    status=status.HTTP_500_INTERNAL_SERVER_ERROR)


@csrf_exempt  # like DRF's views: API clients authenticate by token, not by form
def not_found(request):
    """Any path under /api/ that no endpoint answers: the same JSON body, not an HTML page."""
    return JsonResponse({"detail": f"no API endpoint at {request.path}", "code": "not_found"},
                        status=status.HTTP_404_NOT_FOUND)


class Conflict(exceptions.APIException):
    """The request fits the API but not the stored state (e.g. deleting what others refer to)."""

    status_code = status.HTTP_409_CONFLICT
    default_detail = "conflicts with the stored state"
    default_code = "conflict"


class IsAdminOrReadOnly(permissions.BasePermission):
    """Every account reads; only admins write (judge configurations)."""

    message = "only admins may change this"

    def has_permission(self, request, view):
        if not request.user.is_authenticated:
            return False
        return request.method in permissions.SAFE_METHODS or has_role(request.user, ADMIN)


class PublicLeaderboardOrAuthenticated(permissions.BasePermission):
    """Anonymous reads only when PUBLIC_LEADERBOARD is on."""

    def has_permission(self, request, view):
        if request.user.is_authenticated:
            return True
        return settings.PUBLIC_LEADERBOARD and request.method in permissions.SAFE_METHODS
