from django.conf import settings
from django.db import models
from django.db.models import Q

from infrastructure.fields import RowwiseJSONField
from infrastructure.jobs import BackgroundJob, JobStatus
from trajectories.models import AgentRun


class JudgeBackend(models.TextChoices):
    EXACT = "exact", "Exact string equality"
    OFFLINE = "offline", "Offline (fuzzy + embeddings)"
    OPENAI = "openai", "OpenAI-compatible LLM"


class DecisionKind(models.TextChoices):
    """The questions metrics ask a judge (METRICS.md)."""

    STEP_MATCH = "step_match", "Agent step vs gold step"
    TRAJECTORY_MATCH = "trajectory_match", "Agent steps vs gold steps"
    REPETITION = "repetition", "Step repeats previous"
    REQUIREMENTS = "requirements", "Requirements in final answer"
    GROUNDEDNESS = "groundedness", "Answer grounded and relevant"
    FUZZY_ANSWER = "fuzzy_answer", "Answer vs reference answer"
    ELEMENT_AT_POINT = "element_at_point", "Element at the point acted on"
    OUTCOME_KEY_POINTS = "outcome_key_points", "Key points of a task"
    OUTCOME_SCREENSHOT = "outcome_screenshot", "Screenshot relevant to the key points"
    OUTCOME_VERDICT = "outcome_verdict", "Task accomplished (whole trajectory)"


class JudgeConfig(models.Model):
    """A named judge: a backend plus its model and options. The API key stays in the environment."""

    name = models.SlugField(max_length=100, unique=True)
    backend = models.CharField(max_length=16, choices=JudgeBackend.choices)
    model = models.CharField(max_length=200, blank=True)
    base_url = models.URLField(blank=True, help_text="OpenAI-compatible endpoint; blank = OPENAI_BASE_URL.")
    api_key_env = models.CharField(
        max_length=100, blank=True, help_text="Name of the environment variable holding the key."
    )
    temperature = models.FloatField(default=0.0)
    options = models.JSONField(default=dict, blank=True, help_text="Backend options (timeouts, concurrency...).")
    is_default = models.BooleanField(default=False)
    last_test = models.JSONField(
        default=dict, blank=True,
        help_text="The last test of its endpoint (judges.endpoint_checks); cleared when the endpoint changes.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.UniqueConstraint(fields=["is_default"], condition=Q(is_default=True), name="one_default_judge"),
        ]

    def __str__(self):
        return self.name


class StructuredOutputMode(models.Model):
    """The structured-output mode an endpoint accepted for a model, found by the option `auto`."""

    base_url = models.CharField(max_length=500)
    model = models.CharField(max_length=200)
    mode = models.CharField(max_length=24)
    found_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["base_url", "model"], name="one_mode_per_endpoint_model")]

    def __str__(self):
        return f"{self.base_url} {self.model}: {self.mode}"


class JudgeDecision(models.Model):
    """One answer of a judge, stored with everything needed to trace, reuse or overrule it."""

    kind = models.CharField(max_length=20, choices=DecisionKind.choices)
    cache_key = models.CharField(
        max_length=64, unique=True, help_text="sha256 of (backend, model, prompt version, kind, inputs)."
    )
    inputs_hash = models.CharField(max_length=64, db_index=True, help_text="sha256 of (kind, inputs) alone.")
    inputs = RowwiseJSONField()
    score = models.FloatField(null=True, blank=True)
    output = RowwiseJSONField(default=dict, blank=True, help_text="Structured answer (per-item scores...).")
    rationale = models.TextField(blank=True)
    backend = models.CharField(max_length=16, choices=JudgeBackend.choices)
    model = models.CharField(max_length=200, blank=True)
    prompt_version = models.CharField(max_length=32, blank=True)
    prompt_tokens = models.PositiveIntegerField(default=0)
    completion_tokens = models.PositiveIntegerField(default=0)
    cost = models.DecimalField(max_digits=12, decimal_places=6, default=0)
    latency_ms = models.PositiveIntegerField(default=0)
    calls = models.PositiveSmallIntegerField(default=0, help_text="Requests made, retries included.")
    repairs = models.PositiveSmallIntegerField(default=0, help_text="Repair requests sent for a malformed answer.")
    structured_output = models.CharField(
        max_length=24, blank=True, help_text="The structured-output mode the answer was asked with (openai).")
    coerced = models.JSONField(
        default=list, blank=True, help_text="What the answer wrote otherwise than its schema and was read as meant.")
    error = models.TextField(blank=True)
    human_score = models.FloatField(null=True, blank=True, help_text="A reviewer's verdict; wins over `score`.")
    human_note = models.TextField(blank=True)
    reviewed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="judge_reviews"
    )
    reviewed_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(
                condition=Q(score__isnull=True) | Q(score__gte=0, score__lte=1), name="decision_score_in_unit_range"
            ),
            models.CheckConstraint(
                condition=Q(human_score__isnull=True) | Q(human_score__gte=0, human_score__lte=1),
                name="decision_human_score_in_unit_range",
            ),
            models.CheckConstraint(
                condition=Q(score__isnull=False) | ~Q(error=""), name="decision_has_score_or_error"
            ),
        ]
        indexes = [
            models.Index(fields=["kind", "backend", "model"]),
            models.Index(fields=["reviewed_at"]),
            # Every evaluation chunk reads all human verdicts: few rows in a large table.
            models.Index(fields=["reviewed_at", "id"], condition=Q(human_score__isnull=False),
                         name="decision_human_verdicts"),
        ]

    def __str__(self):
        return f"{self.kind} {self.backend}:{self.model} -> {self.effective_score}"

    @property
    def effective_score(self) -> float | None:
        return self.human_score if self.human_score is not None else self.score


class OutcomeJob(BackgroundJob):
    """The outcome judge's pass over one run (`judges.outcome_judging`): progress, errors and what it cost."""

    dispatch_task = "judges.tasks.run_outcome_job_task"
    job_kind = "outcome judging"

    run = models.ForeignKey(AgentRun, on_delete=models.CASCADE, related_name="outcome_jobs")
    judge_config = models.ForeignKey(JudgeConfig, on_delete=models.PROTECT, related_name="outcome_jobs")
    status = models.CharField(max_length=16, choices=JobStatus.choices, default=JobStatus.PENDING)
    total = models.PositiveIntegerField(default=0)
    judged = models.PositiveIntegerField(default=0, help_text="Trajectories given a verdict.")
    passed = models.PositiveIntegerField(default=0, help_text="Of which judged successful.")
    errors = models.JSONField(default=list, blank=True, help_text="Trajectories left without a verdict, and why.")
    error = models.TextField(blank=True, help_text="Why the whole job failed.")
    calls = models.PositiveIntegerField(default=0, help_text="Requests behind the verdicts, cached ones included.")
    cost = models.DecimalField(max_digits=12, decimal_places=6, default=0)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self):
        return f"outcome judging #{self.pk} of {self.run} ({self.status})"

    @property
    def done(self) -> int:
        """Progress counted as an evaluation's: trajectories judged, and those left without a verdict."""
        return self.judged

    @property
    def failed(self) -> int:
        return len(self.errors)
