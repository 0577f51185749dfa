"""Pages of human outcome grading: agreement between graders and with the automatic verdicts, grade uploads."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpResponse, HttpResponseBadRequest
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_POST

from accounts.roles import REVIEWER, has_role
from metrics import exports
from metrics.definitions.judges_vs_humans import MIN_ITEMS
from metrics.selectors.verdicts_per_source import judges_report, judges_scope, missing_verdicts
from metrics.selectors.verdicts_per_task import agreement_report, benchmarks_with_runs
from trajectories.formats.verdict_files import VerdictFileError
from trajectories.models import AgentRun
from trajectories.permissions import can_import_into
from trajectories.services.verdict_import import GRADES, import_verdicts

MAX_GRADES_FILE_BYTES = 20 * 1024 * 1024


def can_import_grades(user, run: AgentRun) -> bool:
    """Reviewers, and the run's owner."""
    return has_role(user, REVIEWER) or can_import_into(user, run)


@login_required
@require_GET
def agreement(request, run_pk: int):
    run = get_object_or_404(AgentRun, pk=run_pk)
    overall, by_site = agreement_report(run)
    return render(request, "metrics/verdict_agreement.html", {
        "run": run, "overall": overall, "by_site": by_site, "can_import": can_import_grades(request.user, run),
    })


@login_required
@require_POST
def upload_grades(request, run_pk: int):
    run = get_object_or_404(AgentRun, pk=run_pk)
    if not can_import_grades(request.user, run):
        raise PermissionDenied("importing grades needs the reviewer role or the run's ownership")
    upload = request.FILES.get("file")
    if upload is None:
        messages.error(request, "Choose a file of grades to import.")
    elif upload.size > MAX_GRADES_FILE_BYTES:
        messages.error(request, f"{upload.name}: larger than {MAX_GRADES_FILE_BYTES // 1024 // 1024} MB; "
                                "nothing was stored.")
    else:
        try:
            report = import_verdicts(upload.name, upload.read(), table=GRADES, run=run.name, importer=request.user).table
        except VerdictFileError as error:
            messages.error(request, f"{error}; nothing was stored.")
        else:
            messages.success(request, str(report))
    return redirect("metrics:verdict-agreement", run_pk=run.pk)


def _judges(request):
    """(benchmarks, chosen benchmark, chosen run or None, report) from `?benchmark=`, `?run=` and `?human=`;
    ValueError naming the field that is wrong."""
    try:
        benchmark, run = judges_scope(request.GET.get("benchmark", ""), request.GET.get("run", ""))
    except ValueError as error:
        raise ValueError(f"run: {error}") from None
    try:
        report = judges_report(benchmark, request.GET.get("human", ""))
    except ValueError as error:
        raise ValueError(f"human: {error}") from None
    return benchmarks_with_runs(), benchmark, run, report


@login_required
@require_GET
def judges_vs_humans(request):
    """Per run and over all runs of a benchmark; with `?run=`, that run's rows alone, and with no source
    to read against the humans, what to import next."""
    try:
        benchmarks, benchmark, run, report = _judges(request)
    except ValueError as error:
        return HttpResponseBadRequest(str(error), content_type="text/plain; charset=utf-8")
    shown = [run.name] if run else report.runs
    tables = [(name, rows) for name in shown if (rows := report.rows(name))]
    overall = report.rows()
    return render(request, "metrics/judges_vs_humans.html", {
        "benchmarks": benchmarks, "benchmark": benchmark, "run": run, "report": report, "overall": overall,
        "tables": tables, "min_items": MIN_ITEMS,
        "any_rows": bool(tables) if run else len(overall) > 1 or bool(overall[0][1].items),
        "missing": missing_verdicts(benchmark, report, run.name if run else ""),
    })


@login_required
@require_GET
def judges_vs_humans_export(request, fmt: str):
    if fmt not in exports.FORMATS:
        return HttpResponseBadRequest(f"format: {fmt!r} is not one of {', '.join(exports.FORMATS)}",
                                      content_type="text/plain; charset=utf-8")
    try:
        _, benchmark, run, report = _judges(request)
    except ValueError as error:
        return HttpResponseBadRequest(str(error), content_type="text/plain; charset=utf-8")
    only = run.name if run else ""
    response = HttpResponse(exports.to_bytes(exports.judges_frame(benchmark, report, only), fmt),
                            content_type=exports.FORMATS[fmt])
    filename = exports.export_filename("judges", fmt, [only or benchmark])
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response
