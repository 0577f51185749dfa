"""Who may see and change which gold trajectory.

Gold is recorded blind: an annotator sees only their own gold for a task until they have
submitted it; from then on they also see the others' submitted and approved gold for that task.
Reviewers and admins see everything and may edit any gold (a review often fixes a step);
the owner edits while the gold is a draft or has changes requested.

Gold text also travels inside judge decisions (a step-matching question carries the gold steps
it compared), so those follow the same rule: `metrics.permissions.visible_decisions`, which needs
the scores a decision was used for.
"""

from django.db.models import Q, QuerySet

from accounts.roles import ADMIN, ANNOTATOR, REVIEWER, has_role

from .models import GoldStatus, GoldTrajectory

DONE = (GoldStatus.SUBMITTED, GoldStatus.APPROVED)
EDITABLE_BY_OWNER = (GoldStatus.DRAFT, GoldStatus.CHANGES_REQUESTED)


def visible_gold(user, queryset: QuerySet | None = None) -> QuerySet:
    queryset = GoldTrajectory.objects.all() if queryset is None else queryset
    if has_role(user, REVIEWER):
        return queryset
    if has_role(user, ANNOTATOR):
        my_done_tasks = GoldTrajectory.objects.filter(annotator=user, status__in=DONE).values("task")
        return queryset.filter(Q(annotator=user) | Q(status__in=DONE, task__in=my_done_tasks))
    if user.is_authenticated:
        return queryset.filter(status=GoldStatus.APPROVED)
    return queryset.none()


def can_view_gold(user, gold: GoldTrajectory) -> bool:
    return visible_gold(user, GoldTrajectory.objects.filter(pk=gold.pk)).exists()


def can_edit_gold(user, gold: GoldTrajectory) -> bool:
    """Reviewers edit other people's gold; their own follows the owner's rule, since changing one's
    own gold after someone approved it would approve the change oneself (admins excepted)."""
    if has_role(user, REVIEWER) and may_approve_gold_of(user, gold.annotator_id):
        return True
    return gold.annotator_id == user.pk and gold.status in EDITABLE_BY_OWNER and has_role(user, ANNOTATOR)


def can_submit_gold(user, gold: GoldTrajectory) -> bool:
    return gold.annotator_id == user.pk and has_role(user, ANNOTATOR)


def may_approve_gold_of(user, annotator_id: int | None) -> bool:
    """Reviewers approve other people's gold; only admins may approve their own (review page, API, imports)."""
    if not has_role(user, REVIEWER):
        return False
    return annotator_id != user.pk or has_role(user, ADMIN)


def can_review_gold(user, gold: GoldTrajectory) -> bool:
    """Nor the gold they imported on someone's behalf (admins excepted)."""
    if gold.imported_by_id == user.pk and not has_role(user, ADMIN):
        return False
    return may_approve_gold_of(user, gold.annotator_id)
