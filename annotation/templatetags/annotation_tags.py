from django import template

from accounts import roles
from annotation.models import GoldStatus

register = template.Library()


@register.filter
def gold_status_label(value: str | None) -> str:
    """'changes_requested' -> 'Changes requested'; no gold at all -> 'No gold'."""
    if not value or value not in GoldStatus.values:
        return "No gold"
    return GoldStatus(value).label


@register.filter
def has_role(user, role: str) -> bool:
    """`{% if user|has_role:"reviewer" %}` in templates (nav links, buttons)."""
    return bool(getattr(user, "is_authenticated", False)) and roles.has_role(user, role)
