"""REST endpoints of verdicts: every source per task, grader agreement, grading, grade and outcome imports.

The same services and selectors as the pages: `trajectories.services.outcomes_and_grades` writes,
`metrics.selectors.verdicts_per_task` reads. A grader does not see others' marks on a task before grading it.
"""

import contextlib
import json
from collections import defaultdict
from dataclasses import asdict

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiResponse, extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.exceptions import PermissionDenied, ValidationError
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.roles import ANNOTATOR, has_role
from infrastructure.api import valid_query
from infrastructure.api_schema import ErrorSerializer
from metrics.aggregation import site_group
from metrics.selectors.verdicts_per_source import verdicts_of
from metrics.selectors.verdicts_per_source import judges_report, judges_scope, missing_verdicts
from metrics.selectors.verdicts_per_task import agreement_report, one_run
from metrics.verdict_views import MAX_GRADES_FILE_BYTES, can_import_grades
from trajectories.formats.verdict_files import VerdictFileError
from trajectories.models import AgentRun, ResultOrigin, Task, Trajectory, VerdictKind
from trajectories.parsers import JSONParser
from trajectories.selectors import graded_tasks, trajectory_grading
from trajectories.services.outcomes_and_grades import record_grade
from trajectories.services.verdict_import import (
    GRADES, OUTCOMES, UnknownAgents, import_files, import_verdicts, parse_mapping, read_verdicts, runs_refused_to,
)

TASK_VERDICT_FIELDS = {
    "task_id": serializers.CharField(),
    "site": serializers.CharField(),
    "trajectory_id": serializers.IntegerField(allow_null=True),
    "harness": serializers.BooleanField(allow_null=True, help_text="The harness's verdict."),
    "harness_source": serializers.CharField(help_text="File it came from."),
    "check": serializers.BooleanField(allow_null=True, help_text="The offline check (string/url match)."),
    "check_source": serializers.CharField(help_text="string_match, url_match, ..."),
    "judge": serializers.BooleanField(allow_null=True, help_text="An LLM judge's 'final answer correct'."),
    "human": serializers.FloatField(allow_null=True, help_text="Graders' mean grade (1 / 0.5 / 0)."),
    "human_success": serializers.BooleanField(allow_null=True, help_text="Mean grade above 0.5."),
    "graders": serializers.IntegerField(),
    "human_hidden": serializers.BooleanField(help_text="Hidden: you grade and have not graded this task."),
    "disagreements": serializers.ListField(child=serializers.CharField(), help_text="e.g. harness-check"),
    "sources": serializers.ListField(child=serializers.DictField(), help_text=(
        "Every source's verdict, the built-in ones and the named (imported) ones: [{kind, name, model, "
        "screenshot_threshold, grader, success, label, score, labels, note}]; human ones hidden, as `human`, until you grade "
        "the task.")),
}


def _file(request, name: str = "file"):
    upload = request.FILES.get(name)
    if upload is None:
        raise ValidationError({name: "send the file as multipart form data"})
    if upload.size > MAX_GRADES_FILE_BYTES:
        raise ValidationError({name: f"{upload.name}: larger than {MAX_GRADES_FILE_BYTES // 1024 // 1024} MB"})
    return upload


def _refused(error: VerdictFileError) -> Response:
    return Response({"detail": f"{error}; nothing was stored.", "code": "import_refused"},
                    status=status.HTTP_400_BAD_REQUEST)


@extend_schema(tags=["verdicts"], responses=inline_serializer("RunVerdicts", fields={
    "run": serializers.CharField(), "results_only": serializers.BooleanField(),
    "uniform": serializers.BooleanField(allow_null=True),
    "rates": serializers.ListField(child=serializers.DictField(), help_text="[{source, label, mean, passed, count}]"),
    "disagreements": serializers.DictField(child=serializers.IntegerField()),
    "tasks": inline_serializer("TaskVerdicts", fields=TASK_VERDICT_FIELDS, many=True),
}))
class RunVerdictsView(APIView):
    """Every verdict on every task of a run: harness, offline check (latest evaluation), LLM judge, graders, and
    every named source's (`sources`)."""

    def get(self, request, pk: int):
        run = get_object_or_404(AgentRun, pk=pk)
        verdicts = one_run(run)
        blind = has_role(request.user, ANNOTATOR)
        graded = graded_tasks(run, request.user) if blind else set()
        sources = defaultdict(list)
        for verdict in verdicts_of([run.pk]):
            sources[verdict.task_id].append(verdict)

        def shown_sources(task_pk: int) -> list[dict]:
            return [_source_verdict(verdict) for verdict in sources[task_pk]
                    if not (blind and task_pk not in graded and verdict.source.kind == VerdictKind.HUMAN)]

        tasks = []
        for task in verdicts.tasks.values():
            hidden = blind and bool(task.grades) and task.task_pk not in graded
            combined = task.verdicts
            tasks.append({
                "task_id": task.task_id, "site": task.site, "trajectory_id": task.trajectory_id,
                "harness": task.harness, "harness_source": task.harness_source, "check": task.check,
                "check_source": task.check_source, "judge": task.judge,
                "human": None if hidden else combined.human, "human_success": None if hidden else task.human,
                "graders": combined.graders, "human_hidden": hidden,
                "disagreements": ["-".join(pair) for pair in combined.disagreements()
                                  if not (hidden and "human" in pair)],
                "sources": shown_sources(task.task_pk),
            })
        # Tasks that only named sources spoke on (a file of labels alone).
        for task in Task.objects.filter(pk__in=set(sources) - set(verdicts.tasks)).order_by("number", "task_id"):
            tasks.append({
                "task_id": task.task_id, "site": site_group({"sites": task.sites}),
                "trajectory_id": sources[task.pk][0].trajectory_id, "harness": None, "harness_source": "",
                "check": None, "check_source": "", "judge": None, "human": None, "human_success": None, "graders": 0,
                "human_hidden": False, "disagreements": [],
                "sources": shown_sources(task.pk),
            })
        return Response({
            "run": run.name, "results_only": verdicts.results_only, "uniform": verdicts.uniform,
            "rates": verdicts.rates(),
            "disagreements": {name: len(found) for name, found in verdicts.disagreements().items()},
            "tasks": tasks,
        })


def _source_verdict(verdict) -> dict:
    source = verdict.source
    return {"kind": source.kind, "name": source.name, "model": source.model,
            "screenshot_threshold": source.screenshot_threshold, "grader": verdict.grader, "success": verdict.success,
            "label": verdict.label, "score": verdict.score, "labels": verdict.labels, "note": verdict.note}


def _table(table) -> dict:
    return {
        "group": table.group or None, "tasks": table.tasks, "graded": table.graded, "graders": list(table.graders),
        "alpha": table.alpha,
        "pairs": [{**asdict(pair), "percent": pair.percent} for pair in table.pairs],
        "sources": [{"source": row.source, "label": row.label, **row.agreement.to_dict()} for row in table.sources],
    }


@extend_schema(tags=["verdicts"], responses=inline_serializer("VerdictAgreement", fields={
    "run": serializers.CharField(),
    "overall": serializers.DictField(help_text="{tasks, graded, graders, alpha (Krippendorff, ordinal), pairs: "
                                              "[{first, second, items, agreed, percent}], sources: [{source, label, "
                                              "accuracy, precision, recall, kappa, true_positive, ...}]}"),
    "by_site": serializers.ListField(child=serializers.DictField()),
}))
class VerdictAgreementView(APIView):
    """Agreement of human graders (Krippendorff's alpha, pairwise) and of each automatic verdict with their
    consensus, over the run and per site."""

    def get(self, request, pk: int):
        run = get_object_or_404(AgentRun, pk=pk)
        overall, by_site = agreement_report(run)
        return Response({"run": run.name, "overall": _table(overall), "by_site": [_table(t) for t in by_site]})


class JudgesQuerySerializer(serializers.Serializer):
    benchmark = serializers.CharField(required=False, allow_blank=True, default="",
                                      help_text="The runs' benchmark; the run's, else the first benchmark with "
                                                "runs, when empty.")
    run = serializers.CharField(required=False, allow_blank=True, default="",
                                help_text="One run's name: `runs` holds that run alone, and `empty_reasons` "
                                          "speak of it.")
    human = serializers.CharField(required=False, allow_blank=True, default="",
                                  help_text="Read against this human source's key (from `human_sources`) instead "
                                            "of the consensus of every human source.")


def judges_query(request) -> tuple[str, AgentRun | None, object]:
    """(benchmark, run, report) of the page's query; a 400 naming the field when the run or the human
    source is unknown."""
    data = valid_query(JudgesQuerySerializer, request).validated_data
    try:
        benchmark, run = judges_scope(data["benchmark"], data["run"])
    except ValueError as error:
        raise ValidationError({"run": str(error)}) from error
    try:
        return benchmark, run, judges_report(benchmark, data["human"])
    except ValueError as error:
        raise ValidationError({"human": str(error)}) from error


def _judge_rows(rows) -> list[dict]:
    return [{"source": row.source, "label": row.label, "kind": row.kind, **cell.to_dict()} for row, cell in rows]


@extend_schema(tags=["verdicts"], parameters=[JudgesQuerySerializer], responses=inline_serializer(
    "JudgesVsHumans", fields={
        "benchmark": serializers.CharField(),
        "reference": serializers.CharField(help_text="Empty for the human consensus, else a human source's key."),
        "reference_label": serializers.CharField(),
        "human_sources": serializers.ListField(child=serializers.DictField(), help_text="[{key, label}]"),
        "overall": serializers.ListField(child=serializers.DictField(), help_text=(
            "Over all runs, the human ceiling first: [{source, label, kind, n, unsure, accuracy, precision, "
            "recall, f1, npv, tnr, kappa, kappa_low, kappa_high, true_positive, ..., sparse}]")),
        "runs": serializers.ListField(child=serializers.DictField(), help_text=(
            "[{run, rows: [as overall]}]: each run whose tasks some source met the humans on; the chosen run alone "
            "with `run`.")),
        "empty_reasons": serializers.ListField(child=serializers.CharField(), help_text=(
            "Empty when some automatic source met a human verdict (on the chosen run, or on any); else why not, "
            "in words, and what to import next: no human verdict, no automatic verdict, or which tasks each "
            "covers when they never meet.")),
    }))
class JudgesVsHumansView(APIView):
    """Every automatic verdict source of a benchmark's runs against the human verdicts, per run and overall."""

    def get(self, request):
        benchmark, run, report = judges_query(request)
        missing = missing_verdicts(benchmark, report, run.name if run else "")
        return Response({
            "benchmark": benchmark, "reference": report.reference, "reference_label": report.reference_label,
            "human_sources": [{"key": key, "label": label} for key, label in report.human_sources],
            "overall": _judge_rows(report.rows()),
            "runs": [{"run": name, "rows": _judge_rows(rows)} for name in ([run.name] if run else report.runs)
                     if (rows := report.rows(name))],
            "empty_reasons": missing.words if missing else [],
        })


class GradeSerializer(serializers.Serializer):
    grade = serializers.ChoiceField(choices=["1", "0.5", "0"], help_text="1 correct, 0.5 partially correct, "
                                                                         "0 incorrect.")
    note = serializers.CharField(required=False, allow_blank=True, default="", max_length=2000)


GRADES_SCHEMA = inline_serializer("OutcomeGrades", fields={
    "hidden": serializers.IntegerField(help_text="Grades kept from you until you grade."),
    "grades": serializers.ListField(child=serializers.DictField(), help_text="[{grader, grade, note, origin}]"),
})


@extend_schema(tags=["verdicts"])
class TrajectoryGradesView(APIView):
    """GET the human grades of a trajectory's outcome (blind until you grade); POST your grade."""

    parser_classes = [JSONParser, FormParser, MultiPartParser]

    def _grades(self, trajectory, user) -> dict:
        grading = trajectory_grading(trajectory, user)
        return {"hidden": grading.hidden, "grades": [
            {"grader": grade.grader_name, "grade": grade.value, "note": grade.note, "origin": grade.origin}
            for grade in grading.grades
        ]}

    @extend_schema(responses=GRADES_SCHEMA)
    def get(self, request, pk: int):
        return Response(self._grades(get_object_or_404(Trajectory, pk=pk), request.user))

    @extend_schema(request=GradeSerializer, responses={200: GRADES_SCHEMA, 403: ErrorSerializer})
    def post(self, request, pk: int):
        trajectory = get_object_or_404(Trajectory, pk=pk)
        if not has_role(request.user, ANNOTATOR):
            raise PermissionDenied("grading outcomes needs the annotator or reviewer role")
        serializer = GradeSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        record_grade(trajectory, request.user, serializer.validated_data["grade"], serializer.validated_data["note"],
                     origin=ResultOrigin.API)
        return Response(self._grades(trajectory, request.user))


@extend_schema(tags=["verdicts"], request={"multipart/form-data": inline_serializer(
    "GradesUpload", fields={"file": serializers.FileField()})},
    responses={200: OpenApiResponse(description="The import report."), 400: ErrorSerializer, 403: ErrorSerializer})
class GradesImportView(APIView):
    """Import graders' marks of the run's tasks from CSV, JSON or JSONL (as `manage.py import_grades`)."""

    parser_classes = [MultiPartParser]

    def post(self, request, pk: int):
        run = get_object_or_404(AgentRun, pk=pk)
        if not can_import_grades(request.user, run):
            raise PermissionDenied("importing grades needs the reviewer role or the run's ownership")
        upload = _file(request)
        try:
            report = import_verdicts(upload.name, upload.read(), table=GRADES, run=run.name, importer=request.user,
                                     origin=ResultOrigin.API).table
        except VerdictFileError as error:
            return _refused(error)
        return Response(report.to_dict())


class OutcomesUploadSerializer(serializers.Serializer):
    file = serializers.FileField()
    run = serializers.CharField(required=False, allow_blank=True, default="", max_length=200)
    run_column = serializers.CharField(required=False, allow_blank=True, default="", max_length=100)
    task_column = serializers.CharField(required=False, allow_blank=True, default="", max_length=100)
    success_column = serializers.CharField(required=False, allow_blank=True, default="", max_length=100)
    benchmark = serializers.CharField(required=False, default="webarena", max_length=64)


@extend_schema(tags=["verdicts"], request={"multipart/form-data": OutcomesUploadSerializer},
               responses={200: OpenApiResponse(description="The import report, one entry per run."),
                          400: ErrorSerializer})
class OutcomesImportView(APIView):
    """Create or update results-only runs from per-task verdicts (as `manage.py import_outcomes`)."""

    parser_classes = [MultiPartParser]

    def post(self, request):
        serializer = OutcomesUploadSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        upload = _file(request)
        try:
            report = import_verdicts(upload.name, upload.read(), table=OUTCOMES, run=data["run"],
                                     run_column=data["run_column"], task_column=data["task_column"],
                                     success_column=data["success_column"], benchmark=data["benchmark"],
                                     user=request.user, origin=ResultOrigin.API).table
        except VerdictFileError as error:
            return _refused(error)
        return Response(report.to_dict())


class VerdictsUploadSerializer(serializers.Serializer):
    file = serializers.ListField(child=serializers.FileField(), help_text="One or more files (repeat the field).")
    run = serializers.CharField(required=False, allow_blank=True, default="", max_length=200)
    mapping = serializers.JSONField(required=False, default=dict, binary=True, help_text=(
        'Where each agent or column of the files goes: {"<agent or column>": "<run name or id>" | {"new": "<name>"} '
        '| null (left out)}, e.g. {"Operator_human_label": "operator-rerun", "SeeAct": null}; "" is the agent of a '
        "file naming none. Agents left out of it are matched to runs automatically."))
    source = serializers.CharField(required=False, allow_blank=True, default="", max_length=200)
    benchmark = serializers.CharField(required=False, allow_blank=True, default="", max_length=64)
    threshold = serializers.FloatField(required=False, allow_null=True, default=None)
    strict = serializers.BooleanField(required=False, default=False)

    def validate_mapping(self, value):
        try:
            return parse_mapping(value)
        except ValueError as error:
            raise serializers.ValidationError(str(error)) from None


@extend_schema(tags=["verdicts"], request={"multipart/form-data": VerdictsUploadSerializer},
               responses={200: OpenApiResponse(description="One report per file."),
                          400: OpenApiResponse(description="The files refused, and the reports of those stored.")})
class VerdictsImportView(APIView):
    """Verdicts of any source, file by file (as `manage.py import_verdicts`): records that cannot be stored are
    left out and named in `problems`; a file none of whose records can be stored (`strict`: any) is refused."""

    parser_classes = [MultiPartParser]

    def post(self, request):
        named = [request.data.get("run", "")]
        with contextlib.suppress(ValueError):
            mapping = json.loads(request.data.get("mapping") or "{}")
            named += list(mapping.values()) if isinstance(mapping, dict) else []
        refused_runs = runs_refused_to(request.user, named)
        if refused_runs:
            raise PermissionDenied(f"run {refused_runs[0]!r} belongs to another account: verdicts are imported into "
                                   "one's own runs")
        serializer = VerdictsUploadSerializer(data={**request.data.dict(), "file": request.FILES.getlist("file")})
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        read, refused = [], []
        for upload in request.FILES.getlist("file"):
            if upload.size > MAX_GRADES_FILE_BYTES:
                refused.append(f"{upload.name}: larger than {MAX_GRADES_FILE_BYTES // 1024 // 1024} MB; "
                               "nothing was stored.")
                continue
            try:
                read.append(read_verdicts(upload.name, upload.read(), run=data["run"], source_name=data["source"],
                                          threshold=data["threshold"]))
            except VerdictFileError as error:
                refused.append(f"{error}; nothing was stored.")
        try:
            results = import_files(read, [data["mapping"]] * len(read), benchmark=data["benchmark"],
                                   strict=data["strict"], user=request.user, origin=ResultOrigin.API)
        except UnknownAgents as error:
            raise ValidationError({"mapping": f"{error}; nothing was stored"}) from None
        imported = [result.to_dict() for result in results if not isinstance(result, VerdictFileError)]
        refused += [f"{result}; nothing was stored." for result in results if isinstance(result, VerdictFileError)]
        return Response({"imported": imported, "refused": refused},
                        status=status.HTTP_400_BAD_REQUEST if refused else status.HTTP_200_OK)
