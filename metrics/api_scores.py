"""REST endpoints of the stored results of evaluations: per-trajectory scores and per-run aggregates,
filtered and paged as stored."""

import django_filters
from drf_spectacular.utils import extend_schema
from rest_framework import generics, serializers

from infrastructure.api import IdFilter
from metrics.models import Aggregate, TrajectoryScore
from metrics.selectors.jobs_and_scores import scores_with_context
from metrics.serializers import SCORE_ORDERING, TrajectoryScoreSerializer
from trajectories.api_read import SiteFilter


class ScoreFilter(django_filters.FilterSet):
    job = IdFilter(field_name="job_id", help_text="Evaluation job id.")
    run = django_filters.CharFilter(field_name="trajectory__run__name", help_text="Run name.")
    run_id = IdFilter(field_name="trajectory__run_id")
    trajectory = IdFilter(field_name="trajectory_id")
    benchmark = django_filters.CharFilter(field_name="trajectory__task__benchmark")
    task_id = django_filters.CharFilter(field_name="trajectory__task__task_id")
    site = SiteFilter(field_name="trajectory__task__sites", help_text="A site of the task.")
    failed = django_filters.BooleanFilter(method="filter_failed", help_text="true: scores that could not be computed.")

    class Meta:
        model = TrajectoryScore
        fields = ("job", "run", "run_id", "trajectory", "benchmark", "task_id", "site", "success", "outcome_status",
                  "failed")

    def filter_failed(self, queryset, name, value):
        return queryset.exclude(error="") if value else queryset.filter(error="")


@extend_schema(tags=["results"])
class ScoreList(generics.ListAPIView):
    """Per-trajectory scores of every job (each metric null where it cannot be computed)."""

    serializer_class = TrajectoryScoreSerializer
    filterset_class = ScoreFilter
    ordering_fields = SCORE_ORDERING
    queryset = scores_with_context()


class AggregateSerializer(serializers.ModelSerializer):
    run = serializers.CharField(source="run.name", read_only=True)

    class Meta:
        model = Aggregate
        fields = ("id", "job", "run", "run_id", "scope", "group", "metric", "mean", "std", "count", "null_count",
                  "data", "computed_at")
        read_only_fields = fields


class AggregateFilter(django_filters.FilterSet):
    job = IdFilter(field_name="job_id", help_text="Evaluation job id.")
    run = django_filters.CharFilter(field_name="run__name", help_text="Run name.")
    run_id = IdFilter(field_name="run_id")
    scope = django_filters.ChoiceFilter(choices=Aggregate.Scope.choices)

    class Meta:
        model = Aggregate
        fields = ("job", "run", "run_id", "scope", "group", "metric")


@extend_schema(tags=["results"])
class AggregateList(generics.ListAPIView):
    """Stored summaries (mean, std, count, null count) per job, run and scope: the run, each site,
    its paradigm, and within successful tasks; `outcomes` and `lengths` carry tables in `data`."""

    serializer_class = AggregateSerializer
    filterset_class = AggregateFilter
    ordering_fields = ("job", "scope", "group", "metric", "mean", "std", "count", "null_count")
    queryset = Aggregate.objects.select_related("run").order_by("run__name", "job_id", "scope", "group", "metric")
