"""OpenAPI pieces: the shared error body in every operation's answers, and shapes reused by endpoints.

Kept apart from `infrastructure.api` because the schema generator imports DRF's generic views, which
import the pagination class named in the settings.
"""

import copy

from django.core.exceptions import FieldDoesNotExist
from drf_spectacular import openapi
from drf_spectacular.utils import OpenApiResponse, inline_serializer
from rest_framework import permissions, serializers


class ErrorSerializer(serializers.Serializer):
    detail = serializers.CharField(help_text="What went wrong, in one sentence.")
    code = serializers.CharField(help_text="A stable word: invalid, not_found, permission_denied, ...")
    errors = serializers.DictField(
        child=serializers.CharField(), required=False,
        help_text="Validation errors only: field path (`steps[2].text`) to its message.",
    )


def _model_allows_blank(field: serializers.Field) -> bool:
    model = getattr(getattr(field.parent, "Meta", None), "model", None)
    try:
        return model is not None and model._meta.get_field(field.source).blank
    except FieldDoesNotExist:
        return False


class AutoSchema(openapi.AutoSchema):
    """Every operation documents the shared error body for the errors it can answer with.

    Read-only choice fields of a model field with blank=True (an outcome reason, a gold step's
    action type) are documented with the empty string they can hold: DRF drops `allow_blank`
    from read-only fields.
    """

    def _map_serializer_field(self, field, direction, bypass_extensions=False):
        if isinstance(field, serializers.ChoiceField) and field.read_only and not field.allow_blank \
                and _model_allows_blank(field):
            field = copy.copy(field)
            field.allow_blank = True
        return super()._map_serializer_field(field, direction, bypass_extensions)

    def _get_response_bodies(self, direction="response"):
        responses = super()._get_response_bodies(direction)
        for code in self._error_codes():
            if str(code) not in responses:
                responses[str(code)] = self._get_response_for_code(ErrorSerializer, str(code), direction=direction)
        return responses

    def _error_codes(self) -> list[int]:
        query = {parameter["name"] for parameter in self._get_parameters() if parameter["in"] == "query"}
        codes = []
        if self.method in ("POST", "PUT", "PATCH", "DELETE") or query:
            codes.append(400)
        if not all(isinstance(p, permissions.AllowAny) for p in self.view.get_permissions()):
            codes += [401, 403]
        if "{" in self.path or "page" in query:  # an unknown object, or a page past the end
            codes.append(404)
        if self.view.get_throttles():  # API_THROTTLE_* rates, or a login locked out
            codes.append(429)
        return codes


# 409 of an optimistic-lock write (both versions given back) or of a write the status forbids.
CONFLICT_RESPONSE = OpenApiResponse(
    inline_serializer("Conflict", {
        "detail": serializers.CharField(),
        "code": serializers.CharField(help_text="version_conflict, or status"),
        "current": serializers.JSONField(required=False, help_text="What is stored now (stale version)."),
        "yours": serializers.JSONField(required=False, help_text="What you sent (stale version)."),
    }),
    description="Saved by someone else since you read it, or not allowed in its current status.",
)

