"""Pages of the leaderboard and run comparison, their charts and downloads.

The numbers come from `metrics.selectors.leaderboard`, `metrics.selectors.comparison`, `metrics.plots` and
`metrics.exports`, which the API uses too; these views only read the query string and render.
"""

from functools import wraps
from urllib.parse import urlencode

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.contrib.auth.views import redirect_to_login
from django.core.paginator import Paginator
from django.http import Http404, HttpResponse, HttpResponseBadRequest, JsonResponse, StreamingHttpResponse
from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from django.utils.functional import SimpleLazyObject
from django.views.decorators.http import require_GET

from metrics import charts, exports, plots
from metrics.aggregation import METRICS, OUTCOME_CATEGORIES
from metrics.models import PlotJob
from metrics.registry import SCORE_REGISTRY
from metrics.report_forms import CompareForm, LeaderboardForm, PlotForm
from metrics.selectors import comparison, leaderboard, verdicts_per_task
from metrics.selectors.jobs_and_scores import stale_scores
from metrics.selectors.latest_evaluations import cache_key
from metrics.selectors.leaderboard import METRIC_LABELS
from metrics.templatetags.report_tags import LeaderboardRows, route
from trajectories.models import AgentRun, Task, TaskSubset

PLOT_MAX_AGE = 300
TEXT_COLUMNS = ("name", "agent", "model", "paradigm", "benchmark")
LEADERBOARD_ORDER = ("success",) + tuple(metric for metric in METRICS if metric != "success")
# Columns a reader may hide on the leaderboard; those hidden until they choose, so that the
# table fits a 1366 px window.
INFO_COLUMNS = (("paradigm", "Paradigm"), ("benchmark", "Benchmark"), ("created", "Date"),
                ("trajectories", "Trajectories"), ("scored", "Scored"), ("evaluation", "Evaluation"),
                ("downloads", "Downloads"))
HIDDEN_BY_DEFAULT = ("paradigm", "benchmark", "trajectories", "downloads",
                     *(metric.name for metric in SCORE_REGISTRY if metric.aggregated and metric.hidden_by_default))


def public_when_enabled(view):
    """Anonymous visitors may see the page when PUBLIC_LEADERBOARD is on; otherwise a login is needed."""
    protected = login_required(view)

    @wraps(view)
    def wrapper(request, *args, **kwargs):
        return (view if settings.PUBLIC_LEADERBOARD else protected)(request, *args, **kwargs)

    return wrapper


RUNS_PER_PAGE = 50


def _query(request, **changes) -> str:
    query = request.GET.copy()
    for key, value in changes.items():
        query.pop(key, None)
        if value not in (None, ""):
            query[key] = value
    return query.urlencode()


def _sort_value(filters, key: str) -> str:
    """A header link: flips the current column; a new column starts A-Z for text, highest first for numbers."""
    descending = not filters.descending if filters.sort == key else key not in TEXT_COLUMNS
    return ("-" if descending else "") + key


@public_when_enabled
@require_GET
def leaderboard_page(request):
    form = LeaderboardForm(request.GET)
    filters = form.filters()
    ranking = leaderboard.Ranking(filters, form.sources)
    # Ranked over every run that passes the filters by the database; a screenful of them read at a time.
    page = Paginator(ranking, RUNS_PER_PAGE).get_page(request.GET.get("page"))
    board = ranking.board(page)
    sort_links = {key: _query(request, sort=_sort_value(filters, key), page=None) for key in leaderboard.SORT_KEYS}
    # The charts show what the table shows: the filters applied, never a value the table ignored.
    plot_query = urlencode({key: value for key, value in (
        ("benchmark", filters.benchmark), ("site", filters.site), ("paradigm", filters.paradigm),
        ("judge", filters.judge), ("subset", filters.subset), ("success_source", filters.success_source),
        ("failure_source", filters.failure_source), ("failure_type", filters.failure_type),
        ("sort", ("-" if filters.descending else "") + filters.sort),
    ) if value})
    judge_marks = leaderboard.judge_marks(board)
    judge_notes = leaderboard.judge_notes(judge_marks, (row.run_id for row in board.rows), LEADERBOARD_ORDER)
    stale = stale_scores(evaluation.job_id for evaluation in board.evaluations.values())
    gold_changed = [(row, stale[row.evaluation.job_id]) for row in board.rows
                    if row.evaluation and stale.get(row.evaluation.job_id)]
    labels = {**METRIC_LABELS, "success": f"Success ({board.success_label})"}
    other_metrics = [(metric, labels[metric]) for metric in LEADERBOARD_ORDER if metric != "success"]
    # The tables depend only on the query and on what each row shows, evaluations and judge marks included.
    tables_key = cache_key("leaderboard-tables", request.get_full_path(), [
        (row.run_id, row.name, row.agent, row.model, row.paradigm, row.benchmark, row.created_at, row.trajectories,
         row.evaluation, row.success_sources, row.failure_types) for row in board.rows
    ], sorted(judge_marks.items()))
    return render(request, "metrics/leaderboard.html", {
        "form": form, "filters": filters, "board": board, "tables_key": tables_key, "judge_marks": judge_marks,
        "judge_notes": judge_notes,
        "gold_changed": gold_changed, "default_hidden": HIDDEN_BY_DEFAULT,
        "column_choices": [*INFO_COLUMNS[:5], *((metric, labels[metric]) for metric in LEADERBOARD_ORDER),
                           *INFO_COLUMNS[5:]],
        "breakdown": SimpleLazyObject(lambda: leaderboard.site_breakdown(board, form.chosen_site_metric)),
        "metrics": [(metric, labels[metric]) for metric in LEADERBOARD_ORDER], "labels": labels,
        "success_label": board.success_label,
        "outcome_categories": OUTCOME_CATEGORIES,
        "sort_links": sort_links, "query": _query(request), "page": page, "page_query": _query(request, page=None),
        "site_metric": form.chosen_site_metric, "distribution_metric": form.chosen_distribution,
        "kind": form.chosen_kind,
        "plot_query": plot_query, "max_plotted": plots.MAX_RUNS,
        "rows": LeaderboardRows(
            metrics=other_metrics, success_label=board.success_label, judge_notes=judge_notes.numbers,
            export_urls=[(what, [(fmt.upper(), reverse("metrics:export", args=[what, fmt])) for fmt in exports.FORMATS])
                         for what in exports.RUN_EXPORTS],
            subset=filters.subset, run_url=route("metrics:run-detail"), job_url=route("metrics:job"),
            failure_source=filters.failure_source,
        ),
    })


@login_required
@require_GET
def compare_page(request):
    form = CompareForm(request.GET if request.GET else None)
    result = success = not_evaluated = None
    if form.is_bound and form.is_valid():
        data = form.cleaned_data
        # Success by each verdict source needs no evaluation: results-only runs compare on it alone.
        success = verdicts_per_task.paired_success(data["baseline"], data["candidate"], judge=data["judge"])
        try:
            result = comparison.compare_runs(data["baseline"], data["candidate"], judge=data["judge"],
                                             difference_metric=data["metric"] or "step_success",
                                             subset=data["subset"])
        except comparison.NotEvaluated as exc:
            if exc.run.trajectories.exists() or not exc.run.task_results.exists():
                not_evaluated = f"{exc}: evaluate it first, from its run page. Until then only success is compared"
            else:
                not_evaluated = (f"run {exc.run.name!r} is results-only (per-task verdicts, no agent steps): only "
                                 f"success is compared, the other metrics are not available")
    return render(request, "metrics/compare.html", {
        # Run choices as plain options: Django's select widget renders each option through a template.
        "form": form, "run_fields": [form["baseline"], form["candidate"]],
        "run_names": AgentRun.objects.order_by("name").values_list("name", flat=True),
        "result": result, "labels": METRIC_LABELS, "success": success, "not_evaluated": not_evaluated,
        "continuous": plots.DISTRIBUTION_METRICS, "query": _query(request),
    })


@login_required
@require_GET
def compare_task(request, baseline: int, candidate: int, task: int):
    runs = [get_object_or_404(AgentRun, pk=baseline), get_object_or_404(AgentRun, pk=candidate)]
    task_row = get_object_or_404(Task, pk=task)
    try:
        view = comparison.side_by_side(task_row, runs, viewer=request.user, judge=request.GET.get("judge", ""))
    except comparison.NotEvaluated as exc:
        raise Http404(str(exc)) from exc
    return render(request, "metrics/compare_task.html", {"view": view, "labels": METRIC_LABELS})


@public_when_enabled
@require_GET
def plot(request, name: str, fmt: str):
    """The chart, or 202 while a background job draws it (the page polls; 503 names a failed drawing, and
    the next request draws it again)."""
    try:
        plot_request = PlotForm(request.GET).plot_request(name, fmt)
        image, job = plots.plot_or_job(plot_request)
    except ValueError as exc:
        return HttpResponseBadRequest(str(exc), content_type="text/plain; charset=utf-8")
    if image is None:
        drawing = job.status != PlotJob.Status.FAILED
        response = JsonResponse({"status": job.status, "detail": "the chart is being drawn" if drawing
                                 else f"the chart could not be drawn: {job.error}"}, status=202 if drawing else 503)
        response["Retry-After"] = "1"
        return response
    response = HttpResponse(image, content_type=charts.FORMATS[fmt])
    disposition = "attachment" if request.GET.get("download") else "inline"
    response["Content-Disposition"] = f'{disposition}; filename="{plot_request.filename}"'
    response["Content-Security-Policy"] = "default-src 'none'; style-src 'unsafe-inline'"
    response["Cache-Control"] = f"private, max-age={PLOT_MAX_AGE}"
    return response


@public_when_enabled
@require_GET
def export(request, what: str, fmt: str):
    """`leaderboard` takes the leaderboard's filters; the others one or more `run` ids (and a `job`)
    and always need a login."""
    if what not in exports.EXPORTS or fmt not in exports.FORMATS:
        raise Http404(f"no export {what}.{fmt}")
    if what != "leaderboard" and not request.user.is_authenticated:
        return redirect_to_login(request.get_full_path())
    try:
        if what == "leaderboard":
            board = leaderboard.leaderboard(LeaderboardForm(request.GET).filters())
            response, names = HttpResponse(exports.to_bytes(exports.leaderboard_frame(board), fmt)), []
        else:
            chunks, names = _run_export(request, what, fmt)
            response = StreamingHttpResponse(chunks)
    except exports.ExportTooLarge as exc:
        return HttpResponseBadRequest(str(exc), content_type="text/plain; charset=utf-8")
    except ValueError as exc:
        # A person who followed a link without a run, or typed a bad one: the form to choose it.
        return render(request, "metrics/export_form.html", {
            "what": what, "fmt": fmt, "error": str(exc),
            "runs": AgentRun.objects.order_by("name").only("pk", "name"),
            "chosen": request.GET.getlist("run"), "subsets": leaderboard.subsets(),
            "subset": request.GET.get("subset", ""),
        }, status=400)
    response["Content-Type"] = exports.FORMATS[fmt]
    response["Content-Disposition"] = f'attachment; filename="{exports.export_filename(what, fmt, names)}"'
    return response


def _run_export(request, what: str, fmt: str):
    run_ids = request.GET.getlist("run")
    if not run_ids or not all(run_id.isdigit() for run_id in run_ids):
        raise ValueError("run: give one or more run ids")
    job = request.GET.get("job", "")
    if job and (not job.isdigit() or len(run_ids) != 1):
        raise ValueError("job: an evaluation id, with exactly one run")
    runs = list(AgentRun.objects.filter(pk__in=run_ids).order_by("name"))
    if len(runs) != len(set(run_ids)):
        raise Http404("no such run")
    subset_name = request.GET.get("subset", "")
    subset = TaskSubset.objects.filter(name=subset_name).first() if subset_name else None
    if subset_name and subset is None:
        raise ValueError(f"subset: no subset named {subset_name!r}")
    selection = {}
    for run in runs:
        selection.update(exports.run_selection(run, job_id=int(job) if job else None,
                                               judge=request.GET.get("judge", "")))
    return exports.run_stream(what, fmt, selection, subset, viewer=request.user), [run.name for run in runs]
