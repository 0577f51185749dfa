"""The judge audit page: reviewers confirm or overrule judge verdicts from annotation's audit queue.
Each verdict shows the runs and tasks whose scores used it, so the page lives in metrics, above them."""

from django.contrib import messages
from django.http import JsonResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST

from accounts.http import next_url
from accounts.roles import REVIEWER, role_required
from annotation import selectors
from annotation.services.judge_audit import audit_decision
from infrastructure.forms import optional_int
from judges.calibration import DEFAULT_THRESHOLD, parse_threshold, read_threshold
from judges.models import DecisionKind, JudgeBackend, JudgeDecision
from metrics.selectors.jobs_and_scores import with_uses


def _audit_filters(data) -> tuple[selectors.AuditFilters, str]:
    """The filters, and why the τ typed was refused (empty when it was not)."""
    kind = data.get("kind", "")
    tau, tau_error = read_threshold(data.get("tau"))
    return selectors.AuditFilters(
        kind=kind if kind in selectors.AUDITED_KINDS else "",
        backend=data.get("backend", ""),
        tau=tau,
    ), tau_error


@role_required(REVIEWER)
@require_GET
def judge_audit(request):
    filters, tau_error = _audit_filters(request.GET)
    reviewed = request.GET.get("show") == "reviewed"
    if reviewed:
        items, pending = selectors.reviewed_decisions(filters), None
    else:
        items, pending = selectors.audit_queue(filters)
    items = with_uses(items)
    for item in items:
        item.says_yes = item.judge_says(filters.tau)
    return render(request, "metrics/judge_audit.html", {
        "items": items, "pending": pending, "filters": filters, "reviewed": reviewed,
        "kinds": [(kind, DecisionKind(kind).label) for kind in selectors.AUDITED_KINDS],
        "backends": JudgeBackend.choices, "near_margin": selectors.NEAR_MARGIN,
        "tau_text": request.GET.get("tau", "") if tau_error else filters.tau, "tau_error": tau_error,
    })


@role_required(REVIEWER)
@require_POST
def judge_audit_verdict(request):
    """Confirm or overrule one verdict; answers JSON to the audit page's script, else redirects back."""
    wants_json = "application/json" in request.headers.get("Accept", "")
    try:
        decision = audit_decision(
            int(request.POST.get("decision", "0") or 0),
            reviewer=request.user,
            verdict=request.POST.get("verdict", ""),
            tau=parse_threshold(request.POST["tau"]) if request.POST.get("tau") else DEFAULT_THRESHOLD,
            gold_step=optional_int(request.POST.get("gold_step")),
            agent_step=optional_int(request.POST.get("agent_step")),
            note=request.POST.get("note", ""),
        )
    except (ValueError, JudgeDecision.DoesNotExist) as exc:
        if wants_json:
            return JsonResponse({"detail": str(exc)}, status=400)
        messages.error(request, f"Verdict not recorded: {exc}")
    else:
        if wants_json:
            return JsonResponse({"decision": decision.pk, "human_score": decision.human_score})
        messages.success(request, "Verdict recorded.")
    return redirect(next_url(request, "metrics:judge-audit"))
