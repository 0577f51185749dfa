from django.conf import settings
from django.db import models
from django.db.models import Q

from trajectories.models import Task


class GoldStatus(models.TextChoices):
    DRAFT = "draft", "Draft"
    SUBMITTED = "submitted", "Submitted"
    APPROVED = "approved", "Approved"
    CHANGES_REQUESTED = "changes_requested", "Changes requested"


class GoldActionType(models.TextChoices):
    """The WebArena action space, for structured gold steps."""

    CLICK = "click", "click"
    TYPE = "type", "type"
    HOVER = "hover", "hover"
    PRESS = "press", "press"
    SCROLL = "scroll", "scroll"
    SELECT = "select", "select"
    GOTO = "goto", "goto"
    GO_BACK = "go_back", "go_back"
    GO_FORWARD = "go_forward", "go_forward"
    NEW_TAB = "new_tab", "new_tab"
    TAB_FOCUS = "tab_focus", "tab_focus"
    CLOSE_TAB = "close_tab", "close_tab"
    STOP = "stop", "stop"


class GoldTrajectory(models.Model):
    """One human's reference path through a task; a task may have several."""

    task = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="gold_trajectories")
    annotator = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="gold_trajectories")
    status = models.CharField(max_length=20, choices=GoldStatus.choices, default=GoldStatus.DRAFT)
    version = models.PositiveIntegerField(default=1, help_text="Optimistic lock: bumped on every save.")
    cannot_complete = models.BooleanField(default=False)
    cannot_complete_reason = models.TextField(blank=True)
    final_answer = models.TextField(blank=True)
    source = models.CharField(max_length=500, blank=True, help_text="'web', or the imported file's name.")
    source_key = models.CharField(
        max_length=64, blank=True, help_text="Identity of an imported block, so re-imports update in place."
    )
    submitted_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["task", "created_at"]
        verbose_name_plural = "gold trajectories"
        constraints = [
            models.UniqueConstraint(
                fields=["source_key"], condition=~Q(source_key=""), name="gold_unique_source_key"
            ),
            models.CheckConstraint(
                condition=Q(cannot_complete=True) | Q(cannot_complete_reason=""),
                name="gold_reason_only_when_cannot_complete",
            ),
        ]
        indexes = [models.Index(fields=["task", "status"]), models.Index(fields=["annotator", "status"])]

    def __str__(self):
        return f"gold {self.task} by {self.annotator} (v{self.version}, {self.status})"


class GoldStep(models.Model):
    """A human step: free text, optionally structured as action type + element + value."""

    gold = models.ForeignKey(GoldTrajectory, on_delete=models.CASCADE, related_name="steps")
    index = models.PositiveIntegerField(help_text="1-based position in the gold trajectory.")
    text = models.TextField()
    source_label = models.CharField(max_length=32, blank=True, help_text="Step number as written in the source.")
    action_type = models.CharField(max_length=16, choices=GoldActionType.choices, blank=True)
    element_role = models.CharField(max_length=64, blank=True)
    element_name = models.TextField(blank=True)
    value = models.TextField(blank=True)

    class Meta:
        ordering = ["gold", "index"]
        constraints = [
            models.UniqueConstraint(fields=["gold", "index"], name="gold_step_unique_index"),
            models.CheckConstraint(condition=Q(index__gte=1), name="gold_step_index_positive"),
        ]

    def __str__(self):
        return f"{self.index}. {self.text}"


class GoldReview(models.Model):
    """A reviewer's verdict on a submitted gold trajectory; the history is kept."""

    class Decision(models.TextChoices):
        APPROVED = "approved", "Approved"
        CHANGES_REQUESTED = "changes_requested", "Changes requested"
        # Not a verdict: the record a reviewer's change to someone else's gold leaves in its history.
        EDITED = "edited", "Edited by a reviewer"

    VERDICTS = (Decision.APPROVED, Decision.CHANGES_REQUESTED)

    gold = models.ForeignKey(GoldTrajectory, on_delete=models.CASCADE, related_name="reviews")
    reviewer = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="gold_reviews")
    decision = models.CharField(max_length=20, choices=Decision.choices)
    comment = models.TextField(blank=True)
    gold_version = models.PositiveIntegerField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]


class Assignment(models.Model):
    """A task put in an annotator's queue."""

    task = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="assignments")
    annotator = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="assignments")
    assigned_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["task", "annotator"], name="assignment_unique")]
