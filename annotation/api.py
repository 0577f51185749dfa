"""REST endpoints for gold trajectories, their steps and task requirements.

Every write carries the `version` the client last read; a stale one is answered with 409 and
both versions (`current` as stored, `yours` as sent), never by overwriting.
"""

from dataclasses import replace

import django_filters
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from drf_spectacular.types import OpenApiTypes
from rest_framework import generics, permissions, serializers, status
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.parsers import MultiPartParser
from rest_framework.response import Response
from rest_framework.views import APIView

from infrastructure.api_schema import CONFLICT_RESPONSE, ErrorSerializer
from trajectories.models import Task

from .errors import (
    GoldConflict,
    GoldError,
    GoldPermissionDenied,
    GoldValidationError,
    GoldWorkflowError,
    RequirementsConflict,
    TaskWithoutText,
)
from .formats import detect_format, read_gold_bytes
from .gold_records import GoldFormatError, GoldStepRecord
from .models import GoldCheckJob, GoldFlag, GoldTrajectory
from .permissions import can_review_gold, visible_gold
from .selectors import gold_content
from accounts.roles import REVIEWER, has_role
from .serializers import (
    DismissSerializer,
    GoldCheckJobSerializer,
    GoldFlagSerializer,
    GoldImportSerializer,
    GoldInputSerializer,
    GoldStepSerializer,
    GoldTrajectorySerializer,
    RequirementsInputSerializer,
    ReviewInputSerializer,
    StepInputSerializer,
    VersionSerializer,
)
from .services.gold_editing import (
    check_may_record, check_may_write, create_gold, edit_gold_steps, save_gold, submit_gold,
)
from .selectors import latest_gold_check, open_flags
from .services.gold_checks import dismiss_flag, start_gold_check
from .services.gold_import import import_gold
from .views import MAX_GOLD_UPLOAD_BYTES
from .services.gold_review import REVIEW_DENIED, review_gold
from .services.reference import set_reference
from .services.requirements import check_may_edit_requirements, update_requirements


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
        if isinstance(exc, TaskWithoutText):
            return Response({"detail": str(exc), "code": "no_task_text"}, status=status.HTTP_400_BAD_REQUEST)
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
    gold = GoldTrajectory.objects.select_related("task", "annotator", "imported_by").prefetch_related(
        "steps", "reviews"
    ).get(pk=gold_id)
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
            .select_related("task", "annotator", "imported_by")
            .prefetch_related("steps", "reviews")
            .order_by("task__benchmark", "task__number", "task__task_id", "pk")
        )

    @extend_schema(request=GoldInputSerializer, responses={201: GoldTrajectorySerializer, 404: ErrorSerializer})
    def post(self, request):
        check_may_record(request.user)
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
        check_may_write(request.user, gold)
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
        check_may_write(request.user, gold, for_submit=True)
        submit_gold(gold.pk, user=request.user, version=_required_version(request.data))
        return _gold_response(gold.pk)


@extend_schema(tags=["gold"], request=ReviewInputSerializer, responses=GOLD_WRITE_RESPONSES)
class GoldReviewCreate(GoldErrorsMixin, APIView):
    def post(self, request, pk: int):
        gold = get_object_or_404(visible_gold(request.user), pk=pk)
        if not can_review_gold(request.user, gold):  # permission before the body's validity
            raise GoldPermissionDenied(REVIEW_DENIED)
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
        check_may_write(request.user, gold)
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
        check_may_write(request.user, gold)
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
        check_may_edit_requirements(request.user)
        serializer = RequirementsInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        task = update_requirements(task.pk, user=request.user, **serializer.validated_data)
        return Response(self._body(task))


class IsReviewer(permissions.BasePermission):
    message = "this needs the reviewer role"

    def has_permission(self, request, view):
        return has_role(request.user, REVIEWER)


@extend_schema(tags=["gold"])
class GoldImport(GoldErrorsMixin, APIView):
    """Import a gold file like the reviewer's import page, under the reviewer's name or on behalf of
    an existing annotator; the answer is the import report, with every numbering anomaly the
    importer resolved (`strict` refuses such a file instead)."""

    permission_classes = [IsReviewer]
    parser_classes = [MultiPartParser]

    @extend_schema(request={"multipart/form-data": GoldImportSerializer},
                   responses={201: OpenApiTypes.OBJECT, 400: ErrorSerializer})
    def post(self, request):
        serializer = GoldImportSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        upload = data["file"]
        try:
            if upload.size > MAX_GOLD_UPLOAD_BYTES:
                raise GoldFormatError(f"larger than {MAX_GOLD_UPLOAD_BYTES // (1024 * 1024)} MB", where=upload.name)
            parsed = read_gold_bytes(upload.read(), detect_format(upload.name), name=upload.name,
                                     benchmark=data["benchmark"])
            report = import_gold(parsed, file_name=upload.name,
                                 annotator=data["annotator"].strip() or request.user.get_username(),
                                 status=data["status"], benchmark=data["benchmark"], imported_by=request.user,
                                 strict=data["strict"], reference=data["reference"])
        except ValueError as exc:  # GoldFormatError names the file and row
            return Response({"detail": str(exc), "code": "invalid"}, status=status.HTTP_400_BAD_REQUEST)
        return Response(report.to_dict(), status=status.HTTP_201_CREATED)


@extend_schema(tags=["gold"])
class GoldSetReference(GoldErrorsMixin, APIView):
    """Make an approved gold its task's reference gold (reviewers)."""

    @extend_schema(request=None, responses=GOLD_WRITE_RESPONSES)
    def post(self, request, pk: int):
        gold = get_object_or_404(visible_gold(request.user), pk=pk)
        set_reference(gold.pk, user=request.user)
        return _gold_response(gold.pk)


QUALITY_SCHEMA = inline_serializer("GoldQuality", {
    "benchmark": serializers.CharField(),
    "job": GoldCheckJobSerializer(allow_null=True),
    "flags": GoldFlagSerializer(many=True),
})


@extend_schema(tags=["gold"])
class GoldQuality(APIView):
    """The open flags of a benchmark's gold and its latest quality-check job; POST runs the checks."""

    permission_classes = [IsReviewer]

    @extend_schema(parameters=[OpenApiParameter("benchmark", str, description="Default: webarena")],
                   responses=QUALITY_SCHEMA)
    def get(self, request):
        benchmark = request.query_params.get("benchmark", "webarena")
        job = latest_gold_check(GoldCheckJob.Kind.QUALITY, benchmark)
        return Response({
            "benchmark": benchmark, "job": GoldCheckJobSerializer(job).data if job else None,
            "flags": GoldFlagSerializer(open_flags(benchmark), many=True).data,
        })

    @extend_schema(request=inline_serializer("GoldQualityRun", {"benchmark": serializers.CharField(required=False)}),
                   responses={202: GoldCheckJobSerializer})
    def post(self, request):
        job = start_gold_check(GoldCheckJob.Kind.QUALITY, benchmark=str(request.data.get("benchmark", "webarena")),
                               user=request.user)
        return Response(GoldCheckJobSerializer(job).data, status=status.HTTP_202_ACCEPTED)


@extend_schema(tags=["gold"])
class GoldCheckJobDetail(generics.RetrieveAPIView):
    """Progress and result of a quality-check or agreement job."""

    permission_classes = [IsReviewer]
    serializer_class = GoldCheckJobSerializer
    queryset = GoldCheckJob.objects.all()


@extend_schema(tags=["gold"])
class GoldFlagDismiss(GoldErrorsMixin, APIView):
    """Dismiss a flag with a reason; later runs of the checks leave it dismissed."""

    permission_classes = [IsReviewer]

    @extend_schema(request=DismissSerializer, responses={200: GoldFlagSerializer})
    def post(self, request, pk: int):
        flag = get_object_or_404(GoldFlag, pk=pk)
        serializer = DismissSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        return Response(GoldFlagSerializer(dismiss_flag(flag.pk, user=request.user, **serializer.validated_data)).data)
