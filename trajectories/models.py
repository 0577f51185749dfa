from django.conf import settings
from django.db import models
from django.db.models import Q
from django.urls import reverse

from infrastructure.jobs import BackgroundJob, JobStatus

from .formats.canonical import TASK_ID_MAX_LENGTH, ActionParts
from .formats.published_verdicts import NOT_EXECUTABLE


class Paradigm(models.TextChoices):
    STEP_BY_STEP = "step_by_step", "Step by step"
    TREE_SEARCH = "tree_search", "Tree search"
    FULL_PLAN = "full_plan", "Full plan"
    OTHER = "other", "Other"


class OutcomeStatus(models.TextChoices):
    ANSWERED = "answered", "Answered"
    NA = "na", "Answered N/A"
    EARLY_STOP = "early_stop", "Early stop"
    NO_STOP = "no_stop", "No stop"
    CRASHED = "crashed", "Crashed"


class EarlyStopReason(models.TextChoices):
    REPEATED_ACTION = "repeated_action", "Repeated action"
    INVALID_ACTIONS = "invalid_actions", "Invalid actions"
    MAX_STEPS = "max_steps", "Max steps"
    OTHER = "other", "Other"


class RequirementsSource(models.TextChoices):
    NONE = "", "None"
    MUST_INCLUDE = "must_include", "WebArena must_include"
    FUZZY_MATCH = "fuzzy_match", "WebArena fuzzy_match"
    ANNOTATOR = "annotator", "Annotator"


# Benchmarks that re-publish another's tasks under the same task ids.
BENCHMARK_VERSIONS = {"webarena": ("webarena-verified",)}


class Task(models.Model):
    """A benchmark task, with its evaluation config exactly as published."""

    benchmark = models.CharField(max_length=64, default="webarena")
    task_id = models.CharField(max_length=TASK_ID_MAX_LENGTH, help_text="Task id within its benchmark.")
    number = models.PositiveIntegerField(null=True, blank=True, help_text="Numeric task id, for ordering.")
    old_task_id = models.CharField(max_length=TASK_ID_MAX_LENGTH, blank=True,
                                   help_text="WebArena-Lite: id in full WebArena.")
    intent = models.TextField()
    intent_template = models.TextField(blank=True)
    intent_template_id = models.IntegerField(null=True, blank=True)
    instantiation = models.JSONField(default=dict, blank=True)
    sites = models.JSONField(default=list, blank=True)
    start_url = models.TextField(blank=True)
    require_login = models.BooleanField(default=False)
    require_reset = models.BooleanField(default=False)
    eval_types = models.JSONField(default=list, blank=True)
    eval_config = models.JSONField(default=dict, blank=True, help_text="The raw `eval` object.")
    config = models.JSONField(default=dict, blank=True, help_text="The whole task config as imported.")
    requirements = models.JSONField(
        default=list, blank=True, help_text="Phrases a complete final answer must contain (Partial Success)."
    )
    requirements_source = models.CharField(
        max_length=16, choices=RequirementsSource.choices, default=RequirementsSource.NONE, blank=True
    )
    unachievable = models.BooleanField(default=False, help_text="Unachievable by design (fuzzy_match 'N/A').")
    revision = models.PositiveIntegerField(null=True, blank=True, help_text="WebArena-Verified: the task's revision.")
    key_nodes = models.JSONField(
        default=list, blank=True, help_text="Mind2Web-Live: checkpoints {match_function_name, content}."
    )
    reference_length = models.PositiveIntegerField(
        null=True, blank=True, help_text="Mind2Web-Live: steps of the reference path."
    )
    from_task_list = models.BooleanField(
        default=True, help_text="Imported from the benchmark's task list; false: made from a run's files, "
                                "for a benchmark whose task list the platform does not hold."
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["benchmark", "number", "task_id"]
        constraints = [
            models.UniqueConstraint(fields=["benchmark", "task_id"], name="task_unique_per_benchmark"),
        ]
        indexes = [models.Index(fields=["benchmark", "number"])]

    def __str__(self):
        return f"{self.benchmark}/{self.task_id}"

    @property
    def reference_answers(self) -> dict:
        return self.eval_config.get("reference_answers") or {}


class TaskSubset(models.Model):
    """A named set of task ids of one benchmark (WebArena-Lite, Verified hard, ...).

    Ids, not rows: a subset of `webarena` also selects the same ids in versions of it
    (`webarena-verified`), so runs and gold recorded on either count for the subset.
    """

    name = models.CharField(max_length=64, unique=True)
    benchmark = models.CharField(max_length=64, default="webarena", help_text="Whose task ids these are.")
    task_ids = models.JSONField(default=list, help_text="Task ids, as strings.")
    description = models.TextField(blank=True)
    source = models.CharField(max_length=500, blank=True, help_text="The file the ids came from.")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]

    def __str__(self):
        return self.name

    @property
    def benchmarks(self) -> tuple[str, ...]:
        """The benchmark whose ids these are, and its versions with the same ids."""
        return (self.benchmark,) + BENCHMARK_VERSIONS.get(self.benchmark, ())

    def task_filter(self, prefix: str = "") -> Q:
        """Q selecting the subset's tasks; `prefix` reaches them through a relation ("task__")."""
        return Q(**{f"{prefix}benchmark__in": self.benchmarks, f"{prefix}task_id__in": self.task_ids})


class AgentRun(models.Model):
    """One agent (with one model and configuration) run over a set of benchmark tasks."""

    name = models.CharField(max_length=200, unique=True)
    agent = models.CharField(max_length=200, blank=True)
    model = models.CharField(max_length=200, blank=True)
    paradigm = models.CharField(max_length=16, choices=Paradigm.choices, default=Paradigm.STEP_BY_STEP)
    benchmark = models.CharField(max_length=64, default="webarena")
    description = models.TextField(blank=True)
    metadata = models.JSONField(default=dict, blank=True, help_text="Harness config, prompt, versions...")
    uploaded_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="agent_runs"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self):
        return self.name


class Trajectory(models.Model):
    """What one agent run did on one task."""

    run = models.ForeignKey(AgentRun, on_delete=models.CASCADE, related_name="trajectories")
    task = models.ForeignKey(Task, on_delete=models.PROTECT, related_name="trajectories")
    final_answer = models.TextField(null=True, blank=True, help_text="Argument of the agent's own stop.")
    outcome_status = models.CharField(max_length=16, choices=OutcomeStatus.choices)
    outcome_reason = models.CharField(max_length=16, choices=EarlyStopReason.choices, blank=True)
    outcome_message = models.TextField(blank=True, help_text="The harness's forced-stop text, verbatim.")
    success = models.BooleanField(null=True, blank=True, help_text="Harness verdict, when known.")
    success_source = models.CharField(
        max_length=500, blank=True, help_text="File the harness verdict came from (log, format trace, trajectory)."
    )
    success_by = models.CharField(
        max_length=200, blank=True,
        help_text="Who gave the harness verdict (BrowserGym reward, WebArena-Infinity verifier); empty: the harness.",
    )
    plan = models.JSONField(default=list, blank=True)
    # Totals of the whole trajectory: the file's own, else the sums of what its steps record.
    tokens_in = models.PositiveBigIntegerField(null=True, blank=True, help_text="Model input tokens.")
    tokens_out = models.PositiveBigIntegerField(null=True, blank=True, help_text="Model output tokens.")
    cost = models.FloatField(null=True, blank=True, help_text="Model cost in USD.")
    duration = models.FloatField(null=True, blank=True, help_text="Seconds.")
    step_count = models.PositiveIntegerField(default=0)
    content_hash = models.CharField(max_length=64)
    source_name = models.CharField(max_length=500, blank=True, help_text="File the trajectory came from.")
    source_format = models.CharField(max_length=32, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["run", "task"]
        verbose_name_plural = "trajectories"
        constraints = [
            models.UniqueConstraint(fields=["run", "task"], name="trajectory_unique_per_run_task"),
            models.CheckConstraint(
                condition=Q(outcome_status="early_stop") | Q(outcome_reason=""),
                name="trajectory_reason_only_for_early_stop",
            ),
            models.CheckConstraint(condition=~Q(cost__lt=0) & ~Q(duration__lt=0), name="trajectory_cost_not_negative"),
        ]
        indexes = [
            models.Index(fields=["content_hash"]),
            models.Index(fields=["run", "outcome_status"]),
        ]

    def __str__(self):
        return f"{self.run} / {self.task}"


class Screenshot(models.Model):
    """A screenshot stored once per distinct image, however many steps show it."""

    sha256 = models.CharField(max_length=64, unique=True)
    image = models.FileField(upload_to="screenshots/%Y/%m/")
    content_type = models.CharField(max_length=64, default="image/png")
    size = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self):
        return self.sha256[:12]


class Step(models.Model):
    """One agent step: what the agent saw, what it said it would do and what it executed."""

    trajectory = models.ForeignKey(Trajectory, on_delete=models.CASCADE, related_name="steps")
    index = models.PositiveIntegerField(help_text="1-based position in the trajectory.")
    url = models.TextField(blank=True)
    observation = models.TextField(blank=True)
    reasoning = models.TextField(blank=True)
    planned_action = models.TextField(null=True, blank=True, help_text="Action stated in the reasoning.")
    action = models.TextField(help_text="Executed action as written by the harness.")
    action_type = models.CharField(max_length=32, blank=True)
    element_id = models.TextField(blank=True, help_text="The element as the tool names it; a free-form id can be long.")
    element_label = models.TextField(blank=True)
    action_value = models.TextField(blank=True)
    press_enter = models.BooleanField(null=True, blank=True)
    element_selector = models.TextField(blank=True, help_text="The element as a CSS selector or XPath.")
    point_x = models.FloatField(null=True, blank=True, help_text="Point acted at, screenshot pixels from the left.")
    point_y = models.FloatField(null=True, blank=True, help_text="Point acted at, screenshot pixels from the top.")
    delta_x = models.FloatField(null=True, blank=True, help_text="How far a scroll or drag moved right, pixels.")
    delta_y = models.FloatField(null=True, blank=True, help_text="How far a scroll or drag moved down, pixels.")
    prev_action = models.TextField(blank=True)
    agent = models.CharField(max_length=200, blank=True,
                             help_text="Who spoke at this step, in multi-agent logs (e.g. WebSurfer).")
    model_output = models.TextField(blank=True, help_text="The model's raw output, from the harness's format trace.")
    screenshot = models.ForeignKey(
        Screenshot, null=True, blank=True, on_delete=models.SET_NULL, related_name="steps"
    )
    tokens_in = models.PositiveBigIntegerField(null=True, blank=True, help_text="Model input tokens.")
    tokens_out = models.PositiveBigIntegerField(null=True, blank=True, help_text="Model output tokens.")
    cost = models.FloatField(null=True, blank=True, help_text="Model cost in USD.")
    duration = models.FloatField(null=True, blank=True, help_text="Seconds.")

    class Meta:
        ordering = ["trajectory", "index"]
        constraints = [
            models.UniqueConstraint(fields=["trajectory", "index"], name="step_unique_index"),
            models.CheckConstraint(condition=Q(index__gte=1), name="step_index_positive"),
            models.CheckConstraint(condition=~Q(cost__lt=0) & ~Q(duration__lt=0), name="step_cost_not_negative"),
        ]

    def __str__(self):
        return f"{self.trajectory} #{self.index}"

    @property
    def parts(self) -> ActionParts:
        """The executed action's parts, as the reader gave them."""
        return ActionParts(type=self.action_type, element_id=self.element_id, element_label=self.element_label,
                           value=self.action_value, press_enter=self.press_enter, selector=self.element_selector,
                           x=self.point_x, y=self.point_y, delta_x=self.delta_x, delta_y=self.delta_y)


class ImportJob(BackgroundJob):
    """A background import of uploaded files into a run, with its progress and report."""

    dispatch_task = "trajectories.tasks.run_import_job_task"
    job_kind = "import"

    Status = JobStatus

    run = models.ForeignKey(AgentRun, null=True, blank=True, on_delete=models.SET_NULL, related_name="import_jobs",
                            help_text="Empty once a run created for this upload was removed because nothing was stored.")
    run_name = models.CharField(max_length=200, blank=True, help_text="The run's name, kept when the run is removed.")
    new_run = models.BooleanField(default=False, help_text="The run was created for this upload.")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    upload = models.FileField(upload_to="uploads/%Y/%m/", blank=True)
    uploaded_files = models.JSONField(default=list, blank=True, help_text="Storage names of the uploaded files.")
    uploads_kept = models.BooleanField(
        default=False, help_text="The worker could not read the uploads; they are kept so that the job can be retried.")
    replace = models.BooleanField(default=False)
    total = models.PositiveIntegerField(default=0)
    processed = models.PositiveIntegerField(default=0)
    report = models.JSONField(default=dict, blank=True)
    error = models.TextField(blank=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True, help_text="When a worker last began the import.")
    finished_at = models.DateTimeField(null=True, blank=True)
    last_sources = models.JSONField(
        default=list, blank=True,
        help_text="Of an import split into chunks: the files imported once every chunk is done (run summaries, "
                  "results logs).")

    class Meta:
        ordering = ["-created_at"]

    def get_absolute_url(self) -> str:
        return reverse("trajectories:import-job", args=[self.pk])

    @property
    def can_retry(self) -> bool:
        return self.is_unfinished or (self.status == self.Status.FAILED and self.uploads_kept)


class ImportChunk(models.Model):
    """A part of an import job that any worker may import while others import the rest; number 0 is
    the part imported before the chunks (run descriptions), done by the worker that split the job."""

    job = models.ForeignKey(ImportJob, on_delete=models.CASCADE, related_name="chunks")
    number = models.PositiveIntegerField()
    sources = models.JSONField(default=list, help_text="Names of the files of the upload that this chunk imports.")
    status = models.CharField(max_length=16, choices=JobStatus.choices, default=JobStatus.PENDING)
    attempts = models.PositiveIntegerField(default=0)
    report = models.JSONField(default=dict, blank=True)
    error = models.TextField(blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["job", "number"]
        constraints = [models.UniqueConstraint(fields=["job", "number"], name="import_chunk_number_unique")]


class ResultOrigin(models.TextChoices):
    """Where a verdict or grade was recorded."""

    WEB = "web", "Web page"
    API = "api", "API"
    IMPORT = "import", "File import"


class TaskResult(models.Model):
    """A run's harness verdict on one task, whether or not the run has a trajectory for it: from a
    per-task results file, the API, the harness's logs (`[Result]` lines) or its format traces
    (with the model's raw output per step).

    Results-only runs (published per-task pass/fail) consist of these rows alone; for a task
    with a trajectory, the trajectory's `success` stays the harness verdict of record, and a
    trajectory imported after its verdict takes the verdict and model outputs up.
    """

    run = models.ForeignKey(AgentRun, on_delete=models.CASCADE, related_name="task_results")
    task = models.ForeignKey(Task, on_delete=models.PROTECT, related_name="results")
    success = models.BooleanField(null=True, blank=True, help_text="Harness verdict, when known.")
    source_name = models.CharField(max_length=500, blank=True, help_text="File the verdict came from.")
    origin = models.CharField(max_length=16, choices=ResultOrigin.choices, default=ResultOrigin.IMPORT)
    model_outputs = models.JSONField(default=list, blank=True, help_text="Raw model output per step (format trace).")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["run", "task"]
        constraints = [
            models.UniqueConstraint(fields=["run", "task"], name="task_result_unique_per_run_task"),
        ]

    def __str__(self):
        return f"{self.run} / {self.task}: {self.success}"


class OutcomeGrade(models.Model):
    """One human grader's mark on a run's outcome for one task: 1 correct, 0.5 partially, 0 incorrect.

    A grader is an account (graded on the trajectory page or through the API) or a name read
    from an imported file; the trajectory is set when the run has one for the task.
    """

    VALUES = (0.0, 0.5, 1.0)

    run = models.ForeignKey(AgentRun, on_delete=models.CASCADE, related_name="outcome_grades")
    task = models.ForeignKey(Task, on_delete=models.PROTECT, related_name="outcome_grades")
    trajectory = models.ForeignKey(
        Trajectory, null=True, blank=True, on_delete=models.CASCADE, related_name="outcome_grades"
    )
    grader = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="outcome_grades"
    )
    grader_name = models.CharField(max_length=150, help_text="The account's username, or the imported grader's name.")
    value = models.FloatField()
    note = models.TextField(blank=True)
    origin = models.CharField(max_length=16, choices=ResultOrigin.choices, default=ResultOrigin.WEB)
    source_name = models.CharField(max_length=500, blank=True, help_text="File an imported grade came from.")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["run", "task", "grader_name"]
        constraints = [
            models.UniqueConstraint(fields=["run", "task", "grader_name"], name="outcome_grade_one_per_grader"),
            models.CheckConstraint(condition=Q(value__in=[0.0, 0.5, 1.0]), name="outcome_grade_value_known"),
        ]
        indexes = [models.Index(fields=["run", "task"])]

    def __str__(self):
        return f"{self.grader_name} on {self.run} / {self.task}: {self.value}"


class VerdictKind(models.TextChoices):
    """Who gives a verdict on whether an agent succeeded (`formats.canonical.VERDICT_KINDS`)."""

    HARNESS = "harness", "Harness"
    RULE_CHECK = "rule_check", "Rule check"
    HUMAN = "human", "Human"
    LLM_JUDGE = "llm_judge", "LLM judge"
    AGENT_SELF_REPORT = "agent_self_report", "Agent self-report"


VERDICT_LABEL_NAMES = {"side_effect": "side effect", "optimality": "optimality", "looping": "looping",
                       "not_executable": "not executable", "reached_captcha": "reached a CAPTCHA"}


def in_label_order(items):
    """(label name, value) pairs in the order the labels are asked, whatever order the database kept
    (PostgreSQL's JSON keeps none); names it does not know after, alphabetically."""
    order = {name: position for position, name in enumerate(VERDICT_LABEL_NAMES)}
    return sorted(items, key=lambda item: (order.get(item[0], len(order)), item[0]))


class VerdictSource(models.Model):
    """A named giver of verdicts on agents' success: a second harness, a published LLM judge, human
    evaluators, the agent about itself. One row per (kind, name, model, screenshot threshold), shared
    by every run: a judge shown other screenshots is another judge, while its success threshold only
    reads the same scores."""

    kind = models.CharField(max_length=32, choices=VerdictKind.choices)
    name = models.CharField(max_length=200, help_text='e.g. "agent self-report", "WebJudge".')
    model = models.CharField(max_length=200, blank=True, help_text="The judge's model, for LLM judges.")
    threshold = models.FloatField(null=True, blank=True, help_text="Score at or above which the source says success.")
    screenshot_threshold = models.FloatField(
        null=True, blank=True, help_text="A judge's relevance score (WebJudge: 1-5) at or above which a screenshot "
                                         "is shown to it; not a success threshold.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["kind", "name", "model", "screenshot_threshold"]
        constraints = [
            # Two constraints, since a unique constraint lets rows whose screenshot threshold is NULL repeat.
            models.UniqueConstraint(fields=["kind", "name", "model"], condition=Q(screenshot_threshold__isnull=True),
                                    name="verdict_source_unique"),
            models.UniqueConstraint(fields=["kind", "name", "model", "screenshot_threshold"],
                                    condition=Q(screenshot_threshold__isnull=False),
                                    name="verdict_source_unique_per_screenshot_threshold"),
            models.CheckConstraint(condition=Q(kind__in=VerdictKind.values), name="verdict_source_kind_known"),
        ]

    def __str__(self):
        name = f"{self.name} ({self.model_unsaid})" if self.model_unsaid else self.name
        return f"{name}, {self.screenshot_rule}" if self.screenshot_threshold is not None else name

    @property
    def model_unsaid(self) -> str:
        """The model, where the name does not say it already ("WebJudge gpt-4o-mini" names its model)."""
        return self.model if self.model and self.model.casefold() not in self.name.casefold() else ""

    @property
    def name_beyond_kind(self) -> str:
        """The name, where it says more than the kind shown beside it ("agent self-report" says nothing more)."""
        return "" if self.name.casefold() == self.get_kind_display().casefold() else self.name

    @property
    def screenshot_rule(self) -> str:
        """The screenshots the judge saw, in words; empty when the source does not say."""
        if self.screenshot_threshold is None:
            return ""
        return f"screenshots scored {self.screenshot_threshold:g} or more count"


class Verdict(models.Model):
    """One source's verdict on a run's outcome for one task, from one of its graders where the source
    has several people (a pair of experts labelling the same trajectory). Imported with the trajectory
    it judges (which then owns it: replacing the trajectory replaces its verdicts) or from a published
    verdict file."""

    run = models.ForeignKey(AgentRun, on_delete=models.CASCADE, related_name="verdicts")
    task = models.ForeignKey(Task, on_delete=models.PROTECT, related_name="verdicts")
    trajectory = models.ForeignKey(
        Trajectory, null=True, blank=True, on_delete=models.CASCADE, related_name="verdicts"
    )
    source = models.ForeignKey(VerdictSource, on_delete=models.PROTECT, related_name="verdicts")
    grader = models.CharField(max_length=200, blank=True, help_text="Who of the source's people; empty for one voice.")
    success = models.BooleanField(null=True, blank=True, help_text="Empty when the source gave no yes/no.")
    label = models.CharField(max_length=200, blank=True, help_text='What the source said instead, e.g. "not_executable".')
    score = models.FloatField(null=True, blank=True, help_text="The source's graded answer, as given.")
    explanation = models.TextField(blank=True)
    note = models.TextField(blank=True, help_text="What the source noted beside its verdict (browser-use's judge: "
                                                  "why the task failed).")
    labels = models.JSONField(default=dict, blank=True,
                              help_text="Labels beside success: side_effect, optimality (1-4), looping; "
                                        "not_executable, reached_captcha.")
    origin = models.CharField(max_length=16, choices=ResultOrigin.choices, default=ResultOrigin.IMPORT)
    source_name = models.CharField(max_length=500, blank=True, help_text="File the verdict came from.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["run", "task", "source", "grader"]
        constraints = [
            models.UniqueConstraint(fields=["run", "task", "source", "grader"], name="verdict_one_per_source_grader"),
        ]

    def __str__(self):
        return f"{self.source} on {self.run} / {self.task}: {self.success}"

    @property
    def not_executable(self) -> bool:
        """The task could not be executed: no yes/no, counted as not successful (Online-Mind2Web's `2`)."""
        return self.success is None and self.label == NOT_EXECUTABLE

    @property
    def shown_labels(self) -> list[tuple[str, str]]:
        return [(VERDICT_LABEL_NAMES.get(name, name.replace("_", " ")), str(value))
                for name, value in in_label_order(self.labels.items())]


class RunTally(models.Model):
    """What the leaderboard counts of a run, kept by `trajectories.services.tallies` whenever the run's
    trajectories or verdicts change, so that listing runs reads one row each whatever they hold."""

    run = models.OneToOneField(AgentRun, primary_key=True, on_delete=models.CASCADE, related_name="tally")
    trajectories = models.PositiveIntegerField(default=0)
    with_steps = models.BooleanField(default=False, help_text="Some trajectory has agent steps.")
    updated_at = models.DateTimeField(auto_now=True)


class VerdictCountFields(models.Model):
    """By one verdict source on one site group: the tasks it judged (`total`) and judged a success (`passed`)."""

    source = models.CharField(max_length=32)
    site = models.CharField(max_length=100)
    passed = models.PositiveIntegerField(default=0)
    total = models.PositiveIntegerField(default=0)

    class Meta:
        abstract = True


class RunVerdictCount(VerdictCountFields):
    """A run's verdict counts per site group and source. `source` is `harness`, `human` or a named
    source's key (`trajectories.verdict_agreement.named_source`); the offline check depends on the
    evaluation and is stored with its aggregates."""

    run = models.ForeignKey(AgentRun, on_delete=models.CASCADE, related_name="verdict_counts")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["run", "source", "site"], name="run_verdict_count_unique"),
        ]
        indexes = [models.Index(fields=["source"])]  # the sources some run has, for the leaderboard's switch


class SubsetVerdictCount(VerdictCountFields):
    """`RunVerdictCount` on the tasks of one subset: the leaderboard filtered to a subset ranks and shows its
    runs' success by each verdict source from these, as it does all runs' from `RunVerdictCount`."""

    run = models.ForeignKey(AgentRun, on_delete=models.CASCADE, related_name="subset_verdict_counts")
    subset = models.ForeignKey(TaskSubset, on_delete=models.CASCADE, related_name="verdict_counts")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["subset", "source", "run", "site"], name="subset_verdict_count_unique"),
        ]


class SubsetTally(models.Model):
    """A run's trajectories on the tasks of one subset, stored for every run with a trajectory or a task result
    there: the runs the leaderboard lists when filtered to the subset."""

    run = models.ForeignKey(AgentRun, on_delete=models.CASCADE, related_name="subset_tallies")
    subset = models.ForeignKey(TaskSubset, on_delete=models.CASCADE, related_name="tallies")
    trajectories = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["subset", "run"], name="subset_tally_unique")]
