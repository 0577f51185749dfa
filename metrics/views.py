from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from infrastructure.jobs import TooManyJobs
from judges.endpoint_checks import JudgeNotChoosable
from judges.services import judge_config_for
from metrics.forms import EvaluationForm
from metrics.models import Aggregate, EvaluationJob, GoldPolicy
from metrics.permissions import can_change_evaluation, can_evaluate
from metrics.registry import SCORE_REGISTRY
from metrics.run_views import run_page
from metrics.selectors.jobs_and_scores import job_progress, null_notes, scores_off_reference, tasks_without_reference
from metrics.selectors.leaderboard import METRIC_LABELS
from metrics.services import evaluation
from trajectories.selectors import runs_overview

SUMMARY_METRICS = tuple(metric.name for metric in SCORE_REGISTRY if metric.aggregated and metric.summarized)


@login_required
def job_list(request):
    jobs = EvaluationJob.objects.select_related("judge_config").prefetch_related("runs")[:200]
    return render(request, "metrics/job_list.html", {"jobs": [(job, job_progress(job)) for job in jobs]})


@login_required
def job_detail(request, pk):
    job = get_object_or_404(EvaluationJob.objects.select_related("judge_config", "gold_annotator"), pk=pk)
    aggregates = (
        Aggregate.objects.filter(job=job, scope=Aggregate.Scope.RUN, metric__in=SUMMARY_METRICS)
        .select_related("run").order_by("run__name")
    )
    table: dict = {}
    for aggregate in aggregates:
        table.setdefault(aggregate.run, {})[aggregate.metric] = aggregate
    scores = list(
        job.scores.select_related("trajectory__task", "trajectory__run", "gold__annotator")
        .order_by("trajectory__run__name", "trajectory__task__number", "trajectory__task__task_id")[:1000]
    )
    return render(request, "metrics/job_detail.html", {
        "job": job, "progress": job_progress(job), "metrics": [METRIC_LABELS[metric] for metric in SUMMARY_METRICS],
        "summary": [(run, [row.get(m) for m in SUMMARY_METRICS]) for run, row in table.items()],
        "scores": scores, "null_notes": null_notes(scores), "can_change": can_change_evaluation(request.user, job),
        "without_reference": (list(tasks_without_reference(job)[:200]) if job.gold_policy == GoldPolicy.REFERENCE
                              else []),
        "off_reference": scores_off_reference(job),
        "without_gold": job.scores.filter(gold__isnull=True, error="").count(),
        "replaced_by": job.replaced_by.order_by("pk"),
    })


@login_required
@require_POST
def start(request, run_pk):
    run = get_object_or_404(runs_overview(), pk=run_pk)
    if not can_evaluate(request.user, [run]):
        raise PermissionDenied
    if not run.trajectory_count:
        messages.error(request, f"Run {run.name} holds no trajectories: there is nothing to evaluate.")
        return redirect("metrics:run-detail", pk=run.pk)
    form = EvaluationForm(request.POST, user=request.user)
    if not form.is_valid():
        # The run's page again, with the choices made and each error once, at its field.
        return run_page(request, run, evaluate_form=form, status=400)
    try:
        job = evaluation.create_evaluation(
            runs=[run], judge_config=judge_config_for(form.cleaned_data["judge"]),
            gold_policy=form.cleaned_data["gold_policy"], gold_annotator=form.cleaned_data["gold_annotator"],
            parameters=form.parameters(), user=request.user,
        )
    except TooManyJobs as exc:
        messages.error(request, f"Evaluation not started: {exc.detail}")
        return run_page(request, run, evaluate_form=form, status=429)
    except JudgeNotChoosable as exc:  # the default judge: a named one is refused by the form
        form.add_error("judge", str(exc))
        return run_page(request, run, evaluate_form=form, status=400)
    evaluation.start_evaluation(job)
    return redirect("metrics:job", pk=job.pk)


@login_required
@require_POST
def change(request, pk, action):
    job = get_object_or_404(EvaluationJob, pk=pk)
    if not can_change_evaluation(request.user, job):
        raise PermissionDenied
    if action == "cancel":
        if not evaluation.cancel_evaluation(job):
            messages.error(request, f"Evaluation #{job.pk} is already {job.get_status_display().lower()}.")
    else:
        try:
            job = evaluation.rerun_evaluation(job, request.user)
        except JudgeNotChoosable as exc:
            messages.error(request, f"Evaluation not run again: {exc}")
    return redirect("metrics:job", pk=job.pk)
