"""Pages of the trajectories app: tasks, uploads and their import jobs, outcome grades, screenshots.

The run list, the run page and the trajectory viewer show scores too, so they live in `metrics.run_views`."""

from pathlib import Path

from django.contrib import messages
from django.contrib.staticfiles import finders
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.db import transaction
from django.http import FileResponse, Http404, HttpResponse, HttpResponseNotFound, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.cache import patch_cache_control
from django.views.decorators.cache import cache_control
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from accounts.authentication import login_or_token_required
from accounts.roles import ADMIN, ANNOTATOR, has_role, role_required
from infrastructure import jobs
from infrastructure.jobs import TooManyJobs

from . import selectors
from .formats import webarena_verified
from .formats.verdict_files import VerdictFileError
from .formats.webarena_tasks import TaskConfigError
from .forms import AgentRunForm, OutcomesUploadForm, TaskImportForm, UploadForm, VerdictsUploadForm
from .models import AgentRun, ImportJob, ResultOrigin, Screenshot, Step, Task, TaskSubset, Trajectory
from .permissions import can_import_into
from .services.import_jobs import create_import_job, enqueue_import_job, retry_import_job
from .services.media_check import log_missing_once
from .services.outcomes_and_grades import record_grade
from .services.runs import get_or_create_run
from .services.subsets import import_subset_bytes
from .services.tasks import import_task_bytes
from .services.staged_uploads import discard, stage, staged_files
from .services.verdict_import import OUTCOMES, import_files, import_verdicts, read_verdicts

TASKS_PER_PAGE = 100
TASK_TRAJECTORIES_PER_PAGE = 100


_MISSING_SCREENSHOT = finders.find("img/screenshot-missing.svg")


def _screenshot_response(row: Screenshot) -> HttpResponse:
    """The image, or a 404 whose body is a placeholder that the page shows in its place."""
    try:
        response = FileResponse(row.image.open("rb"), content_type=row.content_type)
    except FileNotFoundError:
        log_missing_once("screenshot", row.image.name)
        response = HttpResponseNotFound(Path(_MISSING_SCREENSHOT).read_bytes(), content_type="image/svg+xml")
        patch_cache_control(response, no_store=True)
    else:
        patch_cache_control(response, private=True, max_age=365 * 24 * 3600, immutable=True)
    response["Content-Security-Policy"] = "default-src 'none'"
    return response


@login_required
@require_POST
def grade_trajectory(request, pk: int):
    """A reviewer's or annotator's grade of the trajectory's outcome (1 / 0.5 / 0, with a note)."""
    trajectory = get_object_or_404(Trajectory, pk=pk)
    if not has_role(request.user, ANNOTATOR):
        raise PermissionDenied("grading outcomes needs the annotator or reviewer role")
    try:
        record_grade(trajectory, request.user, request.POST.get("grade", ""), request.POST.get("note", ""))
    except ValueError as error:
        messages.error(request, f"Grade not saved: {error}.")
    else:
        messages.success(request, "Grade saved.")
    return redirect(reverse("metrics:trajectory-detail", args=[pk]) + "#grading")


@login_required
@require_GET
def step_text(request, pk: int, index: int, field: str):
    """The whole of a step's long text, which the trajectory page shows cut: plain text, never rendered."""
    if field not in selectors.PAGE_TEXTS:
        raise Http404(f"no step text {field!r}")
    try:
        text = selectors.step_text(pk, index, field)
    except Step.DoesNotExist:
        raise Http404(f"trajectory {pk} has no step {index}") from None
    response = HttpResponse(text, content_type="text/plain; charset=utf-8")
    response["Content-Security-Policy"] = "default-src 'none'"
    return response


@login_or_token_required
@require_GET
def screenshot(request, sha256: str):
    """Screenshots are addressed by the hash of their bytes, so they never change."""
    return _screenshot_response(get_object_or_404(Screenshot, sha256=sha256))


@login_or_token_required
@require_GET
@cache_control(private=True)
def media_file(request, path: str):
    """A file under MEDIA_URL, in every setting, only when a row names it and the user may see that row:
    a screenshot like its trajectory (any account), an uploaded file like its import job."""
    shot = Screenshot.objects.filter(image=path).first()
    if shot is not None:
        return _screenshot_response(shot)
    job = get_object_or_404(ImportJob, upload=path)
    _visible_job(request, job.pk)
    response = FileResponse(job.upload.open("rb"), as_attachment=True, content_type="application/octet-stream")
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
            try:
                with transaction.atomic():
                    run = get_or_create_run(data["run"], agent=data["agent"], model=data["model"],
                                            paradigm=data["paradigm"], user=request.user)
                    job = create_import_job(run, [(item.name, item) for item in data["files"]],
                                            replace=data["replace"], user=request.user, new_run=existing is None)
                    enqueue_import_job(job)
            except TooManyJobs as exc:
                form.add_error(None, str(exc.detail))
            else:
                return redirect("trajectories:import-job", pk=job.pk)
    runs = AgentRun.objects.order_by("name").values_list("name", flat=True)
    return render(request, "trajectories/upload.html", {"form": form, "runs": runs})


@login_required
@require_http_methods(["GET", "POST"])
def upload_outcomes(request):
    """Results-only runs from a file of per-task verdicts; the report says what was stored, or why nothing was."""
    form = OutcomesUploadForm(request.POST or None, request.FILES or None)
    report = None
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            report = import_verdicts(data["file"].name, data["file"].read(), table=OUTCOMES, run=data["run"].strip(),
                                     run_column=data["run_column"], task_column=data["task_column"],
                                     success_column=data["success_column"], benchmark=data["benchmark"],
                                     user=request.user, origin=ResultOrigin.WEB).table
        except VerdictFileError as error:
            form.add_error("file", f"{error}; nothing was stored.")
    return render(request, "trajectories/upload_outcomes.html", {"form": form, "report": report})


_STAGED_VERDICTS = "staged_verdicts"  # the session's key of the files between the two steps


@login_required
@require_http_methods(["GET", "POST"])
def upload_verdicts(request):
    """Verdicts of any source in two steps: the files are read and shown (what each holds, the runs its agents
    match, a choice of run per agent), then stored with the choices made; each file's report says what was
    stored and left out, or why nothing was."""
    if request.method == "POST" and "token" in request.POST:
        return _import_staged_verdicts(request)
    form = VerdictsUploadForm(request.POST or None, request.FILES or None)
    refused = []
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        options = {"run": data["run"].strip(), "source": data["source"].strip(),
                   "benchmark": data["benchmark"].strip(), "threshold": data["threshold"], "strict": data["strict"]}
        read, looks, refused = _read_verdict_files(
            request, [(upload.name, upload.read()) for upload in data["files"]], options)
        if read:
            previous = request.session.get(_STAGED_VERDICTS)
            if previous:
                discard(previous)
            staged = stage([(item.source, item.data) for item in read])
            request.session[_STAGED_VERDICTS] = {**staged, "options": options}
            return _verdict_choices(request, staged["token"], looks, options, refused)[0]
    return render(request, "trajectories/upload_verdicts.html", {"form": form, "refused": refused})


def _read_verdict_files(request, files, options) -> tuple[list, list, list[str]]:
    """(the files read, what each holds, why each other file was refused)."""
    read, looks, refused = [], [], []
    for name, data in files:
        try:
            item = read_verdicts(name, data, run=options["run"], source_name=options["source"],
                                 threshold=options["threshold"])
            looks.append(item.look(benchmark=options["benchmark"], user=request.user))
        except VerdictFileError as error:
            refused.append(f"{error}; nothing was stored.")
            continue
        read.append(item)
    return read, looks, refused


def _verdict_choices(request, token, looks, options, refused, data=None):
    """The second step: each file's agents with a choice of run (bound to `data` once submitted). (The page,
    None), or (None, each file's mapping) when every choice submitted is valid."""
    files = []
    for index, look in enumerate(looks):
        files.append({"look": look, "agents": [
            (agent, AgentRunForm(data, prefix=f"file{index}-agent{number}", initial=AgentRunForm.initial_of(agent)))
            for number, agent in enumerate(look.agents)]})
    if data is not None and all(form.is_valid() for file in files for _, form in file["agents"]):
        return None, [{agent.agent: form.mapped for agent, form in file["agents"]} for file in files]
    runs = AgentRun.objects.order_by("name")
    if not has_role(request.user, ADMIN):
        runs = runs.filter(uploaded_by=request.user)
    return render(request, "trajectories/upload_verdicts.html", {
        "token": token, "files": files, "refused": refused, "strict": options["strict"],
        "runs": runs.values_list("name", flat=True)}), None


def _import_staged_verdicts(request):
    staged = request.session.get(_STAGED_VERDICTS)
    files = staged_files(staged) if staged and staged["token"] == request.POST["token"] else None
    if files is None:
        return render(request, "trajectories/upload_verdicts.html", {"form": VerdictsUploadForm(), "refused": [
            "The files read in the first step are no longer kept (imported, replaced by a later upload, or left "
            "over a day): upload them again."]})
    options = staged["options"]
    read, looks, refused = _read_verdict_files(request, files, options)
    page, mappings = _verdict_choices(request, staged["token"], looks, options, refused, request.POST)
    if page is not None:
        return page
    results = import_files(read, mappings, benchmark=options["benchmark"], strict=options["strict"],
                           user=request.user, origin=ResultOrigin.WEB)
    discard(staged)
    del request.session[_STAGED_VERDICTS]
    return render(request, "trajectories/upload_verdicts.html", {
        "form": VerdictsUploadForm(),
        "reports": [result for result in results if not isinstance(result, VerdictFileError)],
        "refused": refused + [f"{result}; nothing was stored." for result in results
                              if isinstance(result, VerdictFileError)]})


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
@require_POST
def import_job_retry(request, pk: int):
    """Send a stalled import, or one whose worker could not read the uploads, to the workers again
    (the import itself is idempotent)."""
    job = _visible_job(request, pk)
    if job.can_retry:
        retry_import_job(job)
    return redirect(job)


@login_required
@require_GET
def import_job_progress(request, pk: int):
    job = _visible_job(request, pk)
    return JsonResponse({"status": job.status, "processed": job.processed, "total": job.total})


@login_required
@require_GET
def task_list(request):
    benchmark = request.GET.get("benchmark", "")
    subset = TaskSubset.objects.filter(name=request.GET.get("subset", "")).first()
    page = Paginator(selectors.task_list(benchmark, subset), TASKS_PER_PAGE).get_page(request.GET.get("page"))
    query = request.GET.copy()
    query.pop("page", None)
    return render(request, "trajectories/task_list.html", {
        "page": page, "benchmark": benchmark, "subset": subset, "benchmarks": selectors.task_benchmarks(),
        "subsets": TaskSubset.objects.order_by("name"), "query": query.urlencode(),
        "can_import": has_role(request.user, ADMIN),
    })


def _version_view(task: Task, other: Task) -> dict:
    """Another version of the task, and what differs, when one of the two is the Verified one."""
    changes = []
    pair = {task.benchmark: task, other.benchmark: other}
    webarena, verified = pair.get(webarena_verified.BASE_BENCHMARK), pair.get(webarena_verified.BENCHMARK)
    if webarena is not None and verified is not None:
        changes = webarena_verified.changes_against_webarena(
            *({"intent": t.intent, "eval_types": t.eval_types, "eval_config": t.eval_config} for t in (webarena, verified))
        )
    return {"task": other, "changes": changes}


@login_required
@require_GET
def task_detail(request, pk: int):
    task = get_object_or_404(Task, pk=pk)
    # A page of the runs' trajectories at a time: a task has one per run, however many runs there are.
    page = Paginator(task.trajectories.select_related("run").order_by("run__name"), TASK_TRAJECTORIES_PER_PAGE
                     ).get_page(request.GET.get("page"))
    return render(request, "trajectories/task_detail.html", {
        "task": task, "versions": [_version_view(task, other) for other in selectors.task_versions(task)],
        "subsets": selectors.task_subsets(task), "page": page,
    })


@role_required(ADMIN)
@require_http_methods(["GET", "POST"])
def task_import(request):
    """Upload a task file or a subset's id list: the same imports as `import_tasks` and `import_subset`."""
    form = TaskImportForm(request.POST or None, request.FILES or None)
    report, subset, error = None, None, ""
    if request.method == "POST" and form.is_valid():
        data, upload = form.cleaned_data, form.cleaned_data["file"]
        try:
            if data["subset"].strip():
                subset = import_subset_bytes(
                    upload.read(), upload.name, name=data["subset"],
                    benchmark=data["subset_benchmark"].strip() or "webarena", strict=data["strict"]).to_dict()
            else:
                report = import_task_bytes(upload.read(), upload.name, benchmark=data["benchmark"].strip() or None,
                                           strict=data["strict"]).to_dict()
        except (TaskConfigError, ValueError) as exc:
            error = str(exc)
    return render(request, "trajectories/task_import.html",
                  {"form": form, "report": report, "subset": subset, "error": error})
