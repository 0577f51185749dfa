"""The outcome judge from a run's page: the judge chosen, what it will ask and cost shown, then started,
and its job followed as an evaluation's is. Who may start it is who may evaluate the run."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from infrastructure import jobs
from infrastructure.jobs import TooManyJobs
from judges.models import OutcomeJob
from judges.outcome_judging import NO_OUTCOME_JUDGE, estimate_outcome_job, start_outcome_job
from metrics.forms import OutcomeJudgeForm
from metrics.permissions import can_evaluate
from metrics.selectors.jobs_and_scores import job_progress
from trajectories.models import AgentRun


def _run_to_judge(request, run_pk: int) -> AgentRun:
    run = get_object_or_404(AgentRun, pk=run_pk)
    if not can_evaluate(request.user, [run]):
        raise PermissionDenied("only reviewers, admins and the run's uploader may judge its outcomes")
    return run


@login_required
@require_http_methods(["GET", "POST"])
def judge_outcomes(request, run_pk: int):
    """GET: the judge chosen (`?judge=`) and its estimate; POST: start it."""
    run = _run_to_judge(request, run_pk)
    data = request.POST if request.method == "POST" else request.GET
    form = OutcomeJudgeForm(data if "judge" in data else None)
    status, estimate = 200, None
    if form.is_bound and form.is_valid():
        config = form.cleaned_data["judge"]
        if request.method == "POST":
            try:
                job = start_outcome_job(run, config, user=request.user)
            except TooManyJobs as exc:
                messages.error(request, f"Outcome judging not started: {exc.detail}")
                status = 429
            except ValueError as exc:
                messages.error(request, f"Outcome judging not started: {exc}.")
                status = 400
            else:
                return redirect("metrics:outcome-job", pk=job.pk)
        estimate = estimate_outcome_job(run, config)
    elif form.is_bound:
        status = 400
    return render(request, "metrics/judge_outcomes.html", {
        "run": run, "form": form, "estimate": estimate, "no_judge": NO_OUTCOME_JUDGE,
        "has_judges": form.fields["judge"].queryset.exists(),
        "jobs": run.outcome_jobs.select_related("judge_config")[:20],
    }, status=status)


@login_required
@require_GET
def outcome_job(request, pk: int):
    job = get_object_or_404(OutcomeJob.objects.select_related("run", "judge_config"), pk=pk)
    return render(request, "metrics/outcome_job.html", {
        "job": job, "progress": job_progress(job), "can_retry": can_evaluate(request.user, [job.run]),
    })


@login_required
@require_POST
def outcome_job_retry(request, pk: int):
    """Send a stalled job to the workers again (a job is run once however often its message comes)."""
    job = get_object_or_404(OutcomeJob.objects.select_related("run"), pk=pk)
    if not can_evaluate(request.user, [job.run]):
        raise PermissionDenied("only reviewers, admins and the run's uploader may retry its outcome judging")
    if job.is_stalled:
        jobs.retry(job)
    return redirect("metrics:outcome-job", pk=job.pk)
