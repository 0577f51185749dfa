"""REST endpoints for importing trajectories: the same import and report as the command line."""

from django.db import transaction
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiResponse, PolymorphicProxySerializer, extend_schema, inline_serializer
from rest_framework import generics, serializers, status
from rest_framework.exceptions import PermissionDenied, ValidationError
from rest_framework.parsers import MultiPartParser
from rest_framework.response import Response
from rest_framework.reverse import reverse
from rest_framework.views import APIView

from accounts.roles import ADMIN, has_role
from infrastructure.api_schema import ErrorSerializer

from .forms import MAX_TASK_FILE_BYTES
from .models import AgentRun, ImportJob, TaskSubset
from .permissions import can_import_into
from .parsers import JSONParser
from .serializers import ImportJobSerializer, RunImportSerializer
from .services.import_jobs import create_import_job, enqueue_import_job, run_import_job
from .services.runs import get_or_create_run
from .services.subsets import import_subset_bytes
from .services.tasks import import_task_bytes


FILE_REPORTS_SCHEMA = inline_serializer("ImportedFile", many=True, fields={
    "file": serializers.CharField(),
    "status": serializers.ChoiceField(choices=("imported", "unchanged", "replaced", "failed", "skipped")),
    "kind": serializers.CharField(),
    "format": serializers.CharField(),
    "task_id": serializers.CharField(),
    "line": serializers.IntegerField(allow_null=True),
    "where": serializers.CharField(help_text="The field that was wrong, e.g. `steps[3].action`."),
    "reason": serializers.CharField(),
    "trajectory_id": serializers.IntegerField(allow_null=True),
    "notes": serializers.ListField(child=serializers.CharField()),
})
IMPORT_REPORT_SCHEMA = inline_serializer("ImportReport", {
    "run": serializers.CharField(),
    "run_id": serializers.IntegerField(allow_null=True),
    "ok": serializers.BooleanField(),
    "refused": serializers.CharField(help_text="Why nothing was read (limits), else empty."),
    "counts": serializers.DictField(child=serializers.IntegerField(), help_text="Files per status."),
    "run_removed": serializers.BooleanField(
        help_text="The run was created for this upload and removed again because nothing was stored."),
    "failures": inline_serializer("FailedRecord", many=True, fields={
        "record": serializers.CharField(help_text="File, line or record (`[3]`, `example_7`) and field."),
        "task_id": serializers.CharField(),
        "reason": serializers.CharField(),
    }, help_text="The records that failed, each alone: the file's other records are stored."),
    "files": FILE_REPORTS_SCHEMA,
    "nothing_imported": serializers.CharField(
        required=False, help_text="Present when nothing was imported: why, as a sentence."),
})


@extend_schema(
    tags=["runs"],
    request={"multipart/form-data": RunImportSerializer, "application/json": RunImportSerializer},
    responses={
        200: OpenApiResponse(IMPORT_REPORT_SCHEMA, description="Imported; per-file statuses in `files`."),
        202: ImportJobSerializer,
        400: OpenApiResponse(ErrorSerializer, description="A field of the request is wrong, or the import was "
                             "refused whole (`code` import_refused; the body also carries the import report)."),
        500: OpenApiResponse(ErrorSerializer, description="The import failed; `detail` says why."),
    },
)
class RunImport(APIView):
    """POST files (multipart) or `{"run": ..., "trajectories": [...]}` (JSON): the import report.

    With `background=true` the answer is 202 with the import job to poll instead.
    """

    parser_classes = [MultiPartParser, JSONParser]

    def post(self, request):
        serializer = RunImportSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        existing = AgentRun.objects.filter(name=data["run"].strip()).first()
        if existing is not None and not can_import_into(request.user, existing):
            raise PermissionDenied(f"run {existing.name!r} belongs to another account")
        with transaction.atomic():
            run = get_or_create_run(
                data["run"], agent=data["agent"], model=data["model"], paradigm=data["paradigm"], user=request.user
            )
            job = create_import_job(run, serializer.upload_files(), replace=data["replace"], user=request.user,
                                    new_run=existing is None)
            if data["background"]:
                enqueue_import_job(job)
        if data["background"]:
            body = ImportJobSerializer(job).data
            body["url"] = reverse("api-import-job", kwargs={"pk": job.pk}, request=request)
            return Response(body, status=status.HTTP_202_ACCEPTED)
        job = run_import_job(job.pk)
        if job.status == ImportJob.Status.FAILED:
            return Response({"detail": job.error, "code": "import_failed", "run": run.name},
                            status=status.HTTP_500_INTERNAL_SERVER_ERROR)
        if job.report["refused"]:
            return Response({**job.report, "detail": job.report["refused"], "code": "import_refused"},
                            status=status.HTTP_400_BAD_REQUEST)
        return Response(job.report)


@extend_schema(tags=["runs"])
class ImportJobDetail(generics.RetrieveAPIView):
    """An import job's status, progress and (once done) report; visible to its creator and admins."""

    serializer_class = ImportJobSerializer

    def get_object(self):
        job = get_object_or_404(ImportJob.objects.select_related("run"), pk=self.kwargs["pk"])
        if job.created_by_id != self.request.user.pk and not has_role(self.request.user, ADMIN):
            raise PermissionDenied
        return job


class TaskImportSerializer(serializers.Serializer):
    file = serializers.FileField(help_text="A task file (WebArena, WebArena-Lite, WebArena-Verified, Mind2Web-Live), "
                                           "or with `subset`, a list of task ids.")
    benchmark = serializers.CharField(required=False, allow_blank=True, default="", max_length=64,
                                      help_text="Task files: store under this benchmark instead of the file's own.")
    subset = serializers.CharField(required=False, allow_blank=True, default="", max_length=64,
                                   help_text="Define (or replace) the subset of this name from the file's task ids.")
    subset_benchmark = serializers.CharField(required=False, allow_blank=True, default="webarena", max_length=64,
                                             help_text="Whose task ids the subset lists.")
    strict = serializers.BooleanField(required=False, default=False,
                                      help_text="Refuse the whole file when an entry cannot be read or is read "
                                                "other than as written (default: skip it, or read it as meant, "
                                                "and report it).")

    def validate_file(self, upload):
        if upload.size > MAX_TASK_FILE_BYTES:
            raise serializers.ValidationError(f"{upload.name}: larger than {MAX_TASK_FILE_BYTES // (1024 * 1024)} MB")
        return upload


TASK_IMPORT_REPORT_SCHEMA = inline_serializer("TaskImportReport", {
    "source": serializers.CharField(),
    "kind": serializers.CharField(help_text="webarena, webarena-lite, webarena-verified or mind2web-live"),
    "benchmark": serializers.CharField(),
    "total": serializers.IntegerField(),
    "created": serializers.IntegerField(),
    "updated": serializers.IntegerField(),
    "unchanged": serializers.IntegerField(),
    "unachievable": serializers.IntegerField(),
    "subsets": serializers.ListField(child=serializers.DictField(), help_text="{name, tasks, outcome}"),
    "compared": serializers.IntegerField(help_text="Verified tasks whose WebArena version is stored."),
    "changes": serializers.ListField(child=serializers.DictField(),
                                     help_text="Verified: {task_id, field, webarena, verified} per change."),
    "skipped": serializers.ListField(child=serializers.DictField(),
                                     help_text="Entries left out as unreadable: {entry, task_id, field, message}."),
    "notes": serializers.ListField(child=serializers.DictField(),
                                   help_text="Values read as meant rather than as written: {entry, task_id, field, "
                                             "message}."),
})


SUBSET_IMPORT_REPORT_SCHEMA = inline_serializer("SubsetImportReport", {
    "name": serializers.CharField(),
    "benchmark": serializers.CharField(),
    "tasks": serializers.IntegerField(help_text="Task ids in the subset."),
    "outcome": serializers.CharField(help_text="created, updated or unchanged"),
    "skipped": serializers.ListField(child=serializers.DictField(),
                                     help_text="Entries left out as no task id: {entry, task_id, field, message}."),
    "notes": serializers.ListField(child=serializers.DictField(),
                                   help_text="Values read as meant rather than as written."),
})


@extend_schema(
    tags=["tasks"], request={"multipart/form-data": TaskImportSerializer},
    responses={200: OpenApiResponse(
        PolymorphicProxySerializer(component_name="TaskOrSubsetImportReport", resource_type_field_name=None,
                                   serializers=[TASK_IMPORT_REPORT_SCHEMA, SUBSET_IMPORT_REPORT_SCHEMA]),
        description="The task file's import report, or with `subset` the subset's."),
               400: OpenApiResponse(ErrorSerializer, description="The file was refused whole; `detail` names the "
                                                                 "file, entry and field.")},
)
class TaskImport(APIView):
    """POST a task file or a subset's id list (admins): the same imports as `import_tasks` and `import_subset`."""

    parser_classes = [MultiPartParser]

    def post(self, request):
        if not has_role(request.user, ADMIN):
            raise PermissionDenied("importing tasks needs the admin role")
        serializer = TaskImportSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data, upload = serializer.validated_data, serializer.validated_data["file"]
        try:
            if data["subset"].strip():
                return Response(import_subset_bytes(upload.read(), upload.name, name=data["subset"],
                                                    benchmark=data["subset_benchmark"].strip() or "webarena",
                                                    strict=data["strict"]).to_dict())
            report = import_task_bytes(upload.read(), upload.name, benchmark=data["benchmark"].strip() or None,
                                       strict=data["strict"])
        except ValueError as exc:  # TaskConfigError names the file, entry and field
            raise ValidationError({"file": str(exc)}) from None
        return Response(report.to_dict())


class SubsetSerializer(serializers.ModelSerializer):
    benchmarks = serializers.ListField(child=serializers.CharField(), read_only=True,
                                       help_text="Benchmarks whose tasks with these ids belong to the subset.")

    class Meta:
        model = TaskSubset
        fields = ("id", "name", "benchmark", "benchmarks", "task_ids", "description", "source", "created_at",
                  "updated_at")
        read_only_fields = fields


@extend_schema(tags=["tasks"])
class SubsetList(generics.ListAPIView):
    """Named task subsets (WebArena-Lite, id lists); filter the leaderboard, comparisons and exports with `subset`."""

    serializer_class = SubsetSerializer
    queryset = TaskSubset.objects.order_by("name")
