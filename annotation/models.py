from django.conf import settings
from django.db import models
from django.db.models import Q
from django.urls import reverse

from infrastructure.jobs import BackgroundJob, JobStatus
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
    is_reference = models.BooleanField(
        default=False, help_text="The task's reference gold: what evaluation scores against by default."
    )
    submitted_at = models.DateTimeField(null=True, blank=True)
    imported_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+",
        help_text="Who imported it (a reviewer, on behalf of the annotator when that is someone else); "
                  "empty for the operator's import_gold command.",
    )
    imported_at = models.DateTimeField(null=True, blank=True, help_text="When the file (`source`) last wrote it.")
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
            models.UniqueConstraint(
                fields=["task"], condition=Q(is_reference=True), name="gold_one_reference_per_task"
            ),
            models.CheckConstraint(
                condition=Q(is_reference=False) | Q(status="approved"), name="gold_reference_is_approved"
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


class GoldCheckJob(BackgroundJob):
    """A background run of the gold quality checks, or of the agreement report, for one benchmark."""

    dispatch_task = "annotation.tasks.run_gold_check_task"
    job_kind = "gold check"

    class Kind(models.TextChoices):
        QUALITY = "quality", "Gold quality checks"
        AGREEMENT = "agreement", "Annotator agreement"

    Status = JobStatus

    kind = models.CharField(max_length=16, choices=Kind.choices)
    benchmark = models.CharField(max_length=64, blank=True, help_text="Blank: every benchmark.")
    parameters = models.JSONField(default=dict, blank=True, help_text="Judge and tau of an agreement report.")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    total = models.PositiveIntegerField(default=0)
    done = models.PositiveIntegerField(default=0)
    result = models.JSONField(default=dict, blank=True, help_text="Counts, or the whole agreement report.")
    error = models.TextField(blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-pk"]
        indexes = [models.Index(fields=["kind", "benchmark", "created_at"])]

    def get_absolute_url(self) -> str:
        page = "annotation:agreement" if self.kind == self.Kind.AGREEMENT else "annotation:quality"
        return reverse(page)

    def __str__(self):
        return f"{self.get_kind_display()} #{self.pk} ({self.status})"


class GoldFlag(models.Model):
    """A doubt about a gold trajectory, found by an import, the quality checks or the agreement report.

    Checks that run again update their flags in place (by gold, kind and key), so a dismissal
    with its reason survives every later run.
    """

    class Kind(models.TextChoices):
        IMPORT_ANOMALY = "import_anomaly", "Import anomaly"
        OTHER_TASK = "other_task", "Belongs to another task"
        SIBLING_VALUES = "sibling_values", "Types a template sibling's values"
        WORSE_VERSION = "worse_version", "The worse of a task's two golds"
        POOR_FIT = "poor_fit", "Fits its own task poorly"
        DUPLICATE = "duplicate", "Duplicate of another task's gold"
        TOO_SHORT = "too_short", "Too short"
        TOO_LONG = "too_long", "Too long"
        ONE_STEP = "one_step", "One-step gold"
        MISSING_VALUES = "missing_values", "Never types the intent's quoted values"
        DISAGREEMENT = "disagreement", "Annotators disagree"

    gold = models.ForeignKey(GoldTrajectory, on_delete=models.CASCADE, related_name="flags")
    related_gold = models.ForeignKey(
        GoldTrajectory, null=True, blank=True, on_delete=models.SET_NULL, related_name="+",
        help_text="The other gold: the duplicate, or the other side of a disagreement.",
    )
    related_task = models.ForeignKey(
        Task, null=True, blank=True, on_delete=models.SET_NULL, related_name="+",
        help_text="The task the gold seems to belong to.",
    )
    kind = models.CharField(max_length=20, choices=Kind.choices)
    key = models.CharField(max_length=200, blank=True, help_text="Tells two flags of one kind on one gold apart.")
    message = models.TextField()
    confidence = models.FloatField(
        null=True, blank=True, help_text="How sure the check is, 0.5 to 1: orders the flags of the fit checks."
    )
    rows = models.JSONField(default=list, blank=True, help_text="Spreadsheet rows concerned (header = row 1).")
    active = models.BooleanField(default=True, help_text="False once the latest run no longer finds it.")
    dismissed_at = models.DateTimeField(null=True, blank=True)
    dismissed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    dismiss_reason = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["kind", "gold", "key"]
        constraints = [
            models.UniqueConstraint(fields=["gold", "kind", "key"], name="gold_flag_unique"),
            models.CheckConstraint(
                condition=Q(dismissed_at__isnull=True) | ~Q(dismiss_reason=""), name="gold_flag_dismissed_with_reason"
            ),
        ]
        indexes = [models.Index(fields=["kind", "active"])]

    def __str__(self):
        return f"{self.get_kind_display()}: {self.message}"


class SentenceVector(models.Model):
    """A text's MiniLM vector, stored so that the gold checks encode an intent or a gold once, not
    once per worker process. Keyed by a digest of the model's name and the text."""

    digest = models.CharField(max_length=64, unique=True)
    vector = models.BinaryField(help_text="float32, unit length.")
    created_at = models.DateTimeField(auto_now_add=True)
