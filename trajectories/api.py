"""REST endpoints for importing trajectories: the same import and report as the command line."""

from django.db import transaction
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiResponse, extend_schema, inline_serializer
from rest_framework import generics, serializers, status
from rest_framework.exceptions import PermissionDenied
from rest_framework.parsers import MultiPartParser
from rest_framework.response import Response
from rest_framework.reverse import reverse
from rest_framework.views import APIView

from annotation.roles import ADMIN, has_role
from config.api_schema import ErrorSerializer

from .models import AgentRun, ImportJob
from .permissions import can_import_into
from .serializers import ImportJobSerializer, ImportJSONParser, RunImportSerializer
from .services.import_jobs import create_import_job, enqueue_import_job, run_import_job
from .services.runs import get_or_create_run


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
    "files": FILE_REPORTS_SCHEMA,
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

    parser_classes = [MultiPartParser, ImportJSONParser]

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
