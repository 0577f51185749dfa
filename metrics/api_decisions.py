"""REST endpoints for judge decisions (reviewers confirm or overrule them, as on the judge audit page).

They live in metrics, above judges and annotation: a decision holding gold text is shown according
to the gold of the scores it was used for (`metrics.permissions.visible_decisions`), and decisions
are filtered by the evaluation job or trajectory they scored."""

import django_filters
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response

from annotation.services.judge_audit import VERDICTS, audit_decision, check_may_audit
from infrastructure.api import IdFilter
from judges.calibration import DEFAULT_THRESHOLD
from judges.models import DecisionKind, JudgeBackend, JudgeDecision
from metrics.permissions import visible_decisions


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
        check_may_audit(request.user)
        body = VerdictSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        try:
            reviewed = audit_decision(decision.pk, reviewer=request.user, **body.validated_data)
        except ValueError as exc:
            raise ValidationError({"verdict": [str(exc)]}) from None
        return Response(JudgeDecisionSerializer(reviewed).data, status=status.HTTP_200_OK)
