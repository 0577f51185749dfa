from django.conf import settings
from django.db import models
from django.db.models import Q
from django.urls import reverse

from annotation.models import GoldTrajectory
from infrastructure.fields import RowwiseJSONField
from infrastructure.jobs import BackgroundJob, JobStatus
from judges.models import JudgeConfig, JudgeDecision
from metrics.registry import RATE, SCORE_REGISTRY
from trajectories.models import AgentRun, EarlyStopReason, OutcomeStatus, Trajectory


class GoldPolicy(models.TextChoices):
    REFERENCE = "reference", "The task's reference gold"
    BEST = "best", "Best of the approved golds, per trajectory"
    EACH = "each", "Each gold trajectory, reported separately"
    ANNOTATOR = "annotator", "A named annotator's gold"


# Older spellings still accepted wherever a policy is named.
GOLD_POLICY_ALIASES = {"approved": GoldPolicy.REFERENCE}


def parse_gold_policy(text: str) -> tuple[str, str]:
    """`reference`, `best`, `each`, `annotator=NAME` (or the older `approved`, `annotator:NAME`)
    -> (policy, annotator name); raises ValueError naming the accepted spellings."""
    text = (text or "").strip()
    name, separator, annotator = text.replace(":", "=", 1).partition("=")
    policy = GOLD_POLICY_ALIASES.get(name.strip(), name.strip())
    if policy not in GoldPolicy.values or (separator and policy != GoldPolicy.ANNOTATOR):
        raise ValueError(f"unknown gold policy {text!r}: expected reference, best, each or annotator=NAME")
    return policy, annotator.strip()


class EvaluationJob(BackgroundJob):
    """Scoring of one or more runs against gold with one judge and one set of parameters."""

    dispatch_task = "metrics.tasks.run_evaluation"
    job_kind = "evaluation"

    class Status(models.TextChoices):
        PENDING = "pending", "Pending"
        RUNNING = "running", "Running"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"
        CANCELLED = "cancelled", "Cancelled"

    runs = models.ManyToManyField(AgentRun, related_name="evaluation_jobs")
    judge_config = models.ForeignKey(JudgeConfig, on_delete=models.PROTECT, related_name="evaluation_jobs")
    gold_policy = models.CharField(max_length=16, choices=GoldPolicy.choices, default=GoldPolicy.REFERENCE)
    gold_annotator = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    parameters = models.JSONField(default=dict, blank=True, help_text="tau, window, ordered, ...")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    total = models.PositiveIntegerField(default=0)
    done = models.PositiveIntegerField(default=0, help_text="Units scored, partly scored ones included.")
    partly_scored = models.PositiveIntegerField(
        default=0, help_text="Of those done, units some of whose judge questions failed (those metrics are null).")
    failed_questions = models.PositiveIntegerField(default=0, help_text="Judge questions failed, over all units.")
    failed = models.PositiveIntegerField(default=0)
    errors = models.JSONField(default=list, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    replaces = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="replaced_by",
        help_text="The evaluation this one re-ran; that one is kept, with its numbers, as history.")

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(
                condition=~Q(gold_policy="annotator") | Q(gold_annotator__isnull=False),
                name="job_annotator_policy_names_annotator",
            ),
        ]

    def __str__(self):
        return f"evaluation #{self.pk} ({self.status})"

    def get_absolute_url(self) -> str:
        return reverse("metrics:job", args=[self.pk])


class TrajectoryScore(models.Model):
    """Every metric of METRICS.md for one trajectory in one job (and one gold, per the policy).

    A metric that cannot be computed is NULL, never 0, and is left out of averages.
    """

    job = models.ForeignKey(EvaluationJob, on_delete=models.CASCADE, related_name="scores")
    trajectory = models.ForeignKey(Trajectory, on_delete=models.CASCADE, related_name="scores")
    gold = models.ForeignKey(GoldTrajectory, null=True, blank=True, on_delete=models.SET_NULL, related_name="scores")
    inputs_hash = models.CharField(max_length=64, blank=True, help_text="What the scores were computed from.")
    error = models.TextField(blank=True)
    failed_questions = models.PositiveIntegerField(
        default=0, help_text="Judge questions that failed: the metrics needing them are null (partly scored).")

    step_success = models.FloatField(null=True, blank=True)
    recovery = models.FloatField(null=True, blank=True)
    repetitiveness = models.FloatField(null=True, blank=True)
    element_accuracy = models.FloatField(null=True, blank=True)
    partial_success = models.FloatField(null=True, blank=True)
    grounded = models.BooleanField(null=True, blank=True)
    relevant = models.BooleanField(null=True, blank=True)
    correct = models.BooleanField(null=True, blank=True)
    success = models.BooleanField(null=True, blank=True)
    success_source = models.CharField(max_length=16, blank=True, help_text="harness | string_match | url_match")
    check_success = models.BooleanField(
        null=True, blank=True, help_text="The offline check's verdict (string/url match), whatever the harness said."
    )
    check_source = models.CharField(max_length=16, blank=True, help_text="string_match | url_match | ...")
    plan_step_success = models.FloatField(null=True, blank=True, help_text="Step Success of the stated plan.")
    key_node_completion = models.FloatField(
        null=True, blank=True, help_text="Share of the task's key nodes reached (Mind2Web-Live)."
    )
    outcome_status = models.CharField(max_length=16, choices=OutcomeStatus.choices, blank=True)
    outcome_reason = models.CharField(max_length=16, choices=EarlyStopReason.choices, blank=True)
    agent_steps = models.PositiveIntegerField(null=True, blank=True, help_text="n")
    gold_steps = models.PositiveIntegerField(null=True, blank=True, help_text="m")
    matched_steps = models.PositiveIntegerField(null=True, blank=True)
    deviations = models.PositiveIntegerField(null=True, blank=True)
    recoveries = models.PositiveIntegerField(null=True, blank=True)
    mean_recovery_cost = models.FloatField(null=True, blank=True)
    details = RowwiseJSONField(default=dict, blank=True, help_text="Matched pairs, deviation points, ...")
    decisions = models.ManyToManyField(JudgeDecision, blank=True, related_name="scores")
    computed_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["job", "trajectory"]
        constraints = [
            models.UniqueConstraint(
                fields=["job", "trajectory"], condition=Q(gold__isnull=True), name="score_unique_without_gold"
            ),
            models.UniqueConstraint(
                fields=["job", "trajectory", "gold"], condition=Q(gold__isnull=False), name="score_unique_with_gold"
            ),
        ] + [
            models.CheckConstraint(
                condition=Q(**{f"{name}__isnull": True}) | Q(**{f"{name}__gte": 0, f"{name}__lte": 1}),
                name=f"score_{name}_in_unit_range",
            )
            for name in (field.name for field in SCORE_REGISTRY if field.type == RATE)
        ]
        indexes = [models.Index(fields=["job", "trajectory"])]


class Aggregate(models.Model):
    """A stored summary of one metric over a group of scores, so pages never recompute."""

    class Scope(models.TextChoices):
        RUN = "run", "Run"
        SITE = "site", "Site"
        PARADIGM = "paradigm", "Paradigm"
        SUCCESSFUL = "successful", "Within successful tasks"
        SUBSET = "subset", "Task subset"

    job = models.ForeignKey(EvaluationJob, on_delete=models.CASCADE, related_name="aggregates")
    run = models.ForeignKey(AgentRun, on_delete=models.CASCADE, related_name="aggregates")
    scope = models.CharField(max_length=16, choices=Scope.choices)
    group = models.CharField(max_length=100, blank=True, help_text="Site, paradigm or task subset name; blank for a run.")
    metric = models.CharField(max_length=40)
    mean = models.FloatField(null=True, blank=True)
    std = models.FloatField(null=True, blank=True)
    count = models.PositiveIntegerField(default=0)
    null_count = models.PositiveIntegerField(default=0)
    data = models.JSONField(
        default=dict, blank=True, help_text="Tables that are not one number: outcome categories, lengths."
    )
    computed_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["job", "run", "scope", "group", "metric"], name="aggregate_unique"),
        ]
        indexes = [
            models.Index(fields=["run", "scope", "metric"]),
            # One metric of every run at once, for the leaderboard's ranking to join.
            models.Index(fields=["scope", "metric", "group"], name="aggregate_metric_of_runs"),
        ]


class PlotJob(BackgroundJob):
    """A chart drawn in the background: a cold chart takes seconds to draw, which no request waits for.
    The image goes to the cache under `key`; the page polls its URL until it is there."""

    dispatch_task = "metrics.tasks.draw_plot"
    job_kind = "plot"

    Status = JobStatus

    key = models.CharField(max_length=64, db_index=True, help_text="sha256 of the image's cache key.")
    request = models.JSONField(help_text="The chart asked for: name, format, metric, kind, runs and filters.")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-pk"]

    def __str__(self):
        return f"plot #{self.pk} ({self.status})"

    def get_absolute_url(self) -> str:
        return reverse("metrics:leaderboard")
