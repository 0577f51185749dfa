"""Reads of tasks, runs and trajectories."""

import json
from collections import Counter, defaultdict
from dataclasses import dataclass

from django.conf import settings
from django.core.paginator import Page, Paginator
from django.db.models import Avg, Count, Exists, F, OuterRef, Q, QuerySet, Sum
from django.db.models.functions import Length, Substr
from django.urls import reverse

from accounts.roles import ANNOTATOR, has_role

from .formats.actions import parse_action
from .models import (
    BENCHMARK_VERSIONS,
    NOT_EXECUTABLE,
    VERDICT_LABEL_NAMES,
    in_label_order,
    AgentRun,
    OutcomeGrade,
    OutcomeStatus,
    Step,
    Task,
    TaskResult,
    TaskSubset,
    Trajectory,
    Verdict,
    VerdictSource,
)
from .verdict_agreement import HARNESS, HUMAN, consensus_success, named_source, site_group


OUTCOME_FIELDS = {status: f"outcome_{status}" for status in OutcomeStatus.values}


def runs_overview() -> QuerySet[AgentRun]:
    """Every run with its trajectory count, harness verdicts and outcome counts."""
    return (
        AgentRun.objects.select_related("uploaded_by")
        .annotate(
            has_task_results=Exists(TaskResult.objects.filter(run=OuterRef("pk"))),
            trajectory_count=Count("trajectories"),
            # Trajectories with agent steps: a run without any (verdicts and final answers only) is results-only.
            stepped_count=Count("trajectories", filter=Q(trajectories__step_count__gt=0)),
            passed=Count("trajectories", filter=Q(trajectories__success=True)),
            judged=Count("trajectories", filter=Q(trajectories__success__isnull=False)),
            **{
                field: Count("trajectories", filter=Q(trajectories__outcome_status=status))
                for status, field in OUTCOME_FIELDS.items()
            },
        )
        .order_by("-created_at")
    )


@dataclass(frozen=True)
class TrajectoryFilters:
    outcome: str = ""
    site: str = ""
    success: str = ""  # "pass", "fail", "unknown" or "" for all
    search: str = ""


def run_trajectories(run: AgentRun, filters: TrajectoryFilters) -> QuerySet[Trajectory]:
    trajectories = run.trajectories.select_related("task").order_by("task__number", "task__task_id")
    if filters.outcome:
        trajectories = trajectories.filter(outcome_status=filters.outcome)
    if filters.site:
        # Sites are a JSON list; matching the quoted name keeps "shopping" from matching "shopping_admin".
        trajectories = trajectories.filter(task__sites__icontains=json.dumps(filters.site))
    if filters.success == "unknown":
        trajectories = trajectories.filter(success__isnull=True)
    elif filters.success in ("pass", "fail"):
        trajectories = trajectories.filter(success=filters.success == "pass")
    if filters.search:
        trajectories = trajectories.filter(Q(task__task_id=filters.search) | Q(task__intent__icontains=filters.search))
    return trajectories


def run_sites(run: AgentRun) -> list[str]:
    sites = Task.objects.filter(trajectories__run=run).values_list("sites", flat=True).distinct()
    return sorted({site for listed in sites for site in (listed or [])})


def viewer_trajectories() -> QuerySet[Trajectory]:
    return Trajectory.objects.select_related("run", "task")


# A step's long texts are read from the database cut to this many characters for a page, with their length and a
# link to the whole, so that a page's memory is bounded whatever the texts hold (a 10 MB reasoning).
PAGE_TEXT_LIMIT = 20_000
PAGE_TEXTS = ("reasoning", "model_output", "observation")


@dataclass(frozen=True)
class PageText:
    """A step's text as a page shows it: at most PAGE_TEXT_LIMIT characters of it, its whole length, and where
    the whole is read."""

    text: str
    length: int
    url: str

    @property
    def cut(self) -> bool:
        return self.length > len(self.text)

    def __bool__(self) -> bool:
        return bool(self.length)


@dataclass(frozen=True)
class StepView:
    """An agent step as the viewer shows it, with whether it did what its reasoning said."""

    step: Step
    planned_matches: bool | None  # None: the reasoning states no action
    screenshot_url: str = ""  # of the screenshot taken before the step, when it has one
    texts: dict[str, PageText] | None = None  # PAGE_TEXTS, cut

    @property
    def is_stop(self) -> bool:
        return self.step.action_type == "stop"

    @property
    def plan_agreement(self) -> str:
        """Whether the step did what its reasoning planned: "match", "mismatch" or "no-plan"."""
        if self.planned_matches is None:
            return "no-plan"
        return "match" if self.planned_matches else "mismatch"


class _CountedPaginator(Paginator):
    """Pages of a list whose length a query has read already."""

    def __init__(self, object_list, per_page, count: int):
        super().__init__(object_list, per_page)
        self.count = count


def steps_page(trajectory: Trajectory, count: int, number) -> Page:
    """Page `number` of the trajectory's `count` steps (`steps_show` counts them)."""
    cut = {}
    for name in PAGE_TEXTS:
        cut[f"{name}_head"] = Substr(name, 1, PAGE_TEXT_LIMIT)
        cut[f"{name}_length"] = Length(name)
    steps = (trajectory.steps.defer(*PAGE_TEXTS).annotate(screenshot_sha256=F("screenshot__sha256"), **cut)
             .order_by("index"))
    return _CountedPaginator(steps, settings.TRAJECTORY_STEPS_PER_PAGE, count).get_page(number)


def step_text(trajectory_id: int, index: int, name: str) -> str:
    """The whole of one of a step's long texts (PAGE_TEXTS), which its page shows cut."""
    return Step.objects.filter(trajectory_id=trajectory_id, index=index).values_list(name, flat=True).get()


def step_views(steps) -> list[StepView]:
    """The steps of `steps_page`, as the viewer shows them."""
    views = []
    for step in steps:
        matches = None
        if step.planned_action:
            matches = parse_action(step.action, executed=True).executes(parse_action(step.planned_action))
        shot = reverse("trajectories:screenshot", args=[step.screenshot_sha256]) if step.screenshot_sha256 else ""
        texts = {name: PageText(getattr(step, f"{name}_head"), getattr(step, f"{name}_length"),
                                reverse("trajectories:step-text", args=[step.trajectory_id, step.index, name]))
                 for name in PAGE_TEXTS}
        views.append(StepView(step=step, planned_matches=matches, screenshot_url=shot, texts=texts))
    return views


@dataclass(frozen=True)
class StepsShow:
    """How many steps a trajectory has and which kinds of what the agent saw they hold, so that a page
    says once what the file does not record instead of showing an empty pane per step."""

    count: int
    screenshots: bool
    observations: bool


def steps_show(trajectory: Trajectory) -> StepsShow:
    """What any of the trajectory's steps records, whichever page of them is shown (one query)."""
    found = trajectory.steps.aggregate(count=Count("pk"), screenshots=Count("pk", filter=Q(screenshot__isnull=False)),
                                       observations=Count("pk", filter=~Q(observation="")))
    return StepsShow(count=found["count"], screenshots=bool(found["screenshots"]),
                     observations=bool(found["observations"]))


def task_verdicts_by_source(run_id: int, task_id: int) -> list[Verdict]:
    """The verdicts of named sources (other than the harness of record) on one task of a run."""
    return list(Verdict.objects.filter(run_id=run_id, task_id=task_id).select_related("source")
                .order_by("source__kind", "source__name", "source__model", "grader"))


@dataclass(frozen=True)
class SourceRate:
    """A named verdict source's success rate over a run's tasks: `passed` of the `count` verdicts that
    say yes or no (a task that could not be executed counts as not successful, as Online-Mind2Web
    counts it); `unsaid` verdicts gave only a label or a score."""

    source: VerdictSource
    passed: int
    count: int
    unsaid: int

    @property
    def mean(self) -> float | None:
        return self.passed / self.count if self.count else None


def source_rates(run: AgentRun) -> list[SourceRate]:
    said = Q(success__isnull=False) | Q(label=NOT_EXECUTABLE)
    rows = (Verdict.objects.filter(run=run).order_by().values("source_id")
            .annotate(count=Count("pk", filter=said), passed=Count("pk", filter=Q(success=True)),
                      unsaid=Count("pk", filter=~said)))
    sources = VerdictSource.objects.in_bulk([row["source_id"] for row in rows])
    rates = [SourceRate(sources[row["source_id"]], row["passed"], row["count"], row["unsaid"]) for row in rows]
    return sorted(rates, key=lambda rate: (rate.source.kind, rate.source.name, rate.source.model))


@dataclass(frozen=True)
class SourceLabelCounts:
    """How often each further label of a source's verdicts (side effect, optimality, looping) took each
    value over a run's verdicts: [(label, [(value, count)])]."""

    source: VerdictSource
    labels: list[tuple[str, list[tuple[str, int]]]]


def label_counts(run: AgentRun) -> list[SourceLabelCounts]:
    counts: dict[int, dict[str, Counter]] = defaultdict(lambda: defaultdict(Counter))
    for source_id, labels in Verdict.objects.filter(run=run).exclude(labels={}).values_list("source_id", "labels"):
        for name, value in labels.items():
            counts[source_id][name][str(value)] += 1
    sources = VerdictSource.objects.in_bulk(list(counts))
    found = [SourceLabelCounts(sources[source_id], [
        (VERDICT_LABEL_NAMES.get(name, name.replace("_", " ")), sorted(values.items()))
        for name, values in in_label_order(by_name.items())]) for source_id, by_name in counts.items()]
    return sorted(found, key=lambda item: (item.source.kind, item.source.name, item.source.model))


USAGE_FIELDS = ("tokens_in", "tokens_out", "cost", "duration")


def run_usage(run: AgentRun) -> dict:
    """Totals of tokens, cost and time over the run's trajectories that record them, with how many do:
    {field: {"total", "trajectories"}} for the fields some trajectory records."""
    found = Trajectory.objects.filter(run=run).aggregate(
        **{f"{field}_total": Sum(field) for field in USAGE_FIELDS},
        **{f"{field}_known": Count("pk", filter=Q(**{f"{field}__isnull": False})) for field in USAGE_FIELDS})
    return {field: {"total": found[f"{field}_total"], "trajectories": found[f"{field}_known"]}
            for field in USAGE_FIELDS if found[f"{field}_known"]}


@dataclass(frozen=True)
class Neighbour:
    """A trajectory next to another in its run, as the link to it names it."""

    pk: int
    task_name: str  # the benchmark's id of its task


def neighbours(trajectory: Trajectory) -> tuple[Neighbour | None, Neighbour | None]:
    """The run's trajectories just before and after this one, in task order (one query)."""
    ordered = list(trajectory.run.trajectories.order_by("task__number", "task__task_id")
                   .values_list("pk", "task__task_id"))
    position = next(index for index, (pk, _) in enumerate(ordered) if pk == trajectory.pk)
    previous = Neighbour(*ordered[position - 1]) if position > 0 else None
    following = Neighbour(*ordered[position + 1]) if position + 1 < len(ordered) else None
    return previous, following


def task_benchmarks() -> list[str]:
    return list(Task.objects.order_by("benchmark").values_list("benchmark", flat=True).distinct())


def task_list(benchmark: str = "", subset: TaskSubset | None = None) -> QuerySet[Task]:
    tasks = Task.objects.annotate(trajectory_count=Count("trajectories")).order_by("benchmark", "number", "task_id")
    if benchmark:
        tasks = tasks.filter(benchmark=benchmark)
    if subset is not None:
        tasks = tasks.filter(subset.task_filter())
    return tasks


def task_versions(task: Task) -> list[Task]:
    """The same task in the other benchmarks that share its ids (WebArena and WebArena-Verified),
    or, for a WebArena-Lite task, the WebArena task it was made from (and its Verified version)."""
    if task.old_task_id:
        ids, benchmarks = [task.old_task_id], TaskSubset(benchmark="webarena").benchmarks
    else:
        family = next((base for base, versions in BENCHMARK_VERSIONS.items()
                       if task.benchmark == base or task.benchmark in versions), None)
        if family is None:
            return []
        ids, benchmarks = [task.task_id], TaskSubset(benchmark=family).benchmarks
    return list(Task.objects.filter(benchmark__in=benchmarks, task_id__in=ids).exclude(pk=task.pk)
                .order_by("benchmark"))


def task_subsets(task: Task) -> list[TaskSubset]:
    """Subsets that hold the task (by id, in its benchmark or the benchmark it is a version of)."""
    return [subset for subset in TaskSubset.objects.all()
            if task.benchmark in subset.benchmarks and task.task_id in subset.task_ids]


def subsets_of_run(run: AgentRun) -> list[tuple[TaskSubset, int]]:
    """(subset, trajectories of the run in it) for every subset the run has trajectories in."""
    found = []
    for subset in TaskSubset.objects.filter(benchmark__in=_families_of(run)):
        count = run.trajectories.filter(subset.task_filter("task__")).count()
        if count:
            found.append((subset, count))
    return found


def _families_of(run: AgentRun) -> set[str]:
    benchmarks = set(run.trajectories.values_list("task__benchmark", flat=True).distinct())
    return benchmarks | {base for base, versions in BENCHMARK_VERSIONS.items() if benchmarks & set(versions)}


@dataclass(frozen=True)
class Grading:
    """Human grades of a trajectory's outcome as one user may see them: blind until they have graded."""

    can_grade: bool
    mine: OutcomeGrade | None
    grades: list  # every grader's grade, oldest first; empty while blind
    hidden: int  # grades kept from a grader who has not graded yet

    @property
    def blind(self) -> bool:
        return self.hidden > 0


def task_grades(trajectory: Trajectory) -> list[OutcomeGrade]:
    """Every human grade of the trajectory's task in its run, oldest first, hidden or not."""
    return list(OutcomeGrade.objects.filter(run_id=trajectory.run_id, task_id=trajectory.task_id)
                .select_related("grader").order_by("created_at", "pk"))


def trajectory_grading(trajectory: Trajectory, user, grades: list[OutcomeGrade] | None = None) -> Grading:
    """The grades `user` may see; `grades`: `task_grades` of the trajectory, when read already."""
    grades = task_grades(trajectory) if grades is None else grades
    can_grade = has_role(user, ANNOTATOR)
    mine = next((grade for grade in grades if grade.grader_id == user.pk), None) if user.is_authenticated else None
    if can_grade and mine is None:
        return Grading(can_grade=True, mine=None, grades=[], hidden=len(grades))
    return Grading(can_grade=can_grade, mine=mine, grades=grades, hidden=0)


def graded_tasks(run: AgentRun, user) -> set[int]:
    """Task pks of the run that the user has graded (the others' human verdicts stay hidden from a grader)."""
    return set(OutcomeGrade.objects.filter(run=run, grader_id=user.pk).values_list("task_id", flat=True))


def verdict_counts(run_ids, on_tasks: Q = Q()) -> list[tuple[int, str, str, int, int]]:
    """[(run id, source, site group, passed, total)] of the harness, the human graders and every named source,
    counted by the database over the runs' tasks (those matching `on_tasks`, a filter on `task__`). The harness
    verdict is the trajectory's, else the task result's; graders succeed on a task when their mean is above 0.5.
    """
    run_ids = list(run_ids)
    found: dict[tuple[int, str, str], list[int]] = {}

    def add(run_id: int, source: str, sites, passed: int, total: int) -> None:
        cell = found.setdefault((run_id, source, site_group({"sites": sites})), [0, 0])
        cell[0] += passed
        cell[1] += total

    judged = Trajectory.objects.filter(run_id=OuterRef("run_id"), task_id=OuterRef("task_id"), success__isnull=False)
    passed = Count("pk", filter=Q(success=True))
    for rows in (
        Trajectory.objects.filter(on_tasks, run_id__in=run_ids, success__isnull=False),
        TaskResult.objects.filter(on_tasks, run_id__in=run_ids, success__isnull=False).exclude(Exists(judged)),
    ):
        for run_id, sites, total, yes in (rows.order_by().values("run_id", "task__sites")
                                          .annotate(total=Count("pk"), yes=passed)
                                          .values_list("run_id", "task__sites", "total", "yes")):
            add(run_id, HARNESS, sites, yes, total)
    graded = (OutcomeGrade.objects.filter(on_tasks, run_id__in=run_ids).order_by()
              .values("run_id", "task_id", "task__sites").annotate(mean=Avg("value"))
              .values_list("run_id", "task__sites", "mean"))
    for run_id, sites, mean in graded:
        add(run_id, HUMAN, sites, int(bool(consensus_success(mean))), 1)
    for said in named_majorities(run_ids, on_tasks):
        add(said.run_id, named_source(said.source_id), said.task_sites, int(said.success), 1)
    return [(run_id, source, site, passed, total) for (run_id, source, site), (passed, total) in found.items()]


@dataclass(frozen=True)
class NamedVerdict:
    """A named source's one verdict on a task of a run."""

    run_id: int
    source_id: int
    task_id: int
    task_sites: list
    success: bool


def named_majorities(run_ids, on_tasks: Q = Q(), *, leave_out_kinds=()) -> list[NamedVerdict]:
    """Each named source's verdict on each task of the runs (matching `on_tasks`, a filter on `task__`), read
    by the database: the majority of its graders' yes and no (most sources have one voice); a task that could
    not be executed is a no, as Online-Mind2Web counts it; a tie says nothing and is left out. Every reader of
    a named source's verdict per task (stored counts, agreement) takes it from here."""
    failed = Q(success=False) | Q(success__isnull=True, label=NOT_EXECUTABLE)
    rows = (Verdict.objects.filter(on_tasks, run_id__in=list(run_ids)).exclude(source__kind__in=leave_out_kinds)
            .order_by().values("run_id", "source_id", "task_id", "task__sites")
            .annotate(yes=Count("pk", filter=Q(success=True)), no=Count("pk", filter=failed))
            .values_list("run_id", "source_id", "task_id", "task__sites", "yes", "no"))
    return [NamedVerdict(run_id, source_id, task_id, sites, yes > no)
            for run_id, source_id, task_id, sites, yes, no in rows if yes != no]
