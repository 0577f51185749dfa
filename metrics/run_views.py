"""The run list, the run page and the trajectory viewer: they show runs and their trajectories with
their evaluations, scores and verdicts, so they belong to metrics, the app on top, rather than to
trajectories (which they read)."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.db.models import prefetch_related_objects
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from accounts.roles import ANNOTATOR, has_role
from failures.permissions import REFUSAL, may_attribute
from failures.selectors import failure_panel, run_failures
from judges.outcome_judging import NO_OUTCOME_JUDGE
from metrics.definitions.agent_response import task_answer_check
from metrics.forms import EvaluationForm, OutcomeJudgeForm
from metrics.models import EvaluationJob
from metrics.permissions import can_change_evaluation, can_evaluate
from metrics.selectors.jobs_and_scores import run_evaluations, stale_scores, trajectory_evaluation
from metrics.selectors.latest_evaluations import latest_evaluations
from metrics.selectors.leaderboard import success_sources
from metrics.selectors.verdicts_per_task import one_run, success_counts, trajectory_verdicts
from metrics.services.failure_attribution import NoEvaluation, attribute_from_gold
from metrics.services.runs import RunNameError, delete_run, deletion_of, rename_run
from metrics.subsets import run_subsets
from trajectories import selectors
from trajectories.forms import TrajectoryFilterForm
from trajectories.models import AgentRun
from trajectories.permissions import can_import_into
from trajectories.services.tallies import fresh_tallies
from trajectories.verdict_agreement import COMBINED, HUMAN

TRAJECTORIES_PER_PAGE = 100


@login_required
@require_GET
def run_list(request):
    runs = list(selectors.runs_overview())
    run_ids = [run.pk for run in runs]
    fresh_tallies(run_ids)
    counts = success_counts(run_ids, latest_evaluations(run_ids))
    labels = {source: label for source, label in success_sources().items() if source != COMBINED}
    return render(request, "metrics/run_list.html",
                  {"rows": [(run, counts[run.pk], counts[run.pk].rates(labels)) for run in runs]})


def _changeable_run(request, pk: int) -> AgentRun:
    run = get_object_or_404(AgentRun, pk=pk)
    if not can_import_into(request.user, run):
        raise PermissionDenied("only the run's uploader and admins may rename or delete it")
    return run


@login_required
@require_POST
def run_rename(request, pk: int):
    run = _changeable_run(request, pk)
    try:
        rename_run(run, request.POST.get("name", ""))
    except RunNameError as error:
        messages.error(request, f"Not renamed: {error}.")
    else:
        messages.success(request, "Run renamed.")
    return redirect("metrics:run-detail", pk=run.pk)


@login_required
@require_http_methods(["GET", "POST"])
def run_delete(request, pk: int):
    """A confirmation that says what goes with the run; deleted on POST."""
    run = _changeable_run(request, pk)
    if request.method == "POST":
        name = run.name
        delete_run(run)
        messages.success(request, f"Run {name} deleted.")
        return redirect("metrics:run-list")
    return render(request, "metrics/run_delete.html", {"run": run, "deletion": deletion_of(run)})


@login_required
@require_GET
def run_detail(request, pk: int):
    return run_page(request, get_object_or_404(selectors.runs_overview(), pk=pk))


def run_page(request, run: AgentRun, *, evaluate_form: EvaluationForm | None = None, status: int = 200):
    """A run's page; `evaluate_form` is a refused evaluation request shown again with its errors and choices."""
    form = TrajectoryFilterForm(request.GET, sites=selectors.run_sites(run))
    trajectories = selectors.run_trajectories(run, form.filters())
    verdicts = one_run(run)
    disagreements = verdicts.disagreements()
    disagree = request.GET.get("disagree", "")
    without_trajectory = [task for task in verdicts.tasks.values() if task.trajectory_id is None]
    if disagree in disagreements:
        trajectories = trajectories.filter(pk__in=[task.trajectory_id for task in disagreements[disagree]])
        without_trajectory = [task for task in without_trajectory if task in disagreements[disagree]]
    page = Paginator(trajectories, TRAJECTORIES_PER_PAGE).get_page(request.GET.get("page"))
    query = request.GET.copy()
    query.pop("page", None)
    latest = latest_evaluations([run.pk]).get(run.pk)
    latest_job = EvaluationJob.objects.get(pk=latest.job_id) if latest else None
    stale = stale_scores([latest.job_id]).get(latest.job_id, 0) if latest else 0
    may_evaluate = bool(run.trajectory_count) and can_evaluate(request.user, [run])
    if evaluate_form is None and may_evaluate and not verdicts.results_only:
        evaluate_form = EvaluationForm(user=request.user)
    return render(
        request,
        "metrics/run_detail.html",
        {"run": run, "form": form, "page": page, "query": query.urlencode(),
         "subsets": run_subsets(run, latest.job_id if latest else None),
         "rows": [(trajectory, verdicts.tasks.get(trajectory.task_id)) for trajectory in page],
         "verdicts": verdicts, "disagreements": [(name, len(tasks)) for name, tasks in disagreements.items()],
         "can_grade": has_role(request.user, ANNOTATOR), "graded": selectors.graded_tasks(run, request.user),
         "disagree": disagree if disagree in disagreements else "", "without_trajectory": without_trajectory,
         "can_import": can_import_into(request.user, run), "evaluations": run_evaluations(run),
         "source_rates": selectors.source_rates(run), "label_counts": selectors.label_counts(run),
         "usage": selectors.run_usage(run),
         "latest_job": latest_job, "stale": stale,
         "can_rerun": latest_job is not None and can_change_evaluation(request.user, latest_job),
         "source_labels": success_sources(),
         "evaluate_form": evaluate_form,
         "outcome_jobs": run.outcome_jobs.select_related("judge_config")[:10],
         "outcome_form": OutcomeJudgeForm() if may_evaluate else None, "no_outcome_judge": NO_OUTCOME_JUDGE,
         "failures": run_failures(run, request.user, request.GET.get("failure_source", ""))},
        status=status,
    )


@login_required
@require_GET
def trajectory_detail(request, pk: int):
    trajectory = get_object_or_404(selectors.viewer_trajectories(), pk=pk)
    prefetch_related_objects([request.user], "groups")  # the page asks the viewer's roles many times: once
    # The first steps; the rest a page at a time, fetched as the reader scrolls (fragment=steps).
    shows = selectors.steps_show(trajectory)
    steps_page = selectors.steps_page(trajectory, shows.count, request.GET.get("steps_page"))
    views = selectors.step_views(steps_page.object_list)
    evaluation = trajectory_evaluation(trajectory, request.GET.get("job"), viewer=request.user,
                                       steps=[view.step.index for view in views])
    steps = [(view, evaluation.steps.get(view.step.index) if evaluation else None) for view in views]
    query = request.GET.copy()
    for name in ("steps_page", "fragment"):
        query.pop(name, None)
    paging = {"steps": steps, "steps_page": steps_page, "steps_query": query.urlencode() + "&" if query else "",
              "trajectory": trajectory}
    if request.GET.get("fragment") == "steps":
        return render(request, "metrics/_trajectory_steps.html", paging)
    previous, following = selectors.neighbours(trajectory)
    grades = selectors.task_grades(trajectory)
    source_verdicts = selectors.task_verdicts_by_source(trajectory.run_id, trajectory.task_id)
    task_verdicts = trajectory_verdicts(trajectory, evaluation.score if evaluation else None, grades=grades,
                                        verdicts=source_verdicts)
    grading = selectors.trajectory_grading(trajectory, request.user, grades)
    disagreements = [pair for pair in task_verdicts.verdicts.disagreements()
                     if not (grading.blind and HUMAN in pair)]
    return render(
        request,
        "metrics/trajectory_detail.html",
        {**paging, "task": trajectory.task, "evaluation": evaluation,
         "previous": previous, "next": following,
         "answer_check": task_answer_check(trajectory.task.eval_config, trajectory.final_answer),
         "task_verdicts": task_verdicts, "grading": grading, "disagreements": disagreements,
         "source_verdicts": source_verdicts, "failure": failure_panel(trajectory, request.user),
         "shows": shows},
    )


@login_required
@require_POST
def run_failures_from_gold(request, pk: int):
    """The decisive step of the run's failures from the gold path of its latest evaluation."""
    run = get_object_or_404(AgentRun, pk=pk)
    if not may_attribute(request.user, run):
        raise PermissionDenied(REFUSAL)
    try:
        attributed, scored = attribute_from_gold(run)
    except NoEvaluation as error:
        messages.error(request, f"Nothing attributed from gold: {error}.")
    else:
        messages.success(request, f"From gold: {attributed} of {scored} failed trajectories scored against gold "
                                  "left its path for good.")
    return redirect(reverse("metrics:run-detail", args=[pk]) + "#run-failures")
