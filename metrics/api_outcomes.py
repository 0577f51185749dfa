"""The outcome judge over the API: what judging a run will ask and cost (`dry_run`), starting it, and
following its job. Who may start it is who may evaluate the run (`metrics.permissions.can_evaluate`)."""

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import PermissionDenied, ValidationError
from rest_framework.response import Response
from rest_framework.views import APIView

from infrastructure.api_schema import ErrorSerializer
from judges.api import JudgeRefused
from judges.endpoint_checks import JudgeNotChoosable
from judges.models import OutcomeJob
from judges.outcome_judging import (
    NO_OUTCOME_JUDGE, OutcomeJobEstimate, estimate_outcome_job, outcome_judges, start_outcome_job,
)
from judges.selectors import UnknownJudge
from judges.services import judge_config_for
from metrics.permissions import can_evaluate
from metrics.selectors.jobs_and_scores import job_progress
from trajectories.models import AgentRun


class OutcomeJudgingRequestSerializer(serializers.Serializer):
    judge = serializers.CharField(required=False, allow_blank=True, default="",
                                  help_text="The name of a judge configuration of the openai backend.")
    dry_run = serializers.BooleanField(default=False, help_text="Only say what judging would ask and cost.")


class OutcomeEstimateSerializer(serializers.Serializer):
    run = serializers.CharField()
    judge = serializers.CharField()
    model = serializers.CharField()
    trajectories = serializers.IntegerField()
    requests = serializers.DictField(child=serializers.IntegerField(), help_text=(
        "Exact, from the decisions stored now: {key_points (one per task text not decided), screenshots (one per "
        "distinct screenshot not scored), verdicts (one per trajectory not judged), total}."))
    images = serializers.IntegerField(help_text="Images the requests send.")
    prompt_tokens = serializers.IntegerField(help_text="Estimated.")
    completion_tokens = serializers.IntegerField(help_text="Estimated.")
    cost = serializers.DecimalField(max_digits=12, decimal_places=6, allow_null=True,
                                    help_text="Estimated, USD; null when the model has no price (see `basis`).")
    unreadable = serializers.ListField(child=serializers.DictField(), help_text=(
        "[{task, error}]: trajectories a screenshot of which cannot be read; they get no verdict."))
    basis = serializers.CharField(help_text="How the estimate is made, in words.")

    @staticmethod
    def of(estimate: OutcomeJobEstimate) -> dict:
        count = estimate.requests
        return {
            "run": estimate.run.name, "judge": estimate.config.name, "model": estimate.config.model,
            "trajectories": estimate.trajectories,
            "requests": {"key_points": count.key_points, "screenshots": count.screenshots,
                         "verdicts": count.verdicts, "total": count.requests},
            "images": count.images, "prompt_tokens": count.prompt_tokens,
            "completion_tokens": count.completion_tokens, "cost": estimate.cost, "unreadable": estimate.unreadable,
            "basis": estimate.basis,
        }


class OutcomeJobSerializer(serializers.Serializer):
    """An outcome job and its progress as `job_progress` reports an evaluation's."""

    id = serializers.IntegerField()
    status = serializers.CharField(help_text="pending, running, done or failed.")
    run = serializers.CharField(source="job.run.name")
    judge = serializers.CharField(source="job.judge_config.name")
    total = serializers.IntegerField(help_text="Trajectories of the run.")
    done = serializers.IntegerField(help_text="Trajectories given a verdict.")
    failed = serializers.IntegerField(help_text="Trajectories left without a verdict (see `errors`).")
    passed = serializers.IntegerField(source="job.passed", help_text="Of the judged, those judged successful.")
    remaining = serializers.IntegerField()
    percent = serializers.FloatField()
    rate_per_second = serializers.FloatField(allow_null=True)
    eta_seconds = serializers.IntegerField(allow_null=True)
    errors = serializers.ListField(source="job.errors", child=serializers.DictField(), help_text="[{task, error}]")
    error = serializers.CharField(source="job.error", help_text="Why the whole job failed.")
    calls = serializers.IntegerField(source="job.calls", help_text="Requests behind its verdicts, cached ones "
                                                                   "included (when done).")
    cost = serializers.DecimalField(source="job.cost", max_digits=12, decimal_places=6, help_text="USD (when done).")
    created_at = serializers.DateTimeField(source="job.created_at")
    started_at = serializers.DateTimeField(allow_null=True)
    finished_at = serializers.DateTimeField(allow_null=True)

    @staticmethod
    def of(job: OutcomeJob) -> dict:
        return OutcomeJobSerializer({**job_progress(job), "job": job}).data


@extend_schema(tags=["verdicts"], request=OutcomeJudgingRequestSerializer, responses={
    200: OpenApiResponse(OutcomeEstimateSerializer, description="`dry_run`: what judging would ask and cost."),
    201: OpenApiResponse(OutcomeJobSerializer, description="The job, started; follow it at /api/outcome-jobs/<id>/."),
    400: ErrorSerializer, 403: ErrorSerializer, 429: ErrorSerializer})
class OutcomeJudgingView(APIView):
    """Judge every trajectory of the run for success with the outcome judge: with `dry_run`, the number of
    requests (exact, from the decisions stored now) and the tokens and cost (estimated) first."""

    def post(self, request, pk: int):
        run = get_object_or_404(AgentRun, pk=pk)
        if not can_evaluate(request.user, [run]):
            raise PermissionDenied("only reviewers, admins and the run's uploader may judge its outcomes")
        query = OutcomeJudgingRequestSerializer(data=request.data)
        query.is_valid(raise_exception=True)
        config = _judge(query.validated_data["judge"])
        try:
            if query.validated_data["dry_run"]:
                return Response(OutcomeEstimateSerializer.of(estimate_outcome_job(run, config)))
            job = start_outcome_job(run, config, user=request.user)
        except JudgeNotChoosable as exc:
            raise JudgeRefused(exc) from None
        except ValueError as exc:
            raise ValidationError({"judge": [str(exc)]}) from None
        return Response(OutcomeJobSerializer.of(job), status=status.HTTP_201_CREATED)


def _judge(name: str):
    """The named judge configuration; a 400 naming those that can judge outcomes, or why none can."""
    known = list(outcome_judges().values_list("name", flat=True))
    if not name:
        raise ValidationError({"judge": [f"name a judge configuration of the openai backend: {', '.join(known)}"
                                         if known else NO_OUTCOME_JUDGE]})
    try:
        return judge_config_for(name)
    except UnknownJudge as exc:
        raise ValidationError({"judge": [str(exc)]}) from None


@extend_schema(tags=["verdicts"], responses=OutcomeJobSerializer)
class OutcomeJobDetail(APIView):
    """One outcome job's progress: poll it until `status` is done or failed."""

    def get(self, request, pk: int):
        job = get_object_or_404(OutcomeJob.objects.select_related("run", "judge_config"), pk=pk)
        return Response(OutcomeJobSerializer.of(job))
