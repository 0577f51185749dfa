"""A reviewer's verdict on submitted gold: approve it, or send it back with a comment."""

from django.db import transaction

from accounts.roles import ADMIN, has_role
from annotation.errors import (
    GoldConflict,
    GoldPermissionDenied,
    GoldValidationError,
    GoldWorkflowError,
    TaskWithoutText,
)
from annotation.models import GoldReview, GoldStatus, GoldTrajectory
from annotation.permissions import can_review_gold
from annotation.services.reference import assign_missing_references

REVIEW_DENIED = "reviewing needs the reviewer role, and reviewers do not review their own gold"


def _changed_by(reviewer, gold: GoldTrajectory) -> bool:
    """The reviewer changed the gold's content since it was last submitted (admins may approve their own
    changes, as they may everything): approving it would pass their own text as reviewed."""
    if has_role(reviewer, ADMIN):
        return False
    edits = gold.reviews.filter(reviewer=reviewer, decision=GoldReview.Decision.EDITED)
    if gold.submitted_at is not None:
        edits = edits.filter(created_at__gte=gold.submitted_at)
    return edits.exists()


def review_gold(gold_id: int, *, reviewer, version: int, decision: str, comment: str = "") -> GoldReview:
    """Record the verdict on the version the reviewer read; a newer save makes it a conflict."""
    if decision not in GoldReview.VERDICTS:
        raise GoldValidationError({"decision": f"expected one of {', '.join(GoldReview.VERDICTS)}"})
    comment = comment.strip()
    if decision == GoldReview.Decision.CHANGES_REQUESTED and not comment:
        raise GoldValidationError({"comment": "asking for changes needs a comment that says what should change"})
    with transaction.atomic():
        gold = GoldTrajectory.objects.select_for_update().select_related("task", "annotator").get(pk=gold_id)
        if not can_review_gold(reviewer, gold):
            raise GoldPermissionDenied(REVIEW_DENIED)
        if gold.version != version:
            raise GoldConflict(gold)
        if decision == GoldReview.Decision.APPROVED and _changed_by(reviewer, gold):
            raise GoldPermissionDenied(
                "you changed this gold's content since it was submitted: another reviewer or an admin approves it")
        if decision == GoldReview.Decision.APPROVED and not gold.task.intent.strip():
            raise TaskWithoutText(
                f"task {gold.task.task_id} has no task text, so nobody can check this gold against what it asks: "
                "give the task its text (re-import it from a file that has it) before approving; "
                "it can still be sent back")
        # Approved gold found wanting (e.g. on the gold quality page) can still be sent back.
        sent_back = gold.status == GoldStatus.APPROVED and decision == GoldReview.Decision.CHANGES_REQUESTED
        if gold.status != GoldStatus.SUBMITTED and not sent_back:
            raise GoldWorkflowError(
                f"this gold is {gold.get_status_display().lower()}; only submitted gold is reviewed"
            )
        review = GoldReview.objects.create(
            gold=gold, reviewer=reviewer, decision=decision, comment=comment, gold_version=gold.version
        )
        gold.status = decision
        gold.version += 1
        if decision != GoldReview.Decision.APPROVED:
            gold.is_reference = False  # evaluation then lists the task as having no reference
        gold.save(update_fields=["status", "version", "is_reference", "updated_at"])
        if decision == GoldReview.Decision.APPROVED:
            # The first approved gold of a task becomes its reference; a later one never replaces it.
            assign_missing_references([gold.task_id])
    return review
