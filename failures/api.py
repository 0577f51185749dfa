"""REST endpoints of why trajectories failed: a trajectory's annotations (blind as on its page) and
every attribution source against the people."""


from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.exceptions import PermissionDenied, ValidationError
from rest_framework.parsers import FormParser
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.roles import ANNOTATOR, has_role
from infrastructure.api_schema import ErrorSerializer
from judges.api import JudgeRefused
from judges.endpoint_checks import JudgeNotChoosable
from judges.selectors import UnknownJudge
from judges.services import judge_config_for
from trajectories.models import AgentRun, ResultOrigin, Trajectory
from trajectories.parsers import JSONParser

from . import search_selectors, selectors
from .llm_methods import METHODS
from .models import AttributionJob
from .permissions import REFUSAL, may_attribute
from .services.annotations import AGENT_MAX_LENGTH, NOTE_MAX_LENGTH, AnnotationError, record_failure_annotation
from .services.llm_attribution import start_attribution_job

FIGURES = ("agent", "exact", "within_1", "within_3", "failure_type", "type_kappa")


class FailureAnnotationSerializer(serializers.Serializer):
    step = serializers.IntegerField(min_value=1, help_text="The decisive step (1-based).")
    failure_type = serializers.CharField(max_length=40, help_text="A key of the benchmark's failure types.")
    agent = serializers.CharField(required=False, allow_blank=True, default="", max_length=AGENT_MAX_LENGTH)
    note = serializers.CharField(required=False, allow_blank=True, default="", max_length=NOTE_MAX_LENGTH)


ANNOTATIONS_SCHEMA = inline_serializer("FailureAnnotations", fields={
    "hidden": serializers.IntegerField(help_text="Attributions kept from you until you annotate."),
    "attributions": serializers.ListField(child=serializers.DictField(), help_text=(
        "[{source, kind, annotator, step, agent, failure_type, note}]")),
})


@extend_schema(tags=["failures"])
class TrajectoryFailureAnnotationsView(APIView):
    """GET every source's account of why the trajectory failed (blind until you annotate); POST yours."""

    parser_classes = [JSONParser, FormParser]

    def _annotations(self, trajectory, user) -> dict:
        panel = selectors.failure_panel(trajectory, user)
        return {"hidden": panel.hidden, "attributions": [
            {"source": str(item.source), "kind": item.source.kind, "annotator": item.annotator_name,
             "step": item.step_index, "agent": item.agent, "failure_type": item.failure_type, "note": item.note}
            for item in panel.attributions]}

    @extend_schema(responses=ANNOTATIONS_SCHEMA)
    def get(self, request, pk: int):
        return Response(self._annotations(get_object_or_404(Trajectory.objects.select_related("task"), pk=pk),
                                          request.user))

    @extend_schema(request=FailureAnnotationSerializer,
                   responses={200: ANNOTATIONS_SCHEMA, 400: ErrorSerializer, 403: ErrorSerializer})
    def post(self, request, pk: int):
        trajectory = get_object_or_404(Trajectory.objects.select_related("task"), pk=pk)
        if not has_role(request.user, ANNOTATOR):
            raise PermissionDenied("annotating failures needs the annotator or reviewer role")
        body = FailureAnnotationSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        try:
            record_failure_annotation(trajectory, request.user, origin=ResultOrigin.API, **body.validated_data)
        except AnnotationError as error:
            raise ValidationError({"annotation": str(error)}) from error
        return Response(self._annotations(trajectory, request.user))


class AttributionQuerySerializer(serializers.Serializer):
    run = serializers.CharField(required=False, allow_blank=True, default="", help_text="One run's name.")
    benchmark = serializers.CharField(required=False, allow_blank=True, default="")
    reference = serializers.CharField(required=False, allow_blank=True, default="", help_text=(
        "Measure against this human source (its `name`) instead of the consensus of every person."))


def _row(row: selectors.AttributionRow) -> dict:
    figures = {}
    for name in FIGURES:
        figure = getattr(row.result, name)
        low, high = figure.interval or (None, None)
        figures[name] = {"value": figure.value, "n": figure.count, "low": low, "high": high}
    source = {"kind": row.source.kind, "name": row.source.name, "model": row.source.model} if row.source else None
    return {"label": row.label, "role": row.role, "source": source, "trajectories": row.result.pairs, **figures}


@extend_schema(tags=["failures"], parameters=[AttributionQuerySerializer], responses=inline_serializer(
    "AttributionAgainstPeople", fields={
        "reference": serializers.CharField(help_text="Empty for every person's consensus."),
        "rows": serializers.ListField(child=serializers.DictField(), help_text=(
            "The people's agreement first (role `ceiling`, `trajectories` counts pairs of people), each source "
            "(role `source`), the exact random floor last (role `floor`): [{label, role, source {kind, name, "
            "model} | null, trajectories, agent, exact, within_1, within_3, failure_type, type_kappa}], each "
            "figure {value, n, low, high} (95 % bootstrap interval; null where none).")),
    }))
class AttributionView(APIView):
    """Every attribution source against the people, as on the attribution page."""

    def get(self, request):
        query = AttributionQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        run_name, benchmark, reference_name = (query.validated_data[key] for key in ("run", "benchmark", "reference"))
        run = AgentRun.objects.filter(name=run_name).first() if run_name else None
        if run_name and run is None:
            raise ValidationError({"run": f"run {run_name!r} does not exist"})
        run_id = run.pk if run else None
        reference = None
        if reference_name:
            people = selectors.human_sources(run_id, benchmark)
            reference = next((source for source in people if source.name == reference_name), None)
            if reference is None:
                raise ValidationError({"reference": f"no human source {reference_name!r} attributed failures here; "
                                                    "known: " + ", ".join(source.name for source in people)})
        rows = selectors.attribution_table(run_id, benchmark, reference)
        return Response({"reference": reference.name if reference else "", "rows": [_row(row) for row in rows]})


class StepSearchQuerySerializer(serializers.Serializer):
    q = serializers.CharField(max_length=500, help_text="Words or a sentence; matched by keyword and by meaning.")
    run = serializers.IntegerField(required=False, min_value=1, help_text="One run's id.")
    benchmark = serializers.CharField(required=False, allow_blank=True, default="")
    outcome = serializers.ChoiceField(choices=list(search_selectors.OUTCOMES), required=False, allow_blank=True,
                                      default="")
    failure_type = serializers.CharField(required=False, allow_blank=True, default="",
                                         help_text="Trajectories some source (or `source`) gave this failure type.")
    source = serializers.IntegerField(required=False, min_value=1, help_text="The attribution source's id.")


@extend_schema(tags=["failures"], parameters=[StepSearchQuerySerializer], responses=inline_serializer(
    "StepSearchResults", fields={"results": serializers.ListField(child=serializers.DictField(), help_text=(
        "Best first, at most 50: [{trajectory, run, benchmark, task, step, url, keyword_terms, similarity, "
        "snippet {field, before, match, after} | null}]; `similarity` is null for a step found by keyword only."))}))
class StepSearchView(APIView):
    """Steps of every trajectory one may see, by keyword and by meaning, with the search page's filters."""

    def get(self, request):
        query = StepSearchQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        filters = search_selectors.search_filters(request.query_params)
        hits = search_selectors.search_steps(request.user, query.validated_data["q"], filters)
        return Response({"results": [{
            "trajectory": hit.trajectory.pk, "run": hit.trajectory.run.name, "benchmark": hit.trajectory.task.benchmark,
            "task": hit.trajectory.task.task_id, "step": hit.index, "url": request.build_absolute_uri(hit.url),
            "keyword_terms": hit.keyword_terms, "similarity": hit.similarity,
            "snippet": vars(hit.snippet) if hit.snippet else None} for hit in hits]})


class AttributionJobRequestSerializer(serializers.Serializer):
    method = serializers.ChoiceField(choices=list(METHODS), help_text=(
        "all_at_once (one request per trajectory), step_by_step (up to the first step judged decisive) or "
        "binary_search (about log2 of the steps)."))
    judge = serializers.CharField(help_text="The name of a judge configuration of the openai backend.")


class AttributionJobSerializer(serializers.ModelSerializer):
    status = serializers.CharField(help_text="pending, running, done or failed.")
    run = serializers.CharField(source="run.name")
    judge = serializers.CharField(source="judge_config.name")
    source = serializers.SerializerMethodField(help_text="The attribution source its answers are stored as.")

    class Meta:
        model = AttributionJob
        fields = ("id", "status", "run", "judge", "method", "source", "total", "attributed", "errors", "error",
                  "calls", "cost", "created_at", "started_at", "finished_at")

    def get_source(self, job) -> str:
        return f"LLM {METHODS[job.method]} ({job.judge_config.model})"


@extend_schema(tags=["failures"], request=AttributionJobRequestSerializer, responses={
    201: AttributionJobSerializer, 400: ErrorSerializer, 403: ErrorSerializer, 429: ErrorSerializer})
class RunAttributionView(APIView):
    """Attribute the run's failed trajectories with an LLM method, as a background job: follow it at
    /api/failure-attribution-jobs/<id>/; its attributions then appear on the attribution page and API."""

    def post(self, request, pk: int):
        run = get_object_or_404(AgentRun, pk=pk)
        if not may_attribute(request.user, run):
            raise PermissionDenied(REFUSAL)
        body = AttributionJobRequestSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        try:
            config = judge_config_for(body.validated_data["judge"])
        except UnknownJudge as error:
            raise ValidationError({"judge": [str(error)]}) from None
        try:
            job = start_attribution_job(run, config, body.validated_data["method"], user=request.user)
        except JudgeNotChoosable as error:
            raise JudgeRefused(error) from None
        except ValueError as error:
            known = ", ".join(selectors.attribution_judges().values_list("name", flat=True)) or "none"
            raise ValidationError({"judge": [f"{error} (openai judges: {known})"]}) from None
        return Response(AttributionJobSerializer(job).data, status=status.HTTP_201_CREATED)


@extend_schema(tags=["failures"], responses=AttributionJobSerializer)
class AttributionJobDetail(APIView):
    """One attribution job's progress: poll it until `status` is done or failed."""

    def get(self, request, pk: int):
        return Response(AttributionJobSerializer(
            get_object_or_404(AttributionJob.objects.select_related("run", "judge_config"), pk=pk)).data)
