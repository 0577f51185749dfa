"""Recording gold in the editor or through the API, under optimistic locking.

Every write names the version it was based on. The row is locked, the version compared, and
only then is anything changed, with the version bumped: a second writer working from an older
version gets GoldConflict carrying the stored gold, so the caller can show both versions and
nothing is silently overwritten.
"""

from collections.abc import Callable

from django.db import transaction
from django.utils import timezone

from accounts.roles import ANNOTATOR, has_role
from annotation.content import GoldContent, check_submittable, clean_content
from annotation.errors import GoldConflict, GoldPermissionDenied, GoldWorkflowError
from annotation.gold_records import GoldStepRecord
from annotation.models import GoldReview, GoldStatus, GoldStep, GoldTrajectory
from annotation.permissions import EDITABLE_BY_OWNER, can_edit_gold, can_submit_gold
from annotation.selectors import gold_content
from trajectories.models import Task

WEB_SOURCE = "web"


def write_gold_content(gold: GoldTrajectory, content: GoldContent) -> None:
    """Save the gold row with this content, replacing its steps (callers hold the transaction)."""
    gold.cannot_complete = content.cannot_complete
    gold.cannot_complete_reason = content.cannot_complete_reason
    gold.final_answer = content.final_answer
    gold.save()
    gold.steps.all().delete()
    GoldStep.objects.bulk_create(
        GoldStep(
            gold=gold,
            index=index,
            text=step.text,
            source_label=step.label,
            action_type=step.action_type,
            element_role=step.element_role,
            element_name=step.element_name,
            value=step.value,
        )
        for index, step in enumerate(content.steps, start=1)
    )


def _changed_parts(before: GoldContent, after: GoldContent) -> list[str]:
    parts = []
    if before.steps != after.steps:
        parts.append(f"steps ({len(before.steps)} before, {len(after.steps)} after)")
    if before.final_answer != after.final_answer:
        parts.append("final answer")
    if (before.cannot_complete, before.cannot_complete_reason) != (after.cannot_complete,
                                                                   after.cannot_complete_reason):
        parts.append("cannot complete")
    return parts


def record_reviewer_edit(gold: GoldTrajectory, user, from_version: int, before: GoldContent,
                         after: GoldContent) -> None:
    """A change to someone else's gold is written into its review history (callers hold the transaction),
    so that the annotator and later reviewers see who changed what in their gold, and from which version;
    the reviewer who changed it may then not approve it (`gold_review.review_gold`)."""
    if gold.annotator_id == user.pk:
        return
    changed = _changed_parts(before, after)
    GoldReview.objects.create(gold=gold, reviewer=user, decision=GoldReview.Decision.EDITED,
                              gold_version=gold.version,
                              comment=f"Changed version {from_version} into version {gold.version}: "
                                      f"{', '.join(changed) if changed else 'nothing of its content'}.")


def check_may_record(user) -> None:
    """The API asks this (and `check_may_write`) before reading a body, so that a refusal never comes
    after a complaint about the body; the services ask again under their lock."""
    if not has_role(user, ANNOTATOR):
        raise GoldPermissionDenied("recording gold needs the annotator role")


def check_may_write(user, gold: GoldTrajectory, *, for_submit: bool = False) -> None:
    allowed = can_submit_gold(user, gold) if for_submit else can_edit_gold(user, gold)
    if not allowed:
        raise GoldPermissionDenied(
            "only the annotator who recorded this gold can submit it" if for_submit
            else "you cannot edit this gold trajectory"
        )


def _locked(gold_id: int, version: int, *, user, for_submit: bool = False) -> GoldTrajectory:
    """The gold row, locked until the transaction ends, once the user may write it and the version matches."""
    gold = GoldTrajectory.objects.select_for_update().select_related("task", "annotator").get(pk=gold_id)
    check_may_write(user, gold, for_submit=for_submit)
    if gold.version != version:
        raise GoldConflict(gold)
    return gold


def _submit(gold: GoldTrajectory, user, content: GoldContent) -> None:
    if not can_submit_gold(user, gold):
        raise GoldPermissionDenied("only the annotator who recorded this gold can submit it")
    if gold.status not in EDITABLE_BY_OWNER:
        raise GoldWorkflowError(f"this gold is {gold.get_status_display().lower()}; only drafts can be submitted")
    check_submittable(content)
    gold.status = GoldStatus.SUBMITTED
    gold.submitted_at = timezone.now()


def create_gold(task: Task, *, user, content: GoldContent | None = None, submit: bool = False) -> GoldTrajectory:
    """Start the user's gold for a task. An annotator records one gold per task outside imports:
    when they already have one, GoldConflict hands it back instead of a silent second copy."""
    check_may_record(user)
    content = clean_content(content or GoldContent())
    with transaction.atomic():
        existing = (
            GoldTrajectory.objects.select_for_update()
            .filter(task=task, annotator=user, source_key="")
            .order_by("-updated_at")
            .first()
        )
        if existing is not None:
            raise GoldConflict(existing, f"you already have a gold trajectory for task {task.task_id}")
        gold = GoldTrajectory(task=task, annotator=user, source=WEB_SOURCE)
        if submit:
            _submit(gold, user, content)
        write_gold_content(gold, content)
    return gold


def save_gold(gold_id: int, *, user, version: int, content: GoldContent, submit: bool = False) -> GoldTrajectory:
    """Replace the gold's content (and submit it, when asked) if `version` is still current."""
    content = clean_content(content)
    with transaction.atomic():
        gold = _locked(gold_id, version, user=user)
        before = gold_content(gold)
        if submit:
            _submit(gold, user, content)
        gold.version += 1
        write_gold_content(gold, content)
        record_reviewer_edit(gold, user, version, before, content)
    return gold


def submit_gold(gold_id: int, *, user, version: int) -> GoldTrajectory:
    with transaction.atomic():
        gold = _locked(gold_id, version, user=user, for_submit=True)
        _submit(gold, user, gold_content(gold))
        gold.version += 1
        gold.save()
    return gold


def edit_gold_steps(gold_id: int, *, user, version: int,
                    change: Callable[[list[GoldStepRecord]], None]) -> GoldTrajectory:
    """Apply `change` to the stored step list in place and save, under the same version check."""
    with transaction.atomic():
        gold = _locked(gold_id, version, user=user)
        before = gold_content(gold)
        content = gold_content(gold)
        change(content.steps)
        content = clean_content(content)
        gold.version += 1
        write_gold_content(gold, content)
        record_reviewer_edit(gold, user, version, before, content)
    return gold
