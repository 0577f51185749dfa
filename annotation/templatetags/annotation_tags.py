from django import template
from django.db.models import prefetch_related_objects

from accounts import roles
from annotation.models import GoldStatus
from annotation.permissions import can_view_gold

register = template.Library()


@register.filter
def gold_status_label(value: str | None) -> str:
    """'changes_requested' -> 'Changes requested'; no gold at all -> 'No gold'."""
    if not value or value not in GoldStatus.values:
        return "No gold"
    return GoldStatus(value).label


@register.filter
def has_role(user, role: str) -> bool:
    """`{% if user|has_role:"reviewer" %}` in templates (nav links, buttons). A page asks several times:
    the user's groups are read once, by the first."""
    if not getattr(user, "is_authenticated", False):
        return False
    if "groups" not in getattr(user, "_prefetched_objects_cache", {}):
        prefetch_related_objects([user], "groups")
    return roles.has_role(user, role)


@register.filter
def opens_gold(user, gold) -> bool:
    """Whether the gold editor would show `user` this gold: a link to it is offered only then."""
    return roles.has_role(user, roles.ANNOTATOR) and can_view_gold(user, gold)
