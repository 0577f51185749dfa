"""Pages of why trajectories failed: the trajectory page's form posts here; the queue of failures
to annotate, agreement between people, a benchmark's failure types, the attribution sources against
people, and the run page's start of the offline rules."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from accounts.roles import ANNOTATOR, REVIEWER, has_role, role_required
from infrastructure.jobs import TooManyJobs
from judges.calibration import format_interval
from trajectories.models import AgentRun, Task, Trajectory

from . import search_selectors, selectors
from .permissions import REFUSAL, may_attribute
from .services.annotations import AnnotationError, record_failure_annotation, save_taxonomy
from .services.attribution import attribute_by_rules
from .services.llm_attribution import start_attribution_job
from .services.themes import request_themes
from .taxonomy import TaxonomyError, types_text


@login_required
@require_POST
def annotate(request, pk: int):
    trajectory = get_object_or_404(Trajectory.objects.select_related("task"), pk=pk)
    if not has_role(request.user, ANNOTATOR):
        raise PermissionDenied("annotating failures needs the annotator or reviewer role")
    try:
        record_failure_annotation(trajectory, request.user, step=request.POST.get("step"),
                                  failure_type=request.POST.get("failure_type", ""),
                                  agent=request.POST.get("agent", ""), note=request.POST.get("note", ""))
    except AnnotationError as error:
        messages.error(request, f"Failure annotation not saved: {error}.")
    else:
        messages.success(request, "Failure annotation saved.")
    if request.POST.get("next") == "queue":
        return redirect("failures:queue")
    return redirect(reverse("metrics:trajectory-detail", args=[pk]) + "#failure")


def _run_id(request) -> int | None:
    raw = request.GET.get("run", "")
    return int(raw) if raw.isdigit() else None


def _scope(run_id: int | None, benchmark: str) -> dict:
    """The run and benchmark chosen, and those that have attributed failures to choose from."""
    return {"run_id": run_id, "benchmark": benchmark,
            "runs": AgentRun.objects.filter(trajectories__failure_attributions__isnull=False).distinct()
            .order_by("name"),
            "benchmarks": Task.objects.filter(trajectories__failure_attributions__isnull=False)
            .values_list("benchmark", flat=True).distinct().order_by("benchmark")}


@role_required(ANNOTATOR)
@require_GET
def queue(request):
    run_id = _run_id(request)
    return render(request, "failures/queue.html", {
        "trajectories": selectors.annotation_queue(request.user, run_id),
        "runs": AgentRun.objects.filter(trajectories__success=False).distinct().order_by("name"),
        "run_id": run_id, "limit": selectors.QUEUE_LENGTH,
    })


@login_required
@require_GET
def agreement(request):
    run_id, benchmark = _run_id(request), request.GET.get("benchmark", "").strip()
    result = selectors.human_agreement(run_id, benchmark)
    rows = [(label, figure, format_interval(figure.interval)) for label, figure in (
        ("Exact decisive step", result.exact), ("Within ±1 step", result.within_1),
        ("Within ±3 steps", result.within_3), ("Responsible agent", result.agent),
        ("Failure type (share equal)", result.failure_type), ("Failure type (Cohen's κ)", result.type_kappa))]
    return render(request, "failures/agreement.html", {
        "result": result, "rows": rows, **_scope(run_id, benchmark)})


@login_required
@require_http_methods(["GET", "POST"])
def taxonomy(request, benchmark: str):
    may_edit = has_role(request.user, REVIEWER)
    text, error = types_text(selectors.taxonomy(benchmark)), ""
    if request.method == "POST":
        if not may_edit:
            raise PermissionDenied("editing a benchmark's failure types needs the reviewer role")
        text = request.POST.get("types", "")
        try:
            save_taxonomy(benchmark, text)
        except TaxonomyError as problem:
            error = str(problem)
        else:
            messages.success(request, f"Failure types of {benchmark} saved.")
            return redirect("failures:taxonomy", benchmark=benchmark)
    return render(request, "failures/taxonomy.html", {
        "benchmark": benchmark, "types": selectors.taxonomy(benchmark), "text": text, "error": error,
        "may_edit": may_edit, "own": selectors.has_own_taxonomy(benchmark),
    }, status=400 if error else 200)


@login_required
@require_GET
def attribution(request):
    run_id, benchmark = _run_id(request), request.GET.get("benchmark", "").strip()
    people = selectors.human_sources(run_id, benchmark)
    reference = next((source for source in people if str(source.pk) == request.GET.get("reference", "")), None)
    rows = [(row, [(figure, format_interval(figure.interval)) for figure in (
        row.result.agent, row.result.exact, row.result.within_1, row.result.within_3, row.result.failure_type,
        row.result.type_kappa)]) for row in selectors.attribution_table(run_id, benchmark, reference)]
    return render(request, "failures/attribution.html", {
        "rows": rows, "people": people, "reference": reference, **_scope(run_id, benchmark)})


@login_required
@require_POST
def run_rules(request, pk: int):
    run = get_object_or_404(AgentRun, pk=pk)
    if not may_attribute(request.user, run):
        raise PermissionDenied(REFUSAL)
    count = attribute_by_rules(run)
    messages.success(request, f"The offline rules attributed {count} failed trajector{'y' if count == 1 else 'ies'}.")
    return redirect(reverse("metrics:run-detail", args=[pk]) + "#run-failures")


@login_required
@require_POST
def run_llm(request, pk: int):
    """Start an LLM method over the run's failures, as a background job."""
    run = get_object_or_404(AgentRun, pk=pk)
    if not may_attribute(request.user, run):
        raise PermissionDenied(REFUSAL)
    config = selectors.attribution_judges().filter(name=request.POST.get("judge", "")).first()
    if config is None:
        messages.error(request, "Not started: choose an OpenAI-compatible judge.")
    else:
        try:
            job = start_attribution_job(run, config, request.POST.get("method", ""), user=request.user)
        except (ValueError, TooManyJobs) as error:
            messages.error(request, f"Not started: {error}.")
        else:
            messages.success(request, f"Failure attribution #{job.pk} started: {job.total} failed trajector"
                                      f"{'y' if job.total == 1 else 'ies'}, {job.get_method_display()}, judge "
                                      f"{config.name}.")
    return redirect(reverse("metrics:run-detail", args=[pk]) + "#run-failures")


@login_required
@require_http_methods(["GET", "POST"])
def themes(request):
    run_id, benchmark = _run_id(request), request.GET.get("benchmark", "").strip()
    if request.method == "POST":
        if not has_role(request.user, ANNOTATOR):
            raise PermissionDenied("recomputing failure themes needs the annotator or reviewer role")
        run = get_object_or_404(AgentRun, pk=run_id) if run_id is not None else None
        request_themes(run=run, benchmark=benchmark)
        messages.success(request, "Failure themes are being recomputed.")
        return redirect(request.get_full_path())
    view = selectors.latest_themes(run_id, benchmark)
    return render(request, "failures/themes.html", {"view": view, "may_recompute": has_role(request.user, ANNOTATOR),
                                                    **_scope(run_id, benchmark)})


@login_required
@require_GET
def search(request):
    query = request.GET.get("q", "").strip()
    try:
        filters = search_selectors.search_filters(request.GET)
    except ValueError as error:
        messages.error(request, f"Search not run: {error}.")
        filters, query = search_selectors.SearchFilters(), ""
    hits = search_selectors.search_steps(request.user, query, filters) if query else []
    return render(request, "failures/search.html", {"query": query, "filters": filters, "hits": hits,
                                                    "limit": search_selectors.LIMIT,
                                                    **search_selectors.filter_choices()})
