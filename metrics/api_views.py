"""Evaluation jobs over the API: start, follow, cancel, re-run, and read their scores."""

import django_filters
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import generics, status
from rest_framework.exceptions import PermissionDenied, ValidationError
from rest_framework.response import Response
from rest_framework.views import APIView

from judges.api import JudgeRefused
from judges.endpoint_checks import JudgeNotChoosable
from judges.services import judge_config_for
from metrics.models import EvaluationJob, TrajectoryScore
from metrics.permissions import can_change_evaluation, can_evaluate
from metrics.selectors.jobs_and_scores import scores_with_context
from metrics.serializers import (
    SCORE_ORDERING,
    EvaluationJobSerializer,
    EvaluatedRunsSerializer, EvaluationRequestSerializer,
    TrajectoryScoreSerializer,
)
from metrics.services import evaluation


def _jobs():
    return EvaluationJob.objects.select_related("judge_config", "gold_annotator").prefetch_related("runs")


def _job_response(job: EvaluationJob, code: int = status.HTTP_200_OK) -> Response:
    return Response(EvaluationJobSerializer(_jobs().get(pk=job.pk)).data, status=code)


class EvaluationFilter(django_filters.FilterSet):
    run = django_filters.CharFilter(field_name="runs__name", help_text="Jobs that evaluate this run.")

    class Meta:
        model = EvaluationJob
        fields = ("status", "run")


@extend_schema(tags=["evaluations"])
class EvaluationListCreate(generics.ListAPIView):
    """Evaluation jobs, newest first; POST starts one (it runs in the background)."""

    serializer_class = EvaluationJobSerializer
    filterset_class = EvaluationFilter
    ordering_fields = ("id", "created_at", "started_at", "finished_at", "status", "total", "done", "failed")

    def get_queryset(self):
        return _jobs().order_by("-created_at", "-pk")

    @extend_schema(request=EvaluationRequestSerializer, responses={201: EvaluationJobSerializer})
    def post(self, request):
        named = EvaluatedRunsSerializer(data=request.data)
        if named.is_valid() and not can_evaluate(request.user, named.validated_data["runs"]):
            raise PermissionDenied("only reviewers, admins and the runs' uploader may evaluate them")
        data = EvaluationRequestSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        runs = data.validated_data["runs"]
        try:
            job = evaluation.create_evaluation(
                runs=runs,
                judge_config=judge_config_for(data.validated_data.get("judge")),
                gold_policy=data.validated_data["gold_policy"],
                gold_annotator=data.validated_data.get("gold_annotator"),
                parameters=data.validated_data["parameters"],
                user=request.user,
            )
        except JudgeNotChoosable as exc:
            raise JudgeRefused(exc) from None
        except ValueError as exc:
            raise ValidationError({"parameters": [str(exc)]}) from None
        evaluation.start_evaluation(job)
        return _job_response(job, status.HTTP_201_CREATED)


@extend_schema(tags=["evaluations"], responses=EvaluationJobSerializer)
class EvaluationDetail(APIView):
    """One job's progress: poll it until `status` is done, failed or cancelled."""

    def get(self, request, pk):
        return _job_response(get_object_or_404(EvaluationJob, pk=pk))


@extend_schema(tags=["evaluations"], request=None, responses=EvaluationJobSerializer)
class EvaluationAction(APIView):
    """Cancel a pending or running job, or re-run one: a finished job is kept and the answer is the
    new job that replaces it (only changed units are scored again)."""

    action = ""

    def post(self, request, pk):
        job = get_object_or_404(EvaluationJob, pk=pk)
        if not can_change_evaluation(request.user, job):
            raise PermissionDenied("only reviewers, admins and the runs' uploader may change this evaluation, "
                                   "and only reviewers one against gold other than the reference")
        if self.action == "cancel":
            if not evaluation.cancel_evaluation(job):
                raise ValidationError({"status": [f"evaluation #{job.pk} is already {job.status}"]})
        else:
            try:
                job = evaluation.rerun_evaluation(job, request.user)
            except JudgeNotChoosable as exc:
                raise JudgeRefused(exc) from None
        return _job_response(job)


@extend_schema(tags=["evaluations"])
class EvaluationScores(generics.ListAPIView):
    """The job's per-trajectory scores (every metric, null where it cannot be computed)."""

    serializer_class = TrajectoryScoreSerializer
    ordering_fields = SCORE_ORDERING

    def get_queryset(self):
        if getattr(self, "swagger_fake_view", False):
            return TrajectoryScore.objects.none()
        job = get_object_or_404(EvaluationJob, pk=self.kwargs["pk"])
        return scores_with_context().filter(job=job)
