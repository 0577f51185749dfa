"""A reviewer's verdict on submitted gold: approve it, or send it back with a comment."""

from django.db import transaction

from annotation.errors import GoldConflict, GoldPermissionDenied, GoldValidationError, GoldWorkflowError
from annotation.models import GoldReview, GoldStatus, GoldTrajectory
from annotation.permissions import can_review_gold


def review_gold(gold_id: int, *, reviewer, version: int, decision: str, comment: str = "") -> GoldReview:
    """Record the verdict on the version the reviewer read; a newer save makes it a conflict."""
    if decision not in GoldReview.VERDICTS:
        raise GoldValidationError({"decision": f"expected one of {', '.join(GoldReview.VERDICTS)}"})
    comment = comment.strip()
    if decision == GoldReview.Decision.CHANGES_REQUESTED and not comment:
        raise GoldValidationError({"comment": "say what should change"})
    with transaction.atomic():
        gold = GoldTrajectory.objects.select_for_update().select_related("task", "annotator").get(pk=gold_id)
        if not can_review_gold(reviewer, gold):
            raise GoldPermissionDenied("reviewing needs the reviewer role, and reviewers do not review their own gold")
        if gold.version != version:
            raise GoldConflict(gold)
        if gold.status != GoldStatus.SUBMITTED:
            raise GoldWorkflowError(
                f"this gold is {gold.get_status_display().lower()}; only submitted gold is reviewed"
            )
        review = GoldReview.objects.create(
            gold=gold, reviewer=reviewer, decision=decision, comment=comment, gold_version=gold.version
        )
        gold.status = decision
        gold.version += 1
        gold.save(update_fields=["status", "version", "updated_at"])
    return review
