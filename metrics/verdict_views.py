"""Pages of human outcome grading: agreement between graders and with the automatic verdicts, grade uploads."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_POST

from accounts.roles import REVIEWER, has_role
from metrics.verdicts import agreement_report
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
            report = import_verdicts(upload.name, upload.read(), table=GRADES, run=run.name).table
        except VerdictFileError as error:
            messages.error(request, f"{error}; nothing was stored.")
        else:
            messages.success(request, str(report))
    return redirect("metrics:verdict-agreement", run_pk=run.pk)
