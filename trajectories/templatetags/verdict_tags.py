"""How verdicts read on every page: a success value always says which source it is."""

from django import template
from django.utils.html import format_html
from django.utils.safestring import mark_safe

from trajectories.verdict_agreement import GRADE_LABELS, SOURCE_LABELS

register = template.Library()


@register.filter
def source_label(source: str) -> str:
    return SOURCE_LABELS.get(source, source)


@register.filter
def grade_label(value) -> str:
    return GRADE_LABELS.get(value, "") if value is not None else ""


@register.simple_tag
def verdict(value, source: str = "", detail: str = ""):
    """PASS / FAIL / unknown, named by its source ("harness", "check", ...) and what decided it."""
    if value is True:
        badge = mark_safe('<span class="tj-verdict pass">PASS</span>')
    elif value is False:
        badge = mark_safe('<span class="tj-verdict fail">FAIL</span>')
    else:
        badge = mark_safe('<span class="muted">unknown</span>')
    if not source:
        return badge
    detail = format_html(' <span class="muted">({})</span>', detail) if detail else ""
    return format_html('<span class="tj-source" data-source="{}">{}: {}{}</span>', source, SOURCE_LABELS.get(
        source, source), badge, detail)


@register.filter
def pair_label(pair: str, labels=None) -> str:
    """"harness-check" -> "harness and offline check disagree"; `labels` name named sources too."""
    labels = labels or SOURCE_LABELS
    first, _, second = pair.partition("-")
    return f"{labels.get(first, first)} and {labels.get(second, second)} disagree"
