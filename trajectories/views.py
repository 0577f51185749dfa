"""Pages of the trajectories app: runs, the trajectory viewer, uploads and their import jobs."""

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.db import transaction
from django.http import FileResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.cache import cache_control
from django.views.decorators.http import require_GET, require_http_methods

from annotation.roles import ADMIN, has_role
from metrics.forms import EvaluationForm
from metrics.permissions import can_evaluate
from metrics.selectors import run_evaluations, trajectory_evaluation

from . import selectors
from .forms import TrajectoryFilterForm, UploadForm
from .models import AgentRun, ImportJob, Screenshot
from .permissions import can_import_into
from .services.import_jobs import create_import_job, enqueue_import_job
from .services.runs import get_or_create_run

TRAJECTORIES_PER_PAGE = 100


@login_required
@require_GET
def run_list(request):
    return render(request, "trajectories/run_list.html", {"runs": selectors.runs_overview()})


@login_required
@require_GET
def run_detail(request, pk: int):
    run = get_object_or_404(selectors.runs_overview(), pk=pk)
    form = TrajectoryFilterForm(request.GET, sites=selectors.run_sites(run))
    trajectories = selectors.run_trajectories(run, form.filters())
    page = Paginator(trajectories, TRAJECTORIES_PER_PAGE).get_page(request.GET.get("page"))
    query = request.GET.copy()
    query.pop("page", None)
    return render(
        request,
        "trajectories/run_detail.html",
        {"run": run, "form": form, "page": page, "query": query.urlencode(),
         "can_import": can_import_into(request.user, run), "evaluations": run_evaluations(run),
         "verdicts_without_trajectory": selectors.verdicts_without_trajectory(run),
         "evaluate_form": EvaluationForm() if can_evaluate(request.user, [run]) else None},
    )


@login_required
@require_GET
def trajectory_detail(request, pk: int):
    trajectory = get_object_or_404(selectors.viewer_trajectories(), pk=pk)
    previous, following = selectors.neighbours(trajectory)
    evaluation = trajectory_evaluation(trajectory, request.GET.get("job"))
    steps = [(view, evaluation.steps.get(view.step.index) if evaluation else None)
             for view in selectors.step_views(trajectory)]
    return render(
        request,
        "trajectories/trajectory_detail.html",
        {"trajectory": trajectory, "task": trajectory.task, "steps": steps, "evaluation": evaluation,
         "previous": previous, "next": following},
    )


@login_required
@require_GET
@cache_control(private=True, max_age=365 * 24 * 3600, immutable=True)
def screenshot(request, sha256: str):
    """Screenshots are addressed by the hash of their bytes, so they never change."""
    row = get_object_or_404(Screenshot, sha256=sha256)
    response = FileResponse(row.image.open("rb"), content_type=row.content_type)
    response["Content-Security-Policy"] = "default-src 'none'"
    return response


@login_required
@require_http_methods(["GET", "POST"])
def upload(request):
    form = UploadForm(request.POST or None, request.FILES or None,
                      initial={"run": request.GET.get("run", "")})
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        existing = AgentRun.objects.filter(name=data["run"].strip()).first()
        if existing is not None and not can_import_into(request.user, existing):
            form.add_error("run", f"Run {existing.name!r} belongs to another account; choose another name.")
        else:
            with transaction.atomic():
                run = get_or_create_run(data["run"], agent=data["agent"], model=data["model"],
                                        paradigm=data["paradigm"], user=request.user)
                job = create_import_job(run, [(item.name, item) for item in data["files"]],
                                        replace=data["replace"], user=request.user, new_run=existing is None)
                enqueue_import_job(job)
            return redirect("trajectories:import-job", pk=job.pk)
    runs = AgentRun.objects.order_by("name").values_list("name", flat=True)
    return render(request, "trajectories/upload.html", {"form": form, "runs": runs})


def _visible_job(request, pk: int) -> ImportJob:
    job = get_object_or_404(ImportJob.objects.select_related("run"), pk=pk)
    if job.created_by_id != request.user.pk and not has_role(request.user, ADMIN):
        raise PermissionDenied
    return job


@login_required
@require_GET
def import_job(request, pk: int):
    return render(request, "trajectories/import_job.html", {"job": _visible_job(request, pk)})


@login_required
@require_GET
def import_job_progress(request, pk: int):
    job = _visible_job(request, pk)
    return JsonResponse({"status": job.status, "processed": job.processed, "total": job.total})
