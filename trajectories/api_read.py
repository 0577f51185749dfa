"""Read endpoints for tasks, runs and trajectories (uploads are in `api.py`)."""

import json

import django_filters
from django.conf import settings
from django.core.paginator import Paginator
from django.urls import reverse
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_field
from rest_framework import serializers, viewsets
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response
from rest_framework.utils.urls import replace_query_param

from infrastructure.api import IdFilter

from . import selectors
from .models import AgentRun, OutcomeStatus, Paradigm, Step, Task, Trajectory, Verdict


class SiteFilter(django_filters.CharFilter):
    """A site of a task's `sites` list; the quoted name keeps "shopping" from matching "shopping_admin"."""

    def __init__(self, field_name="sites", **kwargs):
        super().__init__(field_name=field_name, lookup_expr="icontains", **kwargs)

    def filter(self, qs, value):
        return super().filter(qs, json.dumps(value) if value else value)


class TaskFilter(django_filters.FilterSet):
    site = SiteFilter(help_text="A WebArena site, e.g. `shopping_admin` (multi-site tasks match each of theirs).")
    search = django_filters.CharFilter(field_name="intent", lookup_expr="icontains", help_text="Words of the intent.")

    class Meta:
        model = Task
        fields = ("benchmark", "task_id", "site", "unachievable", "search")


class TaskSerializer(serializers.ModelSerializer):
    class Meta:
        model = Task
        fields = ("id", "benchmark", "task_id", "number", "intent", "sites", "start_url", "eval_types",
                  "requirements", "requirements_source", "unachievable")
        read_only_fields = fields


class TaskDetailSerializer(TaskSerializer):
    class Meta(TaskSerializer.Meta):
        fields = TaskSerializer.Meta.fields + (
            "old_task_id", "intent_template", "intent_template_id", "instantiation", "require_login",
            "require_reset", "eval_config", "config", "created_at", "updated_at",
        )
        read_only_fields = fields


@extend_schema(tags=["tasks"])
class TaskViewSet(viewsets.ReadOnlyModelViewSet):
    """Benchmark tasks with their published evaluation config."""

    queryset = Task.objects.order_by("benchmark", "number", "task_id")
    filterset_class = TaskFilter
    ordering_fields = ("number", "task_id", "benchmark")
    lookup_value_converter = "int"

    def get_serializer_class(self):
        return TaskDetailSerializer if self.action == "retrieve" else TaskSerializer


class RunFilter(django_filters.FilterSet):
    paradigm = django_filters.ChoiceFilter(choices=Paradigm.choices)

    class Meta:
        model = AgentRun
        fields = ("name", "agent", "model", "paradigm", "benchmark")


class RunSerializer(serializers.ModelSerializer):
    uploaded_by = serializers.CharField(source="uploaded_by.get_username", read_only=True, default=None,
                                        allow_null=True)
    trajectories = serializers.IntegerField(source="trajectory_count", read_only=True)
    passed = serializers.IntegerField(read_only=True, help_text="Trajectories the harness judged successful "
                                      "(every verdict source per task: /api/runs/{id}/verdicts/).")
    judged = serializers.IntegerField(read_only=True, help_text="Trajectories with a harness verdict.")
    results_only = serializers.SerializerMethodField()
    outcomes = serializers.SerializerMethodField()

    class Meta:
        model = AgentRun
        fields = ("id", "name", "agent", "model", "paradigm", "benchmark", "description", "metadata", "uploaded_by",
                  "trajectories", "passed", "judged", "results_only", "outcomes", "created_at", "updated_at")
        read_only_fields = fields

    @extend_schema_field(serializers.BooleanField(help_text="Per-task verdicts without agent steps "
                                                            "(imported results): success is its only number."))
    def get_results_only(self, run) -> bool:
        return run.stepped_count == 0 and (run.has_task_results or run.trajectory_count > 0)

    @extend_schema_field(serializers.DictField(child=serializers.IntegerField()))
    def get_outcomes(self, run) -> dict:
        """Trajectories per outcome status."""
        return {status: getattr(run, field) for status, field in selectors.OUTCOME_FIELDS.items()}


class SourceRateSerializer(serializers.Serializer):
    kind = serializers.CharField(source="source.kind")
    name = serializers.CharField(source="source.name")
    model = serializers.CharField(source="source.model")
    threshold = serializers.FloatField(source="source.threshold", allow_null=True)
    screenshot_threshold = serializers.FloatField(source="source.screenshot_threshold", allow_null=True, help_text=(
        "The relevance score (WebJudge: 1-5) at or above which a screenshot was shown to the judge."))
    passed = serializers.IntegerField()
    count = serializers.IntegerField(help_text="Verdicts that say yes or no.")
    unsaid = serializers.IntegerField(help_text="Verdicts with only a label or a score (a task not executable counts "
                                                "as not successful).")
    mean = serializers.FloatField(allow_null=True)


class UsageTotalSerializer(serializers.Serializer):
    total = serializers.FloatField()
    trajectories = serializers.IntegerField(help_text="Trajectories that record it.")


class RunDetailSerializer(RunSerializer):
    verdict_sources = serializers.SerializerMethodField()
    usage = serializers.SerializerMethodField()

    class Meta(RunSerializer.Meta):
        fields = RunSerializer.Meta.fields + ("verdict_sources", "usage")
        read_only_fields = fields

    @extend_schema_field(SourceRateSerializer(many=True))
    def get_verdict_sources(self, run) -> list:
        """Success by each named verdict source besides the harness (agent self-report, published judges...)."""
        return SourceRateSerializer(selectors.source_rates(run), many=True).data

    @extend_schema_field(serializers.DictField(child=UsageTotalSerializer()))
    def get_usage(self, run) -> dict:
        """Totals of tokens_in, tokens_out, cost (USD) and duration (s) where trajectories record them."""
        return selectors.run_usage(run)


@extend_schema(tags=["runs"])
class RunViewSet(viewsets.ReadOnlyModelViewSet):
    """Agent runs with their trajectory and outcome counts; upload with POST /api/runs/import/."""

    def get_serializer_class(self):
        return RunDetailSerializer if self.action == "retrieve" else RunSerializer
    filterset_class = RunFilter
    ordering_fields = ("name", "created_at")
    lookup_value_converter = "int"

    def get_queryset(self):
        return selectors.runs_overview()


class TrajectoryFilter(django_filters.FilterSet):
    run = django_filters.CharFilter(field_name="run__name", help_text="Run name.")
    run_id = IdFilter(field_name="run_id")
    benchmark = django_filters.CharFilter(field_name="task__benchmark")
    task_id = django_filters.CharFilter(field_name="task__task_id")
    site = SiteFilter(field_name="task__sites", help_text="A site of the task.")
    outcome_status = django_filters.ChoiceFilter(choices=OutcomeStatus.choices)

    class Meta:
        model = Trajectory
        fields = ("run", "run_id", "benchmark", "task_id", "site", "outcome_status", "success")


class TaskRefSerializer(serializers.ModelSerializer):
    class Meta:
        model = Task
        fields = ("id", "benchmark", "task_id", "intent", "sites")
        read_only_fields = fields


class StepSerializer(serializers.ModelSerializer):
    screenshot = serializers.SerializerMethodField()

    class Meta:
        model = Step
        fields = ("index", "url", "observation", "reasoning", "planned_action", "action", "action_type",
                  "element_id", "element_label", "action_value", "press_enter", "element_selector", "point_x",
                  "point_y", "delta_x", "delta_y", "prev_action", "screenshot",
                  "tokens_in", "tokens_out", "cost", "duration")
        read_only_fields = fields

    @extend_schema_field(serializers.URLField(allow_null=True))
    def get_screenshot(self, step) -> str | None:
        if step.screenshot is None:
            return None
        url = reverse("trajectories:screenshot", args=[step.screenshot.sha256])
        request = self.context.get("request")
        return request.build_absolute_uri(url) if request else url


class TrajectorySerializer(serializers.ModelSerializer):
    run = serializers.CharField(source="run.name", read_only=True)
    task = TaskRefSerializer(read_only=True)

    class Meta:
        model = Trajectory
        fields = ("id", "run", "run_id", "task", "outcome_status", "outcome_reason", "success", "step_count",
                  "final_answer", "source_name", "source_format", "created_at")
        read_only_fields = fields


class SourceVerdictSerializer(serializers.ModelSerializer):
    kind = serializers.CharField(source="source.kind", read_only=True)
    name = serializers.CharField(source="source.name", read_only=True)
    model = serializers.CharField(source="source.model", read_only=True)
    threshold = serializers.FloatField(source="source.threshold", read_only=True, allow_null=True)
    screenshot_threshold = serializers.FloatField(source="source.screenshot_threshold", read_only=True,
                                                  allow_null=True)
    file = serializers.CharField(source="source_name", read_only=True)

    class Meta:
        model = Verdict
        fields = ("kind", "name", "model", "threshold", "screenshot_threshold", "grader", "success", "label", "score",
                  "labels", "note", "explanation", "file")
        read_only_fields = fields


class StepsPageSerializer(serializers.Serializer):
    page = serializers.IntegerField()
    page_size = serializers.IntegerField()
    count = serializers.IntegerField(help_text="Steps in the trajectory")
    next = serializers.URLField(allow_null=True, help_text="The next page of steps; null on the last")
    previous = serializers.URLField(allow_null=True)


class TrajectoryDetailSerializer(TrajectorySerializer):
    """`steps` holds one page of steps (`context["steps_page"]`), all of them for a trajectory within
    API_STEPS_PAGE_SIZE; `steps_page` says which."""

    steps = serializers.SerializerMethodField()
    steps_page = serializers.SerializerMethodField()
    verdicts = serializers.SerializerMethodField()

    class Meta(TrajectorySerializer.Meta):
        fields = TrajectorySerializer.Meta.fields + (
            "outcome_message", "success_source", "success_by", "tokens_in", "tokens_out", "cost", "duration",
            "verdicts", "plan", "content_hash", "steps", "steps_page")
        read_only_fields = fields

    @extend_schema_field(SourceVerdictSerializer(many=True))
    def get_verdicts(self, trajectory) -> list:
        """Verdicts of named sources other than the harness of record (`success`, given by `success_by`)."""
        return SourceVerdictSerializer(selectors.task_verdicts_by_source(trajectory.run_id, trajectory.task_id),
                                       many=True).data

    @extend_schema_field(StepSerializer(many=True))
    def get_steps(self, trajectory) -> list:
        return StepSerializer(self.context["steps_page"].object_list, many=True, context=self.context).data

    @extend_schema_field(StepsPageSerializer)
    def get_steps_page(self, trajectory) -> dict:
        page, request = self.context["steps_page"], self.context["request"]

        def link(number):
            return replace_query_param(request.build_absolute_uri(), "steps_page", number)

        return {"page": page.number, "page_size": page.paginator.per_page, "count": page.paginator.count,
                "next": link(page.next_page_number()) if page.has_next() else None,
                "previous": link(page.previous_page_number()) if page.has_previous() else None}


STEPS_PAGE_PARAMETERS = [
    OpenApiParameter("steps_page", int, description="Page of steps (1 first)."),
    OpenApiParameter("steps_page_size", int, description="Steps per page, at most API_STEPS_PAGE_SIZE (its default)."),
]


def steps_page(request, trajectory: Trajectory):
    """The page of the trajectory's steps the request asks for; a bad number is a 400 naming the parameter."""
    limit = settings.API_STEPS_PAGE_SIZE
    values = {}
    for name, default in (("steps_page", 1), ("steps_page_size", limit)):
        raw = request.query_params.get(name, default)
        try:
            values[name] = int(raw)
        except (TypeError, ValueError):
            raise ValidationError({name: "a whole number"}) from None
        if values[name] < 1:
            raise ValidationError({name: "1 or more"})
    if values["steps_page_size"] > limit:
        raise ValidationError({"steps_page_size": f"at most {limit}"})
    steps = Step.objects.filter(trajectory=trajectory).select_related("screenshot").order_by("index")
    paginator = Paginator(steps, values["steps_page_size"])
    if values["steps_page"] > max(paginator.num_pages, 1):
        raise ValidationError({"steps_page": f"the trajectory has {paginator.num_pages} pages of steps"})
    return paginator.page(values["steps_page"])


@extend_schema(tags=["trajectories"])
class TrajectoryViewSet(viewsets.ReadOnlyModelViewSet):
    """What each run did on each task; the detail has every agent step."""

    filterset_class = TrajectoryFilter
    ordering_fields = ("id", "step_count", "created_at")
    lookup_value_converter = "int"

    def get_queryset(self):
        return Trajectory.objects.select_related("run", "task").order_by("run__name", "task__number", "task__task_id")

    def get_serializer_class(self):
        return TrajectoryDetailSerializer if self.action == "retrieve" else TrajectorySerializer

    @extend_schema(parameters=STEPS_PAGE_PARAMETERS)
    def retrieve(self, request, *args, **kwargs):
        trajectory = self.get_object()
        context = {**self.get_serializer_context(), "steps_page": steps_page(request, trajectory)}
        return Response(TrajectoryDetailSerializer(trajectory, context=context).data)
