"""Who may see and change which gold trajectory.

Gold is recorded blind: an annotator sees only their own gold for a task until they have
submitted it; from then on they also see the others' submitted and approved gold for that task.
Reviewers and admins see everything and may edit any gold (a review often fixes a step);
the owner edits while the gold is a draft or has changes requested.
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
    if has_role(user, REVIEWER):
        return True
    return gold.annotator_id == user.pk and gold.status in EDITABLE_BY_OWNER and has_role(user, ANNOTATOR)


def can_submit_gold(user, gold: GoldTrajectory) -> bool:
    return gold.annotator_id == user.pk and has_role(user, ANNOTATOR)


def can_review_gold(user, gold: GoldTrajectory) -> bool:
    """Reviewers review other people's gold; only admins may approve their own."""
    if not has_role(user, REVIEWER):
        return False
    return gold.annotator_id != user.pk or has_role(user, ADMIN)
