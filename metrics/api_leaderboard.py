"""REST endpoints of the leaderboard: every run's numbers ranked (`metrics.selectors.leaderboard`), and one
metric per run and site group, exactly as the pages show them."""

from drf_spectacular.utils import extend_schema
from rest_framework import generics, serializers
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response
from rest_framework.views import APIView

from failures.selectors import failure_type_source
from infrastructure.api import Pagination, PublicLeaderboardOrAuthenticated, valid_query
from metrics.aggregation import METRICS
from metrics.selectors import leaderboard
from trajectories.models import AgentRun, Paradigm, TaskSubset
from trajectories.verdict_agreement import COMBINED


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
        ranking = leaderboard.Ranking(valid_query(LeaderboardQuerySerializer, request).filters())
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
        query = valid_query(SiteBreakdownQuerySerializer, request)
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
