"""REST endpoints of the table exports (`metrics.exports`: scores, decisions, aggregates, the leaderboard, judges
vs humans), the gold dataset, and the columns every export declares."""

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.api import GoldFilter
from annotation.formats import FORMATS as GOLD_FORMATS
from annotation.formats import export_bytes
from annotation.permissions import visible_gold
from annotation.selectors import gold_blocks
from infrastructure.api import MAX_ID, PublicLeaderboardOrAuthenticated, valid_query
from metrics import exports
from metrics.api_downloads import FORMAT_PARAMETER, DownloadView, XLSXRenderer, download, table_responses
from metrics.api_leaderboard import LeaderboardQuerySerializer
from metrics.api_verdicts import JudgesQuerySerializer, judges_query
from metrics.selectors import leaderboard
from trajectories.models import AgentRun, TaskSubset


GOLD_TYPES = {"xlsx": XLSXRenderer.media_type, "csv": "text/csv; charset=utf-8", "json": "application/json"}


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
        data = valid_query(RunExportQuerySerializer, request).validated_data
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
        return download(chunks, exports.FORMATS[fmt], exports.export_filename(self.what, fmt, names))


def _run_export_schema(description: str):
    return extend_schema(tags=["exports"], parameters=[RunExportQuerySerializer, FORMAT_PARAMETER],
                         responses=table_responses(description))


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
               responses=table_responses("The leaderboard, one row per run"))
class LeaderboardExportView(DownloadView):
    """The leaderboard with the same filters as GET /api/leaderboard/."""

    permission_classes = [PublicLeaderboardOrAuthenticated]

    def get(self, request, fmt: str):
        board = leaderboard.leaderboard(valid_query(LeaderboardQuerySerializer, request).filters())
        return download(exports.to_bytes(exports.leaderboard_frame(board), fmt), exports.FORMATS[fmt],
                        exports.export_filename("leaderboard", fmt))


@extend_schema(tags=["exports"], parameters=[JudgesQuerySerializer, FORMAT_PARAMETER],
               responses=table_responses("Each verdict source against the humans, per run and over all runs"))
class JudgesExportView(DownloadView):
    """The judges-vs-humans table with the same query as GET /api/verdicts/judges/."""

    def get(self, request, fmt: str):
        benchmark, run, report = judges_query(request)
        only = run.name if run else ""
        return download(exports.to_bytes(exports.judges_frame(benchmark, report, only), fmt), exports.FORMATS[fmt],
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
        return download(export_bytes(gold_blocks(golds.qs), fmt), GOLD_TYPES[fmt], f"gold.{fmt}")


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
