"""Why a trajectory failed: its decisive step, the failure type and the responsible agent, as named
sources give them (human graders, published labels, offline rules, LLM judges)."""

from django.conf import settings
from django.contrib.postgres.search import SearchVectorField
from django.db import models
from django.db.models import Q

from infrastructure.jobs import BackgroundJob, JobStatus
from judges.models import JudgeConfig
from trajectories.models import AgentRun, ResultOrigin, Step, Trajectory

from .llm_methods import METHODS


class SourceKind(models.TextChoices):
    """Who names a failure's decisive step."""

    HUMAN = "human", "Human graders"
    IMPORTED = "imported", "Imported human labels"
    JUDGE = "judge", "Judge"
    RULE = "rule", "Offline rule"
    GOLD = "gold", "From gold"


class AttributionSource(models.Model):
    """A named giver of failure attributions, shared by every run: the platform's graders, a
    published data set's annotators, a rule or a judge with its model."""

    kind = models.CharField(max_length=16, choices=SourceKind.choices)
    name = models.CharField(max_length=200, help_text='e.g. "human graders", "Who&When annotators".')
    model = models.CharField(max_length=200, blank=True, help_text="The judge's model, for LLM judges.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["kind", "name", "model"]
        constraints = [
            models.UniqueConstraint(fields=["kind", "name", "model"], name="attribution_source_unique"),
            models.CheckConstraint(condition=Q(kind__in=SourceKind.values), name="attribution_source_kind_known"),
        ]

    def __str__(self):
        return f"{self.name} ({self.model})" if self.model else self.name

    @property
    def is_human(self) -> bool:
        return self.kind in (SourceKind.HUMAN, SourceKind.IMPORTED)


class FailureTaxonomy(models.Model):
    """A benchmark's own failure types, replacing the default ones (`failures.taxonomy.DEFAULT_TYPES`)."""

    benchmark = models.CharField(max_length=64, unique=True)
    types = models.JSONField(help_text='[{"key": ..., "name": ..., "definition": ...}] in the order offered.')
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["benchmark"]
        verbose_name_plural = "failure taxonomies"

    def __str__(self):
        return f"failure types of {self.benchmark}"


class FailureAttribution(models.Model):
    """One source's (and, for people, one annotator's) account of why a trajectory failed: the
    step after which the task could no longer succeed, the failure type, the agent that erred."""

    trajectory = models.ForeignKey(Trajectory, on_delete=models.CASCADE, related_name="failure_attributions")
    source = models.ForeignKey(AttributionSource, on_delete=models.PROTECT, related_name="attributions")
    annotator = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT,
                                  related_name="failure_attributions")
    annotator_name = models.CharField(max_length=150, blank=True,
                                      help_text="The account's username, or the imported annotator's name.")
    step_index = models.PositiveIntegerField(null=True, blank=True,
                                             help_text="1-based decisive step; empty when the source named none.")
    agent = models.CharField(max_length=200, blank=True, help_text="The responsible agent, in multi-agent logs.")
    failure_type = models.CharField(max_length=40, blank=True, help_text="A key of the benchmark's taxonomy.")
    note = models.TextField(blank=True, help_text="Why, in the annotator's or source's words.")
    origin = models.CharField(max_length=16, choices=ResultOrigin.choices, default=ResultOrigin.WEB)
    source_name = models.CharField(max_length=500, blank=True, help_text="File an imported attribution came from.")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["trajectory", "source", "annotator_name"]
        constraints = [
            models.UniqueConstraint(fields=["trajectory", "source", "annotator_name"],
                                    name="failure_attribution_one_per_annotator"),
            models.CheckConstraint(condition=Q(step_index__isnull=True) | Q(step_index__gte=1),
                                   name="failure_attribution_step_positive"),
        ]
        indexes = [models.Index(fields=["source", "trajectory"])]

    def __str__(self):
        return f"{self.source} on {self.trajectory}: step {self.step_index}"


class ThemeJob(BackgroundJob):
    """A background grouping of a run's (or a benchmark's, or every) failed trajectories into themes."""

    dispatch_task = "failures.tasks.compute_themes_task"
    job_kind = "failure theme job"
    Status = JobStatus

    run = models.ForeignKey(AgentRun, null=True, blank=True, on_delete=models.CASCADE, related_name="theme_jobs")
    benchmark = models.CharField(max_length=64, blank=True, help_text="Blank: every benchmark.")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    failures = models.PositiveIntegerField(default=0, help_text="Attributed failures grouped.")
    themes = models.JSONField(default=list, blank=True,
                              help_text="[{phrases, size, representatives, trajectories}], largest first.")
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-pk"]
        indexes = [models.Index(fields=["run", "benchmark", "created_at"])]

    def __str__(self):
        return f"themes of {self.run or self.benchmark or 'every run'} ({self.status})"


class AttributionJob(BackgroundJob):
    """An LLM method's pass over a run's failed trajectories (`failures.services.llm_attribution`)."""

    dispatch_task = "failures.tasks.run_attribution_job_task"
    job_kind = "failure attribution"

    run = models.ForeignKey(AgentRun, on_delete=models.CASCADE, related_name="attribution_jobs")
    judge_config = models.ForeignKey(JudgeConfig, on_delete=models.PROTECT, related_name="attribution_jobs")
    method = models.CharField(max_length=16, choices=list(METHODS.items()))
    status = models.CharField(max_length=16, choices=JobStatus.choices, default=JobStatus.PENDING)
    total = models.PositiveIntegerField(default=0, help_text="Failed trajectories of the run (harness verdict).")
    attributed = models.PositiveIntegerField(default=0, help_text="Trajectories given a decisive step.")
    errors = models.JSONField(default=list, blank=True, help_text="Trajectories left without one, and why.")
    error = models.TextField(blank=True, help_text="Why the whole job failed.")
    calls = models.PositiveIntegerField(default=0, help_text="Requests behind its answers, cached ones included.")
    cost = models.DecimalField(max_digits=12, decimal_places=6, default=0)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                   related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-pk"]

    def __str__(self):
        return f"failure attribution #{self.pk} of {self.run} ({self.method}, {self.status})"

    @property
    def done(self) -> int:
        return self.attributed

    @property
    def failed(self) -> int:
        return len(self.errors)


class StepVector(models.Model):
    """A step's sentence vector for search by meaning, computed once in the background
    (`failures.services.step_vectors`), int8 components (`failures.step_search.quantize`)."""

    step = models.OneToOneField(Step, primary_key=True, on_delete=models.CASCADE, related_name="search_vector")
    trajectory = models.ForeignKey(Trajectory, on_delete=models.CASCADE, related_name="+",
                                   help_text="The step's, kept here so that a search's scope needs no join.")
    vector = models.BinaryField()

    def __str__(self):
        return f"vector of {self.step_id}"


class StepVectorsVersion(models.Model):
    """One row whose stamp changes in the same transaction as every write to the step vectors (inserts,
    updates, deletes, cascades and bulk writes alike: triggers on their table, migration
    step_vectors_version) and as a step with a vector changing its index or trajectory, so that a search
    knows by reading one row whether its in-memory copy of the vectors and their steps' keys is current
    where counting them took tens of milliseconds. A stamp is never given twice (a
    sequence's next value on PostgreSQL, a random 64-bit one on SQLite), a rolled-back write's included.
    No row until the vectors are first written."""

    stamp = models.BigIntegerField()

    def __str__(self):
        return f"step vectors version {self.stamp}"


class StepDocument(models.Model):
    """A step's own words (reasoning, action, typed text) for PostgreSQL full-text search
    (`failures.search_selectors`), written with its page's (`StepPageDocument`) by a trigger on every insert
    or update of a step (migration 0006), of the first 20,000 characters of each text, GIN-indexed. Kept
    off the step's row so that no other read of steps carries it, and apart from the page's words so that
    ranking a query's many matches reads a narrow table. Empty on SQLite, which searches the texts themselves."""

    step = models.OneToOneField(Step, primary_key=True, on_delete=models.CASCADE, related_name="search_document")
    trajectory = models.ForeignKey(Trajectory, on_delete=models.CASCADE, related_name="+",
                                   help_text="The step's, kept here so that a search's scope needs no join.")
    index = models.PositiveIntegerField(help_text="The step's, for the same reason.")
    words = SearchVectorField()

    def __str__(self):
        return f"words of {self.step_id}"


class StepPageDocument(models.Model):
    """The words of the page text a step saw, for full-text search beside `StepDocument`'s (same trigger)."""

    document = models.OneToOneField(StepDocument, primary_key=True, on_delete=models.CASCADE, related_name="page")
    words = SearchVectorField()

    def __str__(self):
        return f"page words of {self.document_id}"
