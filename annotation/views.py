"""Pages of the annotation app: task queue, gold editor, reviews, import/export, agreement, judge quality.

The judge audit page shows where each verdict was used in scores, so it lives in `metrics.audit_views`."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import FileResponse, Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme, urlencode
from django.views.decorators.http import require_GET, require_POST

from accounts.roles import ANNOTATOR, REVIEWER, has_role, role_required
from infrastructure.forms import optional_int
from judges.calibration import BOOTSTRAP_RESAMPLES, TRUSTED_CONFIRMATIONS, TRUSTED_KAPPA, read_threshold
from judges.models import DecisionKind, JudgeConfig
from judges.selectors import AUDIT_SAMPLE_RATE, judge_config_named
from trajectories.models import Task
from trajectories.selectors import task_benchmarks

from . import selectors
from .errors import GoldError, GoldValidationError
from .formats import FORMATS, GOLD_SCHEMA_PATH, detect_format, export_bytes, read_gold_bytes
from .gold_records import GoldFormatError
from .models import GoldCheckJob, GoldFlag, GoldReview, GoldStatus, GoldTrajectory
from .permissions import can_review_gold, visible_gold
from .serializers import GoldTrajectorySerializer
from .services.gold_import import import_gold
from .services.gold_checks import FIT_KINDS, dismiss_flag, start_gold_check
from .services.gold_review import review_gold
from .services.reference import set_reference

QUEUE_FILTERS_SESSION_KEY = "annotation_queue_filters"
ROLE_SUGGESTIONS = (
    "link", "button", "textbox", "combobox", "searchbox", "checkbox", "radio", "option", "menuitem", "tab",
    "heading", "img", "cell", "row", "spinbutton", "listbox",
)


def _queue_filters(data) -> selectors.QueueFilters:
    return selectors.QueueFilters(
        benchmark=data.get("benchmark", ""),
        site=data.get("site", ""),
        status=data.get("status", ""),
        assigned=data.get("assigned") in ("1", "on", "true", True),
        search=data.get("q", ""),
    )


@role_required(ANNOTATOR)
@require_GET
def queue(request):
    filters = _queue_filters(request.GET)
    request.session[QUEUE_FILTERS_SESSION_KEY] = {
        key: request.GET[key] for key in ("benchmark", "site", "status", "assigned", "q") if request.GET.get(key)
    }
    page = Paginator(selectors.task_queue(request.user, filters), 50).get_page(request.GET.get("page"))
    query = request.GET.copy()
    query.pop("page", None)
    return render(
        request,
        "annotation/queue.html",
        {
            "page": page,
            "filters": filters,
            "query": query.urlencode(),
            "benchmarks": task_benchmarks(),
            "sites": selectors.task_sites(),
            "statuses": selectors.QUEUE_STATUSES,
        },
    )


@role_required(ANNOTATOR)
@require_GET
def next_task(request):
    """Open the next task that needs the user's work, under the queue's current filters."""
    after = None
    if request.GET.get("after", "").isdigit():
        after = Task.objects.filter(pk=int(request.GET["after"])).first()
    saved = request.session.get(QUEUE_FILTERS_SESSION_KEY, {})
    task = selectors.next_task(request.user, _queue_filters(saved), after=after)
    if task is None:
        # Back to the queue as it was filtered, so that the message sits above the list it speaks of.
        messages.info(request, "Nothing left to annotate under these filters." if saved
                      else "Nothing left to annotate: every task has your gold or approved gold.")
        return redirect(reverse("annotation:queue") + (f"?{urlencode(saved)}" if saved else ""))
    return redirect("annotation:task", task_pk=task.pk)


def _editor(request, task: Task, gold: GoldTrajectory | None):
    user = request.user
    can_review = gold is not None and gold.status == GoldStatus.SUBMITTED and can_review_gold(user, gold)
    others = visible_gold(user).filter(task=task).select_related("annotator")
    if gold is not None:
        others = others.exclude(pk=gold.pk)
    data = {
        "task": {"id": task.pk, "benchmark": task.benchmark, "task_id": task.task_id},
        "gold": GoldTrajectorySerializer(gold).data if gold else None,
        "user": user.get_username(),
        "is_reviewer": has_role(user, REVIEWER),
        "requirements": task.requirements,
        "urls": {
            "gold_list": reverse("api-gold-list"),
            "gold_detail": reverse("api-gold-detail", args=[0]),
            "requirements": reverse("api-requirements", args=[task.benchmark, task.task_id]),
            "next": reverse("annotation:review-queue") if can_review
            else reverse("annotation:next") + f"?after={task.pk}",
            "gold_page": reverse("annotation:gold", args=[0]),
        },
    }
    return render(
        request,
        "annotation/editor.html",
        {
            "task": task,
            "gold": gold,
            "reference_answers": task.reference_answers,
            "editor_data": data,
            "others": others,
            "can_review": can_review,
            "can_set_reference": gold is not None and gold.status == GoldStatus.APPROVED and not gold.is_reference
            and has_role(user, REVIEWER),
            "reviews": gold.reviews.select_related("reviewer") if gold else [],
            "role_suggestions": ROLE_SUGGESTIONS,
        },
    )


@role_required(ANNOTATOR)
@require_GET
def task_editor(request, task_pk: int):
    """The user's own gold for a task (a blank one until the first save)."""
    task = get_object_or_404(Task, pk=task_pk)
    return _editor(request, task, selectors.my_gold_for_task(request.user, task))


@role_required(ANNOTATOR)
@require_GET
def gold_editor(request, pk: int):
    gold = visible_gold(request.user).select_related("task", "annotator", "imported_by").filter(pk=pk).first()
    if gold is None:
        raise Http404("no such gold trajectory, or not one you may see yet")
    return _editor(request, gold.task, gold)


@role_required(REVIEWER)
@require_POST
def review(request, pk: int):
    gold = get_object_or_404(GoldTrajectory, pk=pk)
    decision = request.POST.get("decision", "")
    try:
        review_gold(
            gold.pk,
            reviewer=request.user,
            version=optional_int(request.POST.get("version")) or 0,
            decision=decision,
            comment=request.POST.get("comment", ""),
        )
    except GoldValidationError as exc:  # field paths are for the API; the page says the messages
        messages.error(request, f"Review not recorded: {'; '.join(exc.errors.values())}.")
        return redirect("annotation:gold", pk=gold.pk)
    except GoldError as exc:
        messages.error(request, f"Review not recorded: {exc}")
        return redirect("annotation:gold", pk=gold.pk)
    verdict = "approved" if decision == GoldReview.Decision.APPROVED else "sent back with changes requested"
    messages.success(request, f"Gold for task {gold.task.task_id} by {gold.annotator.get_username()} {verdict}.")
    return _back(request, reverse("annotation:review-queue"))


@role_required(REVIEWER)
@require_GET
def review_queue(request):
    page = Paginator(selectors.review_queue(request.user), 50).get_page(request.GET.get("page"))
    return render(request, "annotation/review_queue.html", {"page": page})


_EXPORT_TYPES = {
    "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    "csv": "text/csv; charset=utf-8",
    "json": "application/json",
}


@role_required(ANNOTATOR)
@require_GET
def export(request):
    """Download the gold you may see, filtered like the API list, as xlsx, CSV or gold/v1 JSON."""
    fmt = request.GET.get("format", "xlsx")
    if fmt not in FORMATS:
        raise Http404(f"unknown export format {fmt!r}")
    golds = visible_gold(request.user)
    for param, field in (("benchmark", "task__benchmark"), ("annotator", "annotator__username"), ("status", "status")):
        if request.GET.get(param):
            golds = golds.filter(**{field: request.GET[param]})
    response = HttpResponse(export_bytes(selectors.gold_blocks(golds), fmt), content_type=_EXPORT_TYPES[fmt])
    response["Content-Disposition"] = f'attachment; filename="gold.{fmt}"'
    return response


def _agreement_settings(data) -> tuple[str, dict, str]:
    """The report's scope and parameters, and why the τ typed was refused (empty when it was not)."""
    tau, tau_error = read_threshold(data.get("tau"))
    return data.get("benchmark", ""), {"judge": data.get("judge", ""), "tau": tau}, tau_error


@role_required(REVIEWER)
def agreement(request):
    """Annotator agreement per task and per site, computed by a background job with the chosen
    judge; POST starts the job, the page shows the latest report for the chosen settings."""
    data = request.POST if request.method == "POST" else request.GET
    benchmark, parameters, tau_error = _agreement_settings(data)
    judge_name = parameters["judge"]
    if judge_name and judge_config_named(judge_name) is None:
        messages.error(request, f"No judge named {judge_name!r}: the default judge is used.")
        parameters["judge"] = judge_name = ""
    query = f"?benchmark={benchmark}&judge={judge_name}&tau={parameters['tau']}"
    if request.method == "POST" and tau_error:  # nothing starts; the page shows why at the field
        return redirect(reverse("annotation:agreement") + "?" + urlencode(
            {"benchmark": benchmark, "judge": judge_name, "tau": data.get("tau", "")}))
    if request.method == "POST":
        start_gold_check(GoldCheckJob.Kind.AGREEMENT, benchmark=benchmark, parameters=parameters, user=request.user)
        return redirect(reverse("annotation:agreement") + query)
    job = selectors.latest_gold_check(GoldCheckJob.Kind.AGREEMENT, benchmark, parameters)
    done = job if job is not None and job.status == GoldCheckJob.Status.DONE else (
        GoldCheckJob.objects.filter(kind=GoldCheckJob.Kind.AGREEMENT, benchmark=benchmark, parameters=parameters,
                                    status=GoldCheckJob.Status.DONE).first())
    flags = selectors.open_flags(benchmark, [GoldFlag.Kind.DISAGREEMENT])
    return render(request, "annotation/agreement.html", {
        "job": job, "report": done.result if done else None, "report_job": done,
        "changed_since": selectors.gold_changed_since(done) if done else 0,
        "flags": flags, "dismissed": selectors.dismissed_flags(benchmark, [GoldFlag.Kind.DISAGREEMENT])[:50],
        "judges": JudgeConfig.objects.all(), "judge_name": judge_name, "tau": parameters["tau"],
        "tau_text": data.get("tau", "") if tau_error else parameters["tau"], "tau_error": tau_error,
        "benchmarks": task_benchmarks(), "benchmark": benchmark, "query": query,
    })


@role_required(REVIEWER)
def gold_quality(request):
    """The gold quality checks of one benchmark: every open flag, linked to its gold, with actions."""
    benchmark = (request.POST if request.method == "POST" else request.GET).get("benchmark", "webarena")
    if request.method == "POST":
        start_gold_check(GoldCheckJob.Kind.QUALITY, benchmark=benchmark, user=request.user)
        return redirect(reverse("annotation:quality") + f"?benchmark={benchmark}")
    job = selectors.latest_gold_check(GoldCheckJob.Kind.QUALITY, benchmark)
    kinds = [kind for kind in GoldFlag.Kind.values if kind != GoldFlag.Kind.DISAGREEMENT]
    flags = list(selectors.open_flags(benchmark, kinds, with_steps=True))
    groups = {}
    for flag in sorted(flags, key=lambda flag: kinds.index(flag.kind)):  # stable: the surest first within a kind
        groups.setdefault(flag.get_kind_display(), []).append(flag)
    return render(request, "annotation/quality.html", {
        "job": job, "groups": groups, "flag_count": len(flags), "benchmark": benchmark, "fit_kinds": FIT_KINDS,
        "benchmarks": task_benchmarks(),
        "changed_since": selectors.gold_changed_since(job) if job and job.status == GoldCheckJob.Status.DONE else 0,
        "dismissed": selectors.dismissed_flags(benchmark)[:100],
        "kinds": GoldFlag.Kind.choices,
    })


def _back(request, fallback: str):
    target = request.POST.get("next", "")
    if target and url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()},
                                                  require_https=request.is_secure()):
        return redirect(target)
    return redirect(fallback)


@role_required(REVIEWER)
@require_POST
def dismiss_flag_view(request, pk: int):
    flag = get_object_or_404(GoldFlag, pk=pk)
    try:
        dismiss_flag(flag.pk, user=request.user, reason=request.POST.get("reason", ""))
    except GoldError as exc:
        messages.error(request, f"Flag not dismissed: {exc}")
    else:
        messages.success(request, f"Flag on gold #{flag.gold_id} dismissed.")
    return _back(request, reverse("annotation:quality"))


@role_required(REVIEWER)
@require_POST
def set_reference_view(request, pk: int):
    gold = get_object_or_404(GoldTrajectory.objects.select_related("task"), pk=pk)
    try:
        set_reference(gold.pk, user=request.user)
    except GoldError as exc:
        messages.error(request, f"Not made the reference: {exc}")
    else:
        messages.success(request, f"Gold #{gold.pk} is now the reference gold of task {gold.task.task_id}.")
    return _back(request, reverse("annotation:gold", args=[gold.pk]))


@login_required
@require_GET
def judge_quality(request):
    """Whether to trust a judge: its agreement with human-confirmed decisions, per backend and model."""
    kind = request.GET.get("kind", "")
    kind = kind if kind in selectors.AUDITED_KINDS else ""
    tau, tau_error = read_threshold(request.GET.get("tau"))
    return render(request, "annotation/judge_quality.html", {
        "rows": selectors.judge_quality(kind=kind, tau=tau), "kind": kind, "tau": tau,
        "tau_text": request.GET.get("tau", "") if tau_error else tau, "tau_error": tau_error,
        "resamples": BOOTSTRAP_RESAMPLES, "trusted_confirmations": TRUSTED_CONFIRMATIONS,
        "trusted_kappa": TRUSTED_KAPPA, "sample_rate": AUDIT_SAMPLE_RATE,
        # Verdicts on cells of whole-trajectory decisions are stored as pair decisions.
        "kinds": [(value, DecisionKind(value).label) for value in selectors.AUDITED_KINDS
                  if value != DecisionKind.TRAJECTORY_MATCH],
    })


MAX_GOLD_UPLOAD_BYTES = 20 * 1024 * 1024


@role_required(REVIEWER)
def import_gold_page(request):
    """Upload a gold file (xlsx, CSV or gold/v1 JSON): the same import as `manage.py import_gold`, under the
    reviewer's own name or on behalf of an existing annotator; no account is created, no role granted."""
    report, error = None, ""
    annotator = request.user.get_username()
    status = GoldStatus.SUBMITTED
    if request.method == "POST":
        upload = request.FILES.get("file")
        annotator = request.POST.get("annotator", "").strip() or annotator
        status = request.POST.get("status", status)
        benchmark = request.POST.get("benchmark") or "webarena"
        try:
            if upload is None:
                raise GoldFormatError("choose a file to import")
            if upload.size > MAX_GOLD_UPLOAD_BYTES:
                raise GoldFormatError(f"larger than {MAX_GOLD_UPLOAD_BYTES // (1024 * 1024)} MB", where=upload.name)
            parsed = read_gold_bytes(upload.read(), detect_format(upload.name), name=upload.name,
                                     benchmark=benchmark)
            report = import_gold(parsed, file_name=upload.name, annotator=annotator, status=status,
                                 benchmark=benchmark, imported_by=request.user, strict=bool(request.POST.get("strict")),
                                 reference=bool(request.POST.get("reference"))).to_dict()
        except (ValueError, GoldError) as exc:  # GoldFormatError names the file and row
            error = str(exc)
    return render(request, "annotation/import.html", {
        "report": report, "error": error, "statuses": GoldStatus.choices, "benchmarks": task_benchmarks(),
        "annotators": selectors.annotator_accounts().values_list("username", flat=True),
        "annotator": annotator, "status": status,
    })


@require_GET
def gold_schema(request):
    """The `gold/v1` JSON Schema, for tools that write gold files."""
    return FileResponse(GOLD_SCHEMA_PATH.open("rb"), content_type="application/schema+json")
