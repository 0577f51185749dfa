"""REST endpoints for gold trajectories, their steps and task requirements.

Every write carries the `version` the client last read; a stale one is answered with 409 and
both versions (`current` as stored, `yours` as sent), never by overwriting.
"""

from dataclasses import replace

import django_filters
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import generics, serializers, status
from rest_framework.exceptions import NotFound, PermissionDenied, ValidationError
from rest_framework.parsers import MultiPartParser
from rest_framework.response import Response
from rest_framework.views import APIView

from config.api_schema import CONFLICT_RESPONSE, ErrorSerializer
from trajectories.models import Task

from .errors import (
    GoldConflict,
    GoldError,
    GoldPermissionDenied,
    GoldValidationError,
    GoldWorkflowError,
    RequirementsConflict,
)
from .formats import GoldFormatError, GoldStepRecord, detect_format, read_gold_bytes
from .models import GoldStatus, GoldTrajectory
from .roles import REVIEWER, has_role
from .permissions import visible_gold
from .selectors import gold_content
from .serializers import (
    GoldInputSerializer,
    GoldStepSerializer,
    GoldTrajectorySerializer,
    RequirementsInputSerializer,
    ReviewInputSerializer,
    StepInputSerializer,
    VersionSerializer,
)
from .services.gold_editing import create_gold, edit_gold_steps, save_gold, submit_gold
from .services.gold_import import import_gold
from .views import MAX_GOLD_UPLOAD_BYTES
from .services.gold_review import review_gold
from .services.requirements import update_requirements


class GoldErrorsMixin:
    """Refused gold writes as HTTP answers: 400 bad content, 403 not allowed, 409 stale or wrong status."""

    def handle_exception(self, exc):
        if isinstance(exc, GoldConflict):
            return Response(
                {
                    "detail": str(exc),
                    "code": "version_conflict",
                    "current": GoldTrajectorySerializer(exc.current).data,
                    "yours": self.request.data,
                },
                status=status.HTTP_409_CONFLICT,
            )
        if isinstance(exc, RequirementsConflict):
            return Response(
                {"detail": str(exc), "code": "version_conflict", "current": exc.current, "yours": self.request.data},
                status=status.HTTP_409_CONFLICT,
            )
        if isinstance(exc, GoldValidationError):
            return Response({"detail": str(exc), "code": "invalid", "errors": exc.errors},
                            status=status.HTTP_400_BAD_REQUEST)
        if isinstance(exc, GoldPermissionDenied):
            return Response({"detail": str(exc), "code": "permission_denied"}, status=status.HTTP_403_FORBIDDEN)
        if isinstance(exc, GoldWorkflowError):
            return Response({"detail": str(exc), "code": "status"}, status=status.HTTP_409_CONFLICT)
        if isinstance(exc, GoldError):
            return Response({"detail": str(exc), "code": "invalid"}, status=status.HTTP_400_BAD_REQUEST)
        return super().handle_exception(exc)


class StepWriteSchema(StepInputSerializer, VersionSerializer):
    """Documents a step write: the step's fields and the version the client read."""


class StepInsertSchema(StepWriteSchema):
    position = serializers.IntegerField(min_value=1, required=False, help_text="1-based; default: at the end.")


GOLD_WRITE_RESPONSES = {200: GoldTrajectorySerializer, 409: CONFLICT_RESPONSE}
REQUIREMENTS_SCHEMA = inline_serializer("TaskRequirements", {
    "benchmark": serializers.CharField(),
    "task_id": serializers.CharField(),
    "requirements": serializers.ListField(child=serializers.CharField()),
    "source": serializers.CharField(),
})


def _required_version(data) -> int:
    serializer = VersionSerializer(data=data)
    serializer.is_valid(raise_exception=True)
    return serializer.validated_data["version"]


def _gold_response(gold_id: int, code: int = status.HTTP_200_OK) -> Response:
    gold = GoldTrajectory.objects.select_related("task", "annotator").prefetch_related("steps", "reviews").get(
        pk=gold_id
    )
    return Response(GoldTrajectorySerializer(gold).data, status=code)


class GoldFilter(django_filters.FilterSet):
    benchmark = django_filters.CharFilter(field_name="task__benchmark")
    task_id = django_filters.CharFilter(field_name="task__task_id")
    annotator = django_filters.CharFilter(field_name="annotator__username")
    status = django_filters.ChoiceFilter(choices=GoldTrajectory._meta.get_field("status").choices)

    class Meta:
        model = GoldTrajectory
        fields = ("benchmark", "task_id", "annotator", "status")


@extend_schema(tags=["gold"])
class GoldListCreate(GoldErrorsMixin, generics.ListAPIView):
    """List the gold trajectories you may see; POST records yours for a task."""

    serializer_class = GoldTrajectorySerializer
    filterset_class = GoldFilter
    ordering_fields = ("id", "created_at", "updated_at", "status", "version")

    def get_queryset(self):
        return (
            visible_gold(self.request.user)
            .select_related("task", "annotator")
            .prefetch_related("steps", "reviews")
            .order_by("task__benchmark", "task__number", "task__task_id", "pk")
        )

    @extend_schema(request=GoldInputSerializer, responses={201: GoldTrajectorySerializer, 404: ErrorSerializer})
    def post(self, request):
        serializer = GoldInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        if not data.get("task_id"):
            raise ValidationError({"task_id": ["This field is required."]})
        task = get_object_or_404(Task, benchmark=data["benchmark"], task_id=data["task_id"])
        gold = create_gold(task, user=request.user, content=serializer.content(), submit=data["submit"])
        return _gold_response(gold.pk, status.HTTP_201_CREATED)


@extend_schema(tags=["gold"])
class GoldDetail(GoldErrorsMixin, APIView):
    """Read one gold trajectory; PUT replaces its content, PATCH changes the fields given."""

    def get_gold(self, pk: int) -> GoldTrajectory:
        return get_object_or_404(visible_gold(self.request.user), pk=pk)

    @extend_schema(responses=GoldTrajectorySerializer)
    def get(self, request, pk: int):
        return _gold_response(self.get_gold(pk).pk)

    @extend_schema(request=GoldInputSerializer, responses=GOLD_WRITE_RESPONSES)
    def put(self, request, pk: int, partial: bool = False):
        gold = self.get_gold(pk)
        serializer = GoldInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        if "version" not in serializer.validated_data:
            raise ValidationError({"version": ["The version you read is required."]})
        content = serializer.content(gold_content(gold) if partial else None)
        save_gold(gold.pk, user=request.user, version=serializer.validated_data["version"], content=content,
                  submit=serializer.validated_data["submit"])
        return _gold_response(gold.pk)

    @extend_schema(request=GoldInputSerializer, responses=GOLD_WRITE_RESPONSES)
    def patch(self, request, pk: int):
        return self.put(request, pk, partial=True)


@extend_schema(tags=["gold"], request=VersionSerializer, responses=GOLD_WRITE_RESPONSES)
class GoldSubmit(GoldErrorsMixin, APIView):
    def post(self, request, pk: int):
        gold = get_object_or_404(visible_gold(request.user), pk=pk)
        submit_gold(gold.pk, user=request.user, version=_required_version(request.data))
        return _gold_response(gold.pk)


@extend_schema(tags=["gold"], request=ReviewInputSerializer, responses=GOLD_WRITE_RESPONSES)
class GoldReviewCreate(GoldErrorsMixin, APIView):
    def post(self, request, pk: int):
        gold = get_object_or_404(visible_gold(request.user), pk=pk)
        serializer = ReviewInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        review_gold(gold.pk, reviewer=request.user, **serializer.validated_data)
        return _gold_response(gold.pk)


@extend_schema(tags=["gold"])
class GoldStepList(GoldErrorsMixin, APIView):
    """The steps of one gold trajectory; POST inserts a step at `position` (1-based; default: at the end)."""

    @extend_schema(responses=GoldStepSerializer(many=True))
    def get(self, request, pk: int):
        gold = get_object_or_404(visible_gold(request.user), pk=pk)
        return Response(GoldStepSerializer(gold.steps.all(), many=True).data)

    @extend_schema(request=StepInsertSchema, responses={201: GoldTrajectorySerializer, 409: CONFLICT_RESPONSE})
    def post(self, request, pk: int):
        gold = get_object_or_404(visible_gold(request.user), pk=pk)
        version = _required_version(request.data)
        serializer = StepInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        step = GoldStepRecord(**serializer.validated_data)
        position = request.data.get("position")

        def insert(steps: list[GoldStepRecord]) -> None:
            if position is None:
                steps.append(step)
                return
            if not isinstance(position, int) or not 1 <= position <= len(steps) + 1:
                raise GoldValidationError({"position": f"expected a whole number from 1 to {len(steps) + 1}"})
            steps.insert(position - 1, step)

        gold = edit_gold_steps(gold.pk, user=request.user, version=version, change=insert)
        return _gold_response(gold.pk, status.HTTP_201_CREATED)


@extend_schema(tags=["gold"])
class GoldStepDetail(GoldErrorsMixin, APIView):
    """One step by its 1-based index: PUT replaces it, PATCH changes the fields given, DELETE removes it
    (pass the version as `?version=N` or in the body)."""

    def get_gold(self, pk: int) -> GoldTrajectory:
        return get_object_or_404(visible_gold(self.request.user), pk=pk)

    @extend_schema(responses=GoldStepSerializer)
    def get(self, request, pk: int, index: int):
        step = get_object_or_404(self.get_gold(pk).steps, index=index)
        return Response(GoldStepSerializer(step).data)

    def _change(self, request, pk: int, index: int, change) -> Response:
        gold = self.get_gold(pk)
        data = request.data if request.data else request.query_params
        version = _required_version(data)

        def at_index(steps: list[GoldStepRecord]) -> None:
            if not 1 <= index <= len(steps):
                raise NotFound(f"gold trajectory {gold.pk} has no step {index}")
            change(steps, index - 1)

        edit_gold_steps(gold.pk, user=request.user, version=version, change=at_index)
        return _gold_response(gold.pk)

    @extend_schema(request=StepWriteSchema, responses=GOLD_WRITE_RESPONSES)
    def put(self, request, pk: int, index: int, partial: bool = False):
        serializer = StepInputSerializer(data=request.data, partial=partial)
        serializer.is_valid(raise_exception=True)
        given = serializer.validated_data  # on PATCH, only the fields sent

        def replace_step(steps: list[GoldStepRecord], position: int) -> None:
            steps[position] = replace(steps[position], **given) if partial else GoldStepRecord(**given)

        return self._change(request, pk, index, replace_step)

    @extend_schema(request=StepWriteSchema, responses=GOLD_WRITE_RESPONSES)
    def patch(self, request, pk: int, index: int):
        return self.put(request, pk, index, partial=True)

    @extend_schema(
        request=None, responses=GOLD_WRITE_RESPONSES,
        parameters=[OpenApiParameter("version", int, required=True, description="The version you read.")],
    )
    def delete(self, request, pk: int, index: int):
        return self._change(request, pk, index, lambda steps, position: steps.pop(position))


@extend_schema(tags=["gold"])
class TaskRequirements(GoldErrorsMixin, APIView):
    """A task's requirements (Partial Success phrases); PUT stores the annotator's list.

    Send `expected` (the list you loaded) to be told, instead of overwriting, when someone else
    changed it in the meantime."""

    def get_task(self, benchmark: str, task_id: str) -> Task:
        return get_object_or_404(Task, benchmark=benchmark, task_id=task_id)

    def _body(self, task: Task) -> dict:
        return {
            "benchmark": task.benchmark,
            "task_id": task.task_id,
            "requirements": task.requirements,
            "source": task.requirements_source,
        }

    @extend_schema(responses=REQUIREMENTS_SCHEMA)
    def get(self, request, benchmark: str, task_id: str):
        return Response(self._body(self.get_task(benchmark, task_id)))

    @extend_schema(request=RequirementsInputSerializer,
                   responses={200: REQUIREMENTS_SCHEMA, 409: CONFLICT_RESPONSE})
    def put(self, request, benchmark: str, task_id: str):
        task = self.get_task(benchmark, task_id)
        serializer = RequirementsInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        task = update_requirements(task.pk, user=request.user, **serializer.validated_data)
        return Response(self._body(task))


class GoldImportSerializer(serializers.Serializer):
    file = serializers.FileField(help_text="xlsx, CSV, gold/v1 JSON, or Mind2Web action sequences (JSON).")
    annotator = serializers.CharField(required=False, allow_blank=True, default="",
                                      help_text="Who the gold is recorded under; default: you.")
    status = serializers.CharField(required=False, default=GoldStatus.APPROVED,
                                   help_text=f"One of {', '.join(GoldStatus.values)}.")
    benchmark = serializers.CharField(required=False, default="webarena", max_length=64,
                                      help_text="Benchmark of the task ids in sheets (Mind2Web files make their own).")


@extend_schema(tags=["gold"], request={"multipart/form-data": GoldImportSerializer},
               responses={200: inline_serializer("GoldImportReport", {
                   "file": serializers.CharField(), "format": serializers.CharField(),
                   "benchmark": serializers.CharField(), "tasks": serializers.IntegerField(),
                   "gold_trajectories": serializers.IntegerField(), "steps": serializers.IntegerField(),
                   "created": serializers.IntegerField(), "updated": serializers.IntegerField(),
                   "unchanged": serializers.IntegerField(),
                   "missing_tasks": serializers.ListField(child=serializers.CharField()),
                   "unplaced": serializers.ListField(child=serializers.DictField()),
                   "defined_tasks": serializers.DictField(help_text="Tasks the file itself defines (Mind2Web)."),
               }), 400: ErrorSerializer})
class GoldImport(APIView):
    """POST a gold file (reviewers): the same import as `manage.py import_gold` and the import page."""

    parser_classes = [MultiPartParser]

    def post(self, request):
        if not has_role(request.user, REVIEWER):
            raise PermissionDenied("importing gold needs the reviewer role")
        serializer = GoldImportSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data, upload = serializer.validated_data, serializer.validated_data["file"]
        try:
            if upload.size > MAX_GOLD_UPLOAD_BYTES:
                raise GoldFormatError(f"larger than {MAX_GOLD_UPLOAD_BYTES // (1024 * 1024)} MB", where=upload.name)
            parsed = read_gold_bytes(upload.read(), detect_format(upload.name), name=upload.name,
                                     benchmark=data["benchmark"])
            report = import_gold(parsed, file_name=upload.name,
                                 annotator=data["annotator"].strip() or request.user.get_username(),
                                 status=data["status"], benchmark=data["benchmark"])
        except ValueError as exc:  # GoldFormatError names the file and entry or row
            raise ValidationError({"file": str(exc)}) from None
        return Response(report.to_dict())
