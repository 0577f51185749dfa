"""REST endpoints for judge configurations (admins manage them) and judge decisions (reviewers
confirm or overrule them, as on the judge audit page)."""

import django_filters
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_view
from rest_framework import serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response

from annotation.permissions import visible_decisions
from annotation.services.judge_audit import VERDICTS, audit_decision
from config.api import Conflict, IdFilter, IsAdminOrReadOnly
from config.api_schema import ErrorSerializer

from .calibration import DEFAULT_THRESHOLD
from .models import DecisionKind, JudgeBackend, JudgeConfig, JudgeDecision
from .services import JudgeConfigInUse, delete_judge_config, save_judge_config


class JudgeConfigSerializer(serializers.ModelSerializer):
    """The API key itself never passes through here: only the name of the variable holding it."""

    class Meta:
        model = JudgeConfig
        fields = ("id", "name", "backend", "model", "base_url", "api_key_env", "temperature", "options", "is_default",
                  "created_at")
        read_only_fields = ("id", "created_at")
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

    def perform_destroy(self, instance):
        try:
            delete_judge_config(instance)
        except JudgeConfigInUse as exc:
            raise Conflict(str(exc)) from None


class JudgeDecisionFilter(django_filters.FilterSet):
    kind = django_filters.ChoiceFilter(choices=DecisionKind.choices)
    backend = django_filters.ChoiceFilter(choices=JudgeBackend.choices)
    reviewed = django_filters.BooleanFilter(field_name="human_score", lookup_expr="isnull", exclude=True,
                                            help_text="true: with a human verdict; false: without.")
    failed = django_filters.BooleanFilter(method="filter_failed", help_text="true: decisions that failed.")
    job = IdFilter(method="filter_job", help_text="Decisions used by this evaluation job's scores.")
    trajectory = IdFilter(method="filter_trajectory", help_text="Decisions used to score this trajectory.")

    class Meta:
        model = JudgeDecision
        fields = ("kind", "backend", "model", "prompt_version", "reviewed", "failed", "job", "trajectory")

    def filter_failed(self, queryset, name, value):
        return queryset.exclude(error="") if value else queryset.filter(error="")

    def filter_job(self, queryset, name, value):
        return queryset.filter(pk__in=JudgeDecision.scores.through.objects.filter(
            trajectoryscore__job_id=value).values("judgedecision_id"))

    def filter_trajectory(self, queryset, name, value):
        return queryset.filter(pk__in=JudgeDecision.scores.through.objects.filter(
            trajectoryscore__trajectory_id=value).values("judgedecision_id"))


class JudgeDecisionSerializer(serializers.ModelSerializer):
    reviewed_by = serializers.CharField(source="reviewed_by.get_username", default=None, read_only=True,
                                        allow_null=True)
    effective_score = serializers.FloatField(read_only=True, allow_null=True,
                                             help_text="The human verdict when there is one, else the judge's score.")

    class Meta:
        model = JudgeDecision
        fields = ("id", "kind", "backend", "model", "prompt_version", "inputs", "score", "output", "rationale",
                  "error", "human_score", "human_note", "reviewed_by", "reviewed_at", "effective_score",
                  "prompt_tokens", "completion_tokens", "cost", "latency_ms", "calls", "created_at")
        read_only_fields = fields


class VerdictSerializer(serializers.Serializer):
    verdict = serializers.ChoiceField(choices=VERDICTS, help_text="Is the judge right? confirm or overrule.")
    tau = serializers.FloatField(min_value=0, max_value=1, default=DEFAULT_THRESHOLD,
                                 help_text="The score from which the judge's answer counts as yes.")
    gold_step = serializers.IntegerField(min_value=1, required=False,
                                         help_text="For a whole-trajectory decision: the cell's gold step (1-based).")
    agent_step = serializers.IntegerField(min_value=1, required=False,
                                          help_text="For a whole-trajectory decision: the cell's agent step (1-based).")
    note = serializers.CharField(required=False, allow_blank=True, default="")


@extend_schema(tags=["judges"])
class JudgeDecisionViewSet(viewsets.ReadOnlyModelViewSet):
    """Every answer a judge gave, with its inputs, cost and any human verdict. A decision holding gold
    step text is listed only to those who may read that gold (reviewers, its annotator...), as on the pages."""

    queryset = JudgeDecision.objects.select_related("reviewed_by").order_by("-created_at", "-pk")
    serializer_class = JudgeDecisionSerializer
    filterset_class = JudgeDecisionFilter
    ordering_fields = ("id", "created_at", "kind", "score", "human_score", "reviewed_at", "latency_ms", "cost",
                       "prompt_tokens", "completion_tokens")
    lookup_value_converter = "int"

    def get_queryset(self):
        return visible_decisions(self.request.user, super().get_queryset())

    @extend_schema(request=VerdictSerializer, responses={200: JudgeDecisionSerializer})
    @action(detail=True, methods=["post"])
    def verdict(self, request, pk=None):
        """A reviewer confirms or overrules the judge; the verdict then wins wherever the question recurs.
        Answers the decision that carries it (for a cell of a whole-trajectory decision, its pair decision)."""
        decision = self.get_object()
        body = VerdictSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        try:
            reviewed = audit_decision(decision.pk, reviewer=request.user, **body.validated_data)
        except ValueError as exc:
            raise ValidationError({"verdict": [str(exc)]}) from None
        return Response(JudgeDecisionSerializer(reviewed).data, status=status.HTTP_200_OK)
