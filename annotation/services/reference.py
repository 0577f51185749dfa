"""The reference gold of a task: the one approved gold trajectory evaluation scores against by default.

The first approved gold of a task becomes its reference; a later approval never replaces it.
Only a reviewer changes it (review page, admin, API, `import_gold --reference`).
"""

from collections.abc import Iterable

from django.db import transaction

from annotation.errors import GoldPermissionDenied, GoldWorkflowError
from annotation.models import GoldStatus, GoldTrajectory
from accounts.roles import REVIEWER, has_role


def assign_missing_references(task_ids: Iterable[int]) -> list[int]:
    """Give each of these tasks that has approved gold but no reference its first approved gold;
    returns the ids of the golds that became a reference."""
    task_ids = list(set(task_ids))
    with_reference = set()
    candidates: dict[int, int] = {}
    for start in range(0, len(task_ids), 500):
        chunk = task_ids[start:start + 500]
        with_reference.update(
            GoldTrajectory.objects.filter(task_id__in=chunk, is_reference=True).values_list("task_id", flat=True)
        )
        approved = (GoldTrajectory.objects.filter(task_id__in=chunk, status=GoldStatus.APPROVED)
                    .order_by("task_id", "submitted_at", "created_at", "pk").values_list("pk", "task_id"))
        for pk, task_id in approved:
            candidates.setdefault(task_id, pk)
    chosen = [pk for task_id, pk in candidates.items() if task_id not in with_reference]
    for start in range(0, len(chosen), 500):
        GoldTrajectory.objects.filter(pk__in=chosen[start:start + 500]).update(is_reference=True)
    return chosen


def make_reference(golds: Iterable[GoldTrajectory]) -> None:
    """Make each of these approved golds its task's reference (at most one per task), replacing
    the previous one; callers check who may do so."""
    by_task = {}
    for gold in golds:
        if gold.status != GoldStatus.APPROVED:
            raise GoldWorkflowError(
                f"gold #{gold.pk} of task {gold.task.task_id} is {gold.get_status_display().lower()}; "
                "only approved gold can be the reference"
            )
        by_task.setdefault(gold.task_id, gold.pk)
    with transaction.atomic():
        task_ids = list(by_task)
        for start in range(0, len(task_ids), 500):
            GoldTrajectory.objects.filter(task_id__in=task_ids[start:start + 500], is_reference=True).exclude(
                pk__in=list(by_task.values())).update(is_reference=False)
        chosen = list(by_task.values())
        for start in range(0, len(chosen), 500):
            GoldTrajectory.objects.filter(pk__in=chosen[start:start + 500]).update(is_reference=True)


def set_reference(gold_id: int, *, user) -> GoldTrajectory:
    """A reviewer's explicit choice of the task's reference gold."""
    if not has_role(user, REVIEWER):
        raise GoldPermissionDenied("choosing the reference gold needs the reviewer role")
    with transaction.atomic():
        gold = GoldTrajectory.objects.select_for_update().select_related("task").get(pk=gold_id)
        make_reference([gold])
        gold.is_reference = True
    return gold
