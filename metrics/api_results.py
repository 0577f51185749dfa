"""REST endpoints for what evaluations produce: scores, aggregates, the leaderboard, run
comparisons and exports. The numbers come from `metrics.leaderboard`, `metrics.comparison` and
`metrics.exports`, exactly as the pages show them; these views only check the query and serialize.
"""

from urllib.parse import urlencode

import django_filters
from django.http import HttpResponse, StreamingHttpResponse
from django.shortcuts import get_object_or_404
from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema, extend_schema_field
from rest_framework import generics, renderers, serializers
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.api import GoldFilter
from annotation.formats import FORMATS as GOLD_FORMATS
from annotation.formats import export_bytes
from annotation.permissions import visible_gold
from annotation.selectors import gold_blocks
from failures.selectors import failure_type_source
from infrastructure.api import MAX_ID, IdFilter, NameField, Pagination, PublicLeaderboardOrAuthenticated
from metrics import comparison, exports, leaderboard
from metrics.aggregation import METRICS
from metrics.api_verdicts import JudgesQuerySerializer, judges_query
from metrics.models import Aggregate, TrajectoryScore
from metrics.selectors import scores_with_context
from metrics.serializers import SCORE_ORDERING, TrajectoryScoreSerializer
from trajectories.api_read import SiteFilter, TaskRefSerializer
from trajectories.models import AgentRun, Paradigm, Task, TaskSubset
from trajectories.verdicts import COMBINED

# --- scores and aggregates -------------------------------------------------------------------


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


# --- leaderboard -----------------------------------------------------------------------------


class SummarySerializer(serializers.Serializer):
    mean = serializers.FloatField(allow_null=True, help_text="A yes/no metric's mean is a rate.")
    std = serializers.FloatField(allow_null=True, help_text="Sample standard deviation; null below two values.")
    count = serializers.IntegerField(help_text="Trajectories with a value.")
    null_count = serializers.IntegerField(help_text="Trajectories whose value is null, left out of the mean.")


class EvaluationRefSerializer(serializers.Serializer):
    job_id = serializers.IntegerField()
    judge = serializers.CharField()
    finished_at = serializers.DateTimeField()


class FailureTypeShareSerializer(serializers.Serializer):
    key = serializers.CharField(help_text="The failure type's key in the benchmark's taxonomy.")
    name = serializers.CharField()
    count = serializers.IntegerField(help_text="Attributed failures of this type.")
    share = serializers.FloatField(help_text="Their share of the run's attributed failures with a type.")


class LeaderboardRowSerializer(serializers.Serializer):
    run_id = serializers.IntegerField()
    name = serializers.CharField()
    agent = serializers.CharField()
    model = serializers.CharField()
    paradigm = serializers.ChoiceField(choices=Paradigm.choices)
    benchmark = serializers.CharField()
    created_at = serializers.DateTimeField()
    trajectories = serializers.IntegerField()
    scored = serializers.IntegerField(allow_null=True, help_text="Scored trajectories in the scope.")
    partly_scored = serializers.IntegerField(
        allow_null=True, help_text="Of those scored, trajectories some of whose judge questions failed (the metrics "
                                   "needing them are null).")
    evaluation = EvaluationRefSerializer(allow_null=True, help_text="The run's latest finished evaluation.")
    metrics = serializers.DictField(child=SummarySerializer(), help_text="Every metric of METRICS.md by name.")
    outcomes = serializers.JSONField(allow_null=True, help_text="{total, partly_scored, rows: [{status, reason, "
                                                                "count, share, successes}]}, the paper's Table 7.")
    lengths = serializers.JSONField(allow_null=True, help_text="Agent vs gold steps, the paper's Table 6.")
    success_sources = serializers.DictField(
        child=SummarySerializer(), help_text="Success rate by each verdict source: combined (METRICS.md: the "
        "harness's, else the offline check's), harness, check, human, and source:<id> of each named source the run "
        "has verdicts of; `metrics.success` is the chosen one.")
    results_only = serializers.BooleanField(help_text="Per-task verdicts without agent steps: no other metric.")
    uniform = serializers.BooleanField(allow_null=True, help_text="A results-only run whose hundreds of verdicts "
                                                                  "are all this one value (likely read wrongly).")
    failure_types = FailureTypeShareSerializer(
        many=True, allow_null=True,
        help_text="With `failure_source`: the run's attributed failures by type, most first; null without it.")


SORT_CHOICES = [key for name in leaderboard.SORT_KEYS for key in (name, f"-{name}")]


class LeaderboardQuerySerializer(serializers.Serializer):
    benchmark = serializers.CharField(required=False, allow_blank=True, default="")
    site = serializers.CharField(required=False, allow_blank=True, default="",
                                 help_text="Numbers restricted to this site group.")
    paradigm = serializers.ChoiceField(choices=Paradigm.choices, required=False, allow_blank=True, default="")
    judge = serializers.CharField(required=False, allow_blank=True, default="",
                                  help_text="Latest finished evaluation by this judge.")
    sort = serializers.ChoiceField(choices=SORT_CHOICES, required=False, default="-success",
                                   help_text="A column; `-` first for highest first.")
    subset = serializers.CharField(required=False, allow_blank=True, default="",
                                   help_text="Numbers restricted to this task subset (e.g. webarena-lite).")
    success_source = serializers.CharField(required=False, default=COMBINED,
                                           help_text="Which verdict `metrics.success` is: combined, harness, check, "
                                                     "human, or a named source's source:<id> (`success_sources`).")

    failure_source = serializers.CharField(required=False, allow_blank=True, default="", help_text=(
        "Add each run's share of failures of each type (`failure_types`), by `people` (their consensus) or an "
        "attribution source's id."))
    failure_type = serializers.CharField(required=False, allow_blank=True, default="", help_text=(
        "Only runs with a failure of this type (a taxonomy key) by `failure_source` (by some person if none)."))

    def validate_failure_source(self, value):
        if value:
            try:
                failure_type_source(value)
            except ValueError as error:
                raise ValidationError(str(error).split(": ", 1)[1]) from None
        return value

    def validate_success_source(self, value):
        sources = leaderboard.success_sources()
        if value not in sources:
            raise ValidationError(f"{value!r} is not one of {', '.join(sources)}")
        return value

    def validate(self, data):
        if data["subset"] and data["site"]:
            raise ValidationError({"subset": "choose a site group or a subset, not both"})
        if data["subset"] and not TaskSubset.objects.filter(name=data["subset"]).exists():
            raise ValidationError({"subset": f"no subset named {data['subset']!r}"})
        return data

    def filters(self) -> leaderboard.LeaderboardFilters:
        data = self.validated_data
        sort = data["sort"]
        return leaderboard.LeaderboardFilters(
            benchmark=data["benchmark"], site=data["site"], paradigm=data["paradigm"], judge=data["judge"],
            sort=sort.lstrip("-"), descending=sort.startswith("-"), subset=data["subset"],
            success_source=data["success_source"], failure_source=data["failure_source"],
            failure_type=data["failure_type"],
        )


def _query(serializer_class, request) -> serializers.Serializer:
    query = serializer_class(data=request.query_params)
    query.is_valid(raise_exception=True)
    return query


@extend_schema(tags=["results"], parameters=[LeaderboardQuerySerializer],
               responses=LeaderboardRowSerializer(many=True))
class LeaderboardView(generics.GenericAPIView):
    """One row per run: every metric from its latest finished evaluation; evaluated runs first, in the chosen
    order, a page at a time (`page`, `page_size`), ranked over every run by the database. Open to anonymous
    readers when PUBLIC_LEADERBOARD is on."""

    permission_classes = [PublicLeaderboardOrAuthenticated]
    serializer_class = LeaderboardRowSerializer
    queryset = AgentRun.objects.none()  # what the rows are, for the schema; `leaderboard.Ranking` reads them
    filter_backends = []  # `sort` orders the rows, not `ordering`

    def get(self, request):
        ranking = leaderboard.Ranking(_query(LeaderboardQuerySerializer, request).filters())
        return self.get_paginated_response(self.get_serializer(self.paginate_queryset(ranking), many=True).data)


class SiteBreakdownQuerySerializer(LeaderboardQuerySerializer):
    metric = serializers.ChoiceField(choices=METRICS, required=False, default="success")
    page = serializers.IntegerField(required=False, default=1, min_value=1,
                                    help_text="The runs of this page of the leaderboard (ranked as it is).")
    page_size = serializers.IntegerField(required=False, default=Pagination.page_size, min_value=1,
                                         max_value=Pagination.max_page_size)


class SiteBreakdownRowSerializer(serializers.Serializer):
    run_id = serializers.IntegerField()
    name = serializers.CharField()
    sites = serializers.ListField(child=SummarySerializer(allow_null=True), help_text="One cell per site, in order.")


class SiteBreakdownSerializer(serializers.Serializer):
    metric = serializers.CharField()
    sites = serializers.ListField(child=serializers.CharField())
    results = SiteBreakdownRowSerializer(many=True)


@extend_schema(tags=["results"], parameters=[SiteBreakdownQuerySerializer], responses=SiteBreakdownSerializer)
class SiteBreakdownView(APIView):
    """One metric per run and site group (the paper's Figures 2 and 3), for the runs of one page of the
    leaderboard (`page`, `page_size`, as GET /api/leaderboard/), so that a request reads a page of runs."""

    permission_classes = [PublicLeaderboardOrAuthenticated]

    def get(self, request):
        query = _query(SiteBreakdownQuerySerializer, request)
        data = query.validated_data
        ranking = leaderboard.Ranking(query.filters())
        first = (data["page"] - 1) * data["page_size"]
        board = ranking.board(ranking[first:first + data["page_size"]])
        breakdown = leaderboard.site_breakdown(board, data["metric"])
        return Response(SiteBreakdownSerializer({
            "metric": breakdown.metric,
            "sites": breakdown.sites,
            "results": [{"run_id": row.run_id, "name": row.name, "sites": cells} for row, cells in breakdown.rows],
        }).data)


# --- comparisons -----------------------------------------------------------------------------


class PairedComparisonSerializer(serializers.Serializer):
    pairs = serializers.IntegerField(help_text="Tasks both runs have a value for.")
    baseline_mean = serializers.FloatField(allow_null=True)
    candidate_mean = serializers.FloatField(allow_null=True)
    mean_difference = serializers.FloatField(allow_null=True, help_text="Candidate minus baseline.")
    ci_low = serializers.FloatField(allow_null=True, help_text="Percentile bootstrap confidence interval.")
    ci_high = serializers.FloatField(allow_null=True)
    confidence = serializers.FloatField()
    wilcoxon_p = serializers.FloatField(allow_null=True, help_text="Wilcoxon signed-rank test (zeros dropped).")
    t_test_p = serializers.FloatField(allow_null=True, help_text="Paired t-test.")
    only_in_baseline = serializers.IntegerField()
    only_in_candidate = serializers.IntegerField()
    null_pairs = serializers.IntegerField(help_text="Shared tasks where either value is null.")
    seed = serializers.IntegerField()
    resamples = serializers.IntegerField()


class SiteComparisonSerializer(PairedComparisonSerializer):
    site = serializers.CharField()


class MetricComparisonSerializer(serializers.Serializer):
    metric = serializers.CharField()
    overall = PairedComparisonSerializer()
    by_site = serializers.SerializerMethodField()

    @extend_schema_field(SiteComparisonSerializer(many=True))
    def get_by_site(self, result) -> list:
        return [{"site": site, **PairedComparisonSerializer(paired).data} for site, paired in result.by_site]


class SideSerializer(serializers.Serializer):
    run_id = serializers.IntegerField()
    name = serializers.CharField()
    evaluation = EvaluationRefSerializer()


class TaskDifferenceSerializer(serializers.Serializer):
    task = serializers.IntegerField(source="task_pk")
    task_id = serializers.CharField()
    site = serializers.CharField()
    intent = serializers.CharField()
    baseline = serializers.FloatField()
    candidate = serializers.FloatField()
    difference = serializers.FloatField()
    side_by_side = serializers.SerializerMethodField(help_text="The two trajectories aligned to the gold steps.")

    def get_side_by_side(self, difference) -> str:
        url = reverse("api-comparison-task", args=[difference.task_pk])
        query = self.context["side_by_side_query"]
        return self.context["request"].build_absolute_uri(f"{url}?{query}")


class RunComparisonSerializer(serializers.Serializer):
    baseline = SideSerializer()
    candidate = SideSerializer()
    shared_tasks = serializers.IntegerField()
    sites = serializers.ListField(child=serializers.CharField())
    metrics = MetricComparisonSerializer(many=True)
    difference_metric = serializers.CharField()
    differing_tasks = TaskDifferenceSerializer(many=True, help_text="Largest absolute difference first.")
    subset = serializers.CharField(help_text="The task subset paired over; empty: every shared task.")


class RunPairQuerySerializer(serializers.Serializer):
    baseline = NameField(slug_field="name", queryset=AgentRun.objects.all(), help_text="Run name.")
    candidate = NameField(slug_field="name", queryset=AgentRun.objects.all(),
                                             help_text="Run name.")
    judge = serializers.CharField(required=False, allow_blank=True, default="",
                                  help_text="Compare the latest finished evaluations by this judge.")

    def validate(self, data):
        if data["baseline"] == data["candidate"]:
            raise ValidationError({"candidate": "choose a run other than the baseline"})
        return data


class ComparisonQuerySerializer(RunPairQuerySerializer):
    metric = serializers.ChoiceField(choices=METRICS, required=False, default="step_success",
                                     help_text="The metric the differing tasks are ranked by.")
    limit = serializers.IntegerField(min_value=1, max_value=200, required=False, default=comparison.DIFFERING_TASKS,
                                     help_text="How many differing tasks to list.")
    subset = serializers.SlugRelatedField(slug_field="name", queryset=TaskSubset.objects.all(), required=False,
                                          allow_null=True, default=None, help_text="Pair only this subset's tasks.")


def _not_evaluated(exc: comparison.NotEvaluated, data: dict) -> ValidationError:
    field = "baseline" if exc.run == data["baseline"] else "candidate"
    return ValidationError({field: f"{exc}: evaluate it first"})


@extend_schema(tags=["results"], parameters=[ComparisonQuerySerializer], responses=RunComparisonSerializer)
class ComparisonView(APIView):
    """Two runs paired over the tasks both have, per metric and per site: mean difference, bootstrap
    95% CI, Wilcoxon and paired t-test p-values; and the tasks where they differ most."""

    def get(self, request):
        data = _query(ComparisonQuerySerializer, request).validated_data
        try:
            result = comparison.compare_runs(data["baseline"], data["candidate"], judge=data["judge"],
                                             difference_metric=data["metric"], limit=data["limit"],
                                             subset=data["subset"])
        except comparison.NotEvaluated as exc:
            raise _not_evaluated(exc, data) from None
        pair = {key: value for key, value in RunPairQuerySerializer(data).data.items() if value}
        context = {"request": request, "side_by_side_query": urlencode(pair)}
        return Response(RunComparisonSerializer(result, context=context).data)


class StepCellSerializer(serializers.Serializer):
    """An agent step placed on the gold path (step numbers 1-based)."""

    step = serializers.IntegerField(source="mark.step")
    action = serializers.CharField()
    url = serializers.CharField()
    path_gold_step = serializers.IntegerField(source="mark.path_gold_step", allow_null=True,
                                              help_text="Gold step it matched on the recovery walk.")
    ssr_gold_step = serializers.IntegerField(source="mark.ssr_gold_step", allow_null=True,
                                             help_text="Gold step Step Success matched it with.")
    ssr_score = serializers.FloatField(source="mark.ssr_score", allow_null=True)
    left_path = serializers.IntegerField(source="mark.left_path", allow_null=True,
                                         help_text="It started a deviation: the gold step expected then.")
    came_back = serializers.IntegerField(source="mark.came_back", allow_null=True,
                                         help_text="It ended a deviation by matching this gold step.")
    recovery_cost = serializers.IntegerField(source="mark.recovery_cost", allow_null=True)
    off_path = serializers.BooleanField(source="mark.off_path")


class RowSideSerializer(serializers.Serializer):
    trajectory_id = serializers.IntegerField(allow_null=True)
    cells = StepCellSerializer(many=True)
    unmatched = serializers.BooleanField(help_text="A gold row this trajectory has no step on.")
    never_reached = serializers.BooleanField(help_text="The agent's steps ran out before this gold step.")


class SideBySideRowSerializer(serializers.Serializer):
    kind = serializers.ChoiceField(
        choices=("gold", "before", "after"),
        help_text="gold: the step on a gold step; before: steps leading to it; after: the rest.",
    )
    gold_step = serializers.IntegerField(allow_null=True)
    gold_texts = serializers.ListField(child=serializers.CharField(allow_null=True),
                                       help_text="The gold step's text, per distinct gold trajectory in use.")
    sides = RowSideSerializer(many=True)


class TrajectorySideSerializer(serializers.Serializer):
    run_id = serializers.IntegerField(source="side.run_id")
    name = serializers.CharField(source="side.name")
    evaluation = EvaluationRefSerializer(source="side.evaluation")
    trajectory_id = serializers.IntegerField(source="trajectory.pk", default=None, allow_null=True)
    score_id = serializers.IntegerField(source="score.pk", default=None, allow_null=True)
    gold_id = serializers.IntegerField(source="score.gold_id", default=None, allow_null=True)
    aligned = serializers.BooleanField(source="alignment.aligned", help_text="False: scored without gold.")


class SideBySideSerializer(serializers.Serializer):
    task = TaskRefSerializer()
    same_gold = serializers.BooleanField(help_text="Both trajectories were scored against the same gold.")
    gold_hidden = serializers.BooleanField(help_text="A gold in use is not yours to read yet (blind review): "
                                                     "its texts are null.")
    sides = TrajectorySideSerializer(many=True)
    rows = SideBySideRowSerializer(many=True)


@extend_schema(tags=["results"], parameters=[RunPairQuerySerializer], responses=SideBySideSerializer)
class ComparisonTaskView(APIView):
    """The two runs' trajectories of one task aligned to the gold steps: which gold step each agent
    step matched, where each left the gold path and where it came back."""

    def get(self, request, task: int):
        task_row = get_object_or_404(Task, pk=task)
        data = _query(RunPairQuerySerializer, request).validated_data
        try:
            view = comparison.side_by_side(task_row, [data["baseline"], data["candidate"]], viewer=request.user,
                                           judge=data["judge"])
        except comparison.NotEvaluated as exc:
            raise _not_evaluated(exc, data) from None
        return Response(SideBySideSerializer(view).data)


# --- exports ---------------------------------------------------------------------------------


class _DownloadRenderer(renderers.BaseRenderer):
    """Lets clients ask for a file type in `Accept`; the views hand back the file's bytes themselves."""

    def render(self, data, accepted_media_type=None, renderer_context=None):
        return data


class CSVRenderer(_DownloadRenderer):
    media_type, format = "text/csv", "csv"


class XLSXRenderer(_DownloadRenderer):
    media_type, format = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet", "xlsx"


GOLD_TYPES = {"xlsx": XLSXRenderer.media_type, "csv": "text/csv; charset=utf-8", "json": "application/json"}


def _download(content, content_type: str, filename: str) -> HttpResponse:
    """`content`: bytes, or chunks of them, streamed."""
    response = (HttpResponse(content, content_type=content_type) if isinstance(content, bytes)
                else StreamingHttpResponse(content, content_type=content_type))
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


def _table_responses(description: str) -> dict:
    return {
        (200, "text/csv"): OpenApiResponse(OpenApiTypes.STR, description=f"{description} (CSV, a header row)."),
        (200, "application/json"): OpenApiResponse(
            {"type": "array", "items": {"type": "object", "additionalProperties": {}}},
            description=f"{description} (JSON records, the same columns).",
        ),
    }


FORMAT_PARAMETER = OpenApiParameter("fmt", str, OpenApiParameter.PATH, enum=list(exports.FORMATS),
                                    description="File format.")


class DownloadView(APIView):
    renderer_classes = [renderers.JSONRenderer, CSVRenderer, XLSXRenderer]

    def finalize_response(self, request, response, *args, **kwargs):
        """Errors are JSON whatever file type was asked for."""
        response = super().finalize_response(request, response, *args, **kwargs)
        if isinstance(response, Response):
            response.accepted_renderer = renderers.JSONRenderer()
            response.accepted_media_type = "application/json"
        return response


class RunExportQuerySerializer(serializers.Serializer):
    run = serializers.ListField(child=serializers.CharField(), allow_empty=False,
                                help_text="Run name; repeat for several runs.")
    job = serializers.IntegerField(required=False, min_value=1, max_value=MAX_ID,
                                   help_text="An evaluation job of the (one) run; default: the run's latest "
                                             "finished evaluation.")
    judge = serializers.CharField(required=False, allow_blank=True, default="",
                                  help_text="Latest finished evaluation by this judge.")
    subset = serializers.SlugRelatedField(slug_field="name", queryset=TaskSubset.objects.all(), required=False,
                                          allow_null=True, default=None,
                                          help_text="Only the tasks of this subset (e.g. webarena-lite).")

    def validate(self, data):
        if "job" in data and len(data["run"]) != 1:
            raise ValidationError({"job": "name exactly one run with a job"})
        runs = {run.name: run for run in AgentRun.objects.filter(name__in=data["run"])}
        missing = [name for name in data["run"] if name not in runs]
        if missing:
            raise ValidationError({"run": f"no run named {missing[0]!r}"})
        data["runs"] = sorted(runs.values(), key=lambda run: run.name)
        return data


class RunExportView(DownloadView):
    what = ""

    def get(self, request, fmt: str):
        data = _query(RunExportQuerySerializer, request).validated_data
        selection = {}
        try:
            for run in data["runs"]:
                selection.update(exports.run_selection(run, job_id=data.get("job"), judge=data["judge"]))
        except ValueError as exc:
            raise ValidationError({"job" if "job" in data else "run": str(exc)}) from None
        try:
            chunks = exports.run_stream(self.what, fmt, selection, data["subset"], viewer=request.user)
        except exports.ExportTooLarge as exc:
            raise ValidationError({"run": str(exc)}) from None
        names = [run.name for run in data["runs"]]
        return _download(chunks, exports.FORMATS[fmt], exports.export_filename(self.what, fmt, names))


def _run_export_schema(description: str):
    return extend_schema(tags=["exports"], parameters=[RunExportQuerySerializer, FORMAT_PARAMETER],
                         responses=_table_responses(description))


@_run_export_schema("Per-trajectory scores of the runs")
class ScoresExport(RunExportView):
    """Every metric per trajectory (and gold), from each run's chosen evaluation."""

    what = "scores"


@_run_export_schema("Per-step judge decisions of the runs")
class DecisionsExport(RunExportView):
    """Every judge decision the scores used; a whole-trajectory step match gives one row per step pair."""

    what = "decisions"


@_run_export_schema("Per-run aggregates of the runs")
class AggregatesExport(RunExportView):
    """The stored summaries per run, site, paradigm and within successful tasks."""

    what = "aggregates"


@extend_schema(tags=["exports"], parameters=[LeaderboardQuerySerializer, FORMAT_PARAMETER],
               responses=_table_responses("The leaderboard, one row per run"))
class LeaderboardExportView(DownloadView):
    """The leaderboard with the same filters as GET /api/leaderboard/."""

    permission_classes = [PublicLeaderboardOrAuthenticated]

    def get(self, request, fmt: str):
        board = leaderboard.leaderboard(_query(LeaderboardQuerySerializer, request).filters())
        return _download(exports.to_bytes(exports.leaderboard_frame(board), fmt), exports.FORMATS[fmt],
                         exports.export_filename("leaderboard", fmt))


@extend_schema(tags=["exports"], parameters=[JudgesQuerySerializer, FORMAT_PARAMETER],
               responses=_table_responses("Each verdict source against the humans, per run and over all runs"))
class JudgesExportView(DownloadView):
    """The judges-vs-humans table with the same query as GET /api/verdicts/judges/."""

    def get(self, request, fmt: str):
        benchmark, run, report = judges_query(request)
        only = run.name if run else ""
        return _download(exports.to_bytes(exports.judges_frame(benchmark, report, only), fmt), exports.FORMATS[fmt],
                         exports.export_filename("judges", fmt, [only or benchmark]))


@extend_schema(
    tags=["exports"],
    parameters=[OpenApiParameter("fmt", str, OpenApiParameter.PATH, enum=list(GOLD_FORMATS)),
                OpenApiParameter("benchmark", str), OpenApiParameter("task_id", str),
                OpenApiParameter("annotator", str), OpenApiParameter("status", str)],
    responses={
        (200, XLSXRenderer.media_type): OpenApiTypes.BINARY,
        (200, "text/csv"): OpenApiTypes.STR,
        (200, "application/json"): OpenApiTypes.OBJECT,
    },
)
class GoldExportView(DownloadView):
    """The gold trajectories you may see, as xlsx (the published sheet's layout), CSV or gold/v1 JSON."""

    def get(self, request, fmt: str):
        golds = GoldFilter(request.query_params, queryset=visible_gold(request.user))
        if not golds.is_valid():
            raise ValidationError(golds.errors)
        return _download(export_bytes(gold_blocks(golds.qs), fmt), GOLD_TYPES[fmt], f"gold.{fmt}")


class ExportColumnSerializer(serializers.Serializer):
    name = serializers.CharField()
    dtype = serializers.CharField(help_text="string, Int64, Float64, boolean, or object (JSON; JSON text in CSV).")
    meaning = serializers.CharField()


ExportColumnsSerializer = type("ExportColumnsSerializer", (serializers.Serializer,), {
    what: ExportColumnSerializer(many=True) for what in exports.EXPORTS
})


@extend_schema(tags=["exports"], responses=ExportColumnsSerializer)
class ExportColumnsView(APIView):
    """The columns of every table export, in order, with their meaning."""

    permission_classes = [PublicLeaderboardOrAuthenticated]

    def get(self, request):
        return Response(ExportColumnsSerializer(exports.EXPORTS).data)
