"""REST endpoints for judge configurations (admins manage them). Judge decisions are served by
`metrics.api_decisions`: who may read one depends on the scores it was used for."""

from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_view
from rest_framework import serializers, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import APIException, ValidationError
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response

from infrastructure.api import Conflict, IsAdminOrReadOnly
from infrastructure.api_schema import ErrorSerializer

from .endpoint_checks import JudgeNotChoosable, run_endpoint_test
from .models import JudgeConfig
from .services import JudgeConfigInUse, delete_judge_config, save_judge_config


class JudgeRefused(APIException):
    """A job asked of a judge no job may start on yet: 400 with the reason's code (`judge_untested`...)."""

    status_code = 400

    def __init__(self, refusal: JudgeNotChoosable):
        super().__init__(str(refusal), refusal.code)


class JudgeConfigSerializer(serializers.ModelSerializer):
    """The API key itself never passes through here: only the name of the variable holding it."""

    class Meta:
        model = JudgeConfig
        fields = ("id", "name", "backend", "model", "base_url", "api_key_env", "temperature", "options", "is_default",
                  "last_test", "created_at")
        read_only_fields = ("id", "last_test", "created_at")
        # One default at most: saving a new default unmarks the old one instead of refusing.
        extra_kwargs = {"is_default": {"validators": []}}

    def validate_options(self, value):
        if not isinstance(value, dict):
            raise serializers.ValidationError("must be an object")
        return value

    def validate_temperature(self, value):
        if not 0 <= value <= 2:
            raise serializers.ValidationError("must be from 0 to 2")
        return value

    def create(self, validated_data):
        return self._store(JudgeConfig(), validated_data)

    def update(self, instance, validated_data):
        return self._store(instance, validated_data)

    def _store(self, config: JudgeConfig, data: dict) -> JudgeConfig:
        for field, value in data.items():
            setattr(config, field, value)
        try:
            return save_judge_config(config)
        except ValueError as exc:
            raise ValidationError(str(exc)) from None


@extend_schema_view(destroy=extend_schema(responses={204: None, 409: OpenApiResponse(ErrorSerializer)}))
@extend_schema(tags=["judges"])
class JudgeConfigViewSet(viewsets.ModelViewSet):
    """Named judges (backend, model, options). Everyone reads; admins create, change and delete."""

    queryset = JudgeConfig.objects.order_by("name")
    serializer_class = JudgeConfigSerializer
    permission_classes = [IsAdminOrReadOnly]
    filterset_fields = ("backend", "is_default")
    ordering_fields = ("name", "backend", "model", "created_at")
    lookup_value_converter = "int"

    @extend_schema(request=None, responses={200: OpenApiResponse(description="The test's report, as `last_test`.")})
    @action(detail=True, methods=["post"], permission_classes=[IsAuthenticated, IsAdminOrReadOnly])
    def test(self, request, pk=None):
        """Ask the endpoint one small question of each kind: per question whether its answer parsed, the
        structured-output mode that worked, latency, tokens and cost. Kept as the configuration's
        `last_test`; evaluations and outcome jobs refuse to start on a configuration whose last test failed."""
        return Response(run_endpoint_test(self.get_object()))

    def perform_destroy(self, instance):
        try:
            delete_judge_config(instance)
        except JudgeConfigInUse as exc:
            raise Conflict(str(exc)) from None
