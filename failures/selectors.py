"""Reads of failure attributions: the trajectory page's panel (blind as grades are), the queue of
failures to annotate, agreement between people, every source against the people, and a run's
failure types."""

from collections import Counter, defaultdict
from dataclasses import dataclass

from django.db.models import Count, Q, QuerySet

from accounts.roles import ANNOTATOR, has_role
from judges.models import JudgeBackend, JudgeConfig
from trajectories.models import AgentRun, Step, Trajectory

from .accuracy import Shape, against, consensus, random_floor
from .agreement import Label, StepAgreement, annotator_pairs, step_agreement
from .permissions import may_attribute
from .llm_methods import METHODS
from .models import AttributionJob, AttributionSource, FailureAttribution, FailureTaxonomy, SourceKind, ThemeJob
from .taxonomy import DEFAULT_TYPES, FailureType

QUEUE_LENGTH = 100
HUMAN_KINDS = (SourceKind.HUMAN, SourceKind.IMPORTED)


def taxonomy(benchmark: str) -> tuple[FailureType, ...]:
    """The benchmark's failure types: its own where it has them, else the default ones."""
    row = FailureTaxonomy.objects.filter(benchmark=benchmark).first()
    if row is None:
        return DEFAULT_TYPES
    return tuple(FailureType(item["key"], item["name"], item["definition"]) for item in row.types)


def has_own_taxonomy(benchmark: str) -> bool:
    return FailureTaxonomy.objects.filter(benchmark=benchmark).exists()


@dataclass(frozen=True)
class FailurePanel:
    """What the trajectory page shows of its failure annotations to one user: other people's stay
    hidden from an annotator until they have annotated it themselves."""

    can_annotate: bool
    mine: FailureAttribution | None
    attributions: list  # every source's attributions, empty while blind
    hidden: int
    types: tuple[FailureType, ...]
    agents: list[str]

    @property
    def blind(self) -> bool:
        return self.hidden > 0

    @property
    def type_names(self) -> dict[str, str]:
        return {item.key: item.name for item in self.types}


def step_agents(trajectory: Trajectory) -> list[str]:
    """The agents that speak in the trajectory, in order of first appearance."""
    seen = dict.fromkeys(Step.objects.filter(trajectory=trajectory).exclude(agent="")
                         .order_by("index").values_list("agent", flat=True))
    return list(seen)


def failure_panel(trajectory: Trajectory, user) -> FailurePanel:
    attributions = list(FailureAttribution.objects.filter(trajectory=trajectory).select_related("source")
                        .order_by("source__kind", "source__name", "created_at", "pk"))
    can_annotate = has_role(user, ANNOTATOR) and not trajectory.success
    mine = next((item for item in attributions
                 if item.annotator_id == user.pk and item.source.kind == SourceKind.HUMAN),
                None) if user.is_authenticated else None
    types, agents = taxonomy(trajectory.task.benchmark), step_agents(trajectory)
    if can_annotate and mine is None:
        return FailurePanel(True, None, [], len(attributions), types, agents)
    return FailurePanel(can_annotate, mine, attributions, 0, types, agents)


def annotation_queue(user, run_id: int | None = None) -> list[Trajectory]:
    """Failed trajectories the user has not annotated, those with fewest human annotations first."""
    failed = Trajectory.objects.filter(success=False).exclude(
        failure_attributions__annotator_id=user.pk, failure_attributions__source__kind=SourceKind.HUMAN)
    if run_id is not None:
        failed = failed.filter(run_id=run_id)
    return list(failed.annotate(annotations=Count("failure_attributions",
                                                  filter=Q(failure_attributions__source__kind__in=HUMAN_KINDS)))
                .select_related("run", "task").order_by("annotations", "run__name", "task__benchmark", "task__task_id")
                [:QUEUE_LENGTH])


def human_labels(run_id: int | None = None, benchmark: str = "") -> dict[int, list[Label]]:
    """Per trajectory, every person's attribution (graders here and imported annotators), each
    annotator named with their source."""
    rows = FailureAttribution.objects.filter(source__kind__in=HUMAN_KINDS)
    if run_id is not None:
        rows = rows.filter(trajectory__run_id=run_id)
    if benchmark:
        rows = rows.filter(trajectory__task__benchmark=benchmark)
    labels = defaultdict(list)
    for trajectory_id, source, annotator, step, agent, failure_type in rows.values_list(
            "trajectory_id", "source__name", "annotator_name", "step_index", "agent", "failure_type"):
        who = f"{source}: {annotator}" if annotator else source
        labels[trajectory_id].append(Label(who, step, agent, failure_type))
    return labels


def human_agreement(run_id: int | None = None, benchmark: str = "") -> StepAgreement:
    return step_agreement(annotator_pairs(human_labels(run_id, benchmark).values()))


# --- attribution sources against people ------------------------------------------------------

@dataclass(frozen=True)
class AttributionRow:
    """One line of the attribution table: the people's ceiling, a source, or the random floor."""

    label: str
    role: str  # "ceiling", "source" or "floor"
    result: StepAgreement
    source: AttributionSource | None = None


def _scoped(rows, run_id: int | None, benchmark: str):
    if run_id is not None:
        rows = rows.filter(trajectory__run_id=run_id)
    if benchmark:
        rows = rows.filter(trajectory__task__benchmark=benchmark)
    return rows


def labels_by_source(run_id: int | None = None, benchmark: str = "") -> dict[int, dict[int, list[Label]]]:
    """{source pk: {trajectory pk: its labels}} over the trajectories in scope."""
    found = defaultdict(lambda: defaultdict(list))
    rows = _scoped(FailureAttribution.objects.all(), run_id, benchmark).values_list(
        "source_id", "trajectory_id", "annotator_name", "step_index", "agent", "failure_type")
    for source_id, trajectory_id, annotator, step, agent, failure_type in rows.iterator():
        found[source_id][trajectory_id].append(Label(annotator, step, agent, failure_type))
    return found


def human_sources(run_id: int | None = None, benchmark: str = "") -> list[AttributionSource]:
    used = _scoped(FailureAttribution.objects.filter(source__kind__in=HUMAN_KINDS), run_id, benchmark)
    return list(AttributionSource.objects.filter(pk__in=used.values("source_id")).order_by("kind", "name"))


def _shapes(trajectory_ids) -> dict[int, Shape]:
    agents = dict(Step.objects.filter(trajectory_id__in=trajectory_ids).exclude(agent="")
                  .values("trajectory_id").annotate(count=Count("agent", distinct=True))
                  .values_list("trajectory_id", "count"))
    types = {}
    shapes = {}
    for pk, steps, benchmark in Trajectory.objects.filter(pk__in=trajectory_ids).values_list(
            "pk", "step_count", "task__benchmark"):
        if benchmark not in types:
            types[benchmark] = len(taxonomy(benchmark))
        if steps:
            shapes[pk] = Shape(steps=steps, agents=agents.get(pk, 0), types=types[benchmark])
    return shapes


def attribution_table(run_id: int | None = None, benchmark: str = "",
                      reference: AttributionSource | None = None) -> list[AttributionRow]:
    """The people's agreement first, then every other source against the people (`reference`, or
    the consensus of every person), then the random floor."""
    by_source = labels_by_source(run_id, benchmark)
    sources = AttributionSource.objects.in_bulk(list(by_source))
    if reference is not None:
        people = by_source.get(reference.pk, {})
    else:
        people = defaultdict(list)
        for source_id, labels in by_source.items():
            if sources[source_id].is_human:
                for trajectory_id, items in labels.items():
                    people[trajectory_id].extend(items)
    truth = {trajectory_id: consensus(labels) for trajectory_id, labels in people.items()}
    rows = [AttributionRow("People against each other (ceiling)", "ceiling", human_agreement(run_id, benchmark))]
    for source_id, labels in sorted(by_source.items(), key=lambda item: (sources[item[0]].kind, str(sources[item[0]]))):
        source = sources[source_id]
        if source == reference or (reference is None and source.is_human):
            continue
        predicted = {trajectory_id: consensus(items) for trajectory_id, items in labels.items()}
        rows.append(AttributionRow(str(source), "source", against(truth, predicted), source))
    rows.append(AttributionRow("Random choice (floor)", "floor", random_floor(truth, _shapes(list(truth)))))
    return rows


# --- failure types of a run ------------------------------------------------------------------

@dataclass(frozen=True)
class TypeCount:
    key: str
    name: str
    count: int
    share: float


def failure_types(run: AgentRun, source: AttributionSource | None = None) -> tuple[list[TypeCount], int]:
    """How many of the run's attributed failures are of each type, by `source` or by the people's
    consensus, most first; and how many attributed failures have no type."""
    return failure_types_of_runs([run.pk], source).get(run.pk, ([], 0))


def failure_types_of_runs(run_ids, source: AttributionSource | None = None) -> dict[int, tuple[list[TypeCount], int]]:
    """`failure_types` of many runs at once (the runs with no attributed failure left out)."""
    rows = FailureAttribution.objects.filter(trajectory__run_id__in=run_ids)
    rows = rows.filter(source=source) if source is not None else rows.filter(source__kind__in=HUMAN_KINDS)
    labels = defaultdict(lambda: defaultdict(list))
    for run_id, benchmark, trajectory_id, annotator, step, agent, failure_type in rows.values_list(
            "trajectory__run_id", "trajectory__run__benchmark", "trajectory_id", "annotator_name", "step_index",
            "agent", "failure_type"):
        labels[run_id, benchmark][trajectory_id].append(Label(annotator, step, agent, failure_type))
    found = {}
    for (run_id, benchmark), trajectories in labels.items():
        types = Counter(consensus(items).failure_type for items in trajectories.values())
        untyped = types.pop("", 0)
        total = sum(types.values())
        names = {item.key: item.name for item in taxonomy(benchmark)}
        found[run_id] = ([TypeCount(key, names.get(key, key), count, count / total)
                          for key, count in sorted(types.items(), key=lambda item: (-item[1], item[0]))], untyped)
    return found


def runs_with_failure_type(failure_type: str, source: AttributionSource | None = None) -> QuerySet:
    """Ids of the runs with a failure of the type by `source` (by some person when None)."""
    rows = FailureAttribution.objects.filter(failure_type=failure_type)
    rows = rows.filter(source=source) if source is not None else rows.filter(source__kind__in=HUMAN_KINDS)
    return rows.values("trajectory__run_id")


PEOPLE = "people"  # the people's consensus, where a source of failure types is chosen


def failure_type_source(key: str) -> AttributionSource | None:
    """The source a choice names: PEOPLE (None: the people's consensus) or a source's id; ValueError otherwise."""
    if key == PEOPLE:
        return None
    source = AttributionSource.objects.filter(pk=int(key)).first() if key.isdigit() else None
    if source is None:
        raise ValueError(f"failure_source: {key[:40]!r} is neither {PEOPLE!r} nor an attribution source's id")
    return source


def failure_source_choices() -> list[tuple[str, str]]:
    return [(PEOPLE, "people's consensus"), *((str(source.pk), str(source)) for source in AttributionSource.objects.all())]


def failure_type_choices() -> list[tuple[str, str]]:
    """(key, name) of the default types and of every type some attribution gives, by name."""
    names = {item.key: item.name for item in DEFAULT_TYPES}
    for key in FailureAttribution.objects.exclude(failure_type="").values_list("failure_type", flat=True).distinct():
        names.setdefault(key, key)
    return sorted(names.items(), key=lambda item: item[1])


def run_sources(run: AgentRun) -> list[AttributionSource]:
    """The sources that attributed some failure of the run."""
    return list(AttributionSource.objects.filter(attributions__trajectory__run=run).distinct().order_by("kind", "name"))


@dataclass(frozen=True)
class RunFailures:
    """The run page's summary of why its trajectories failed, by one source or the people."""

    failed: int
    types: list[TypeCount]
    untyped: int
    sources: list[AttributionSource]
    source: AttributionSource | None
    may_run_rules: bool
    jobs: list[AttributionJob]  # the latest LLM attribution jobs
    judges: list[JudgeConfig]  # those an LLM method can be started with (openai)
    methods: dict[str, str]


def run_failures(run: AgentRun, user, source_pk: str = "") -> RunFailures:
    sources = run_sources(run)
    source = next((item for item in sources if str(item.pk) == source_pk), None)
    types, untyped = failure_types(run, source)
    return RunFailures(run.trajectories.filter(success=False).count(), types, untyped, sources, source,
                       may_attribute(user, run), list(run.attribution_jobs.select_related("judge_config")[:5]),
                       list(attribution_judges()), METHODS)


def attribution_judges():
    """The judge configurations an LLM method can be asked of: those of the `openai` backend."""
    return JudgeConfig.objects.filter(backend=JudgeBackend.OPENAI).order_by("name")


# --- failure themes --------------------------------------------------------------------------

@dataclass(frozen=True)
class ThemesView:
    """The latest themes of a scope, and the job computing newer ones, if any."""

    done: ThemeJob | None
    pending: ThemeJob | None
    themes: list  # (label, size, representative trajectories still stored), largest first


def latest_themes(run_id: int | None = None, benchmark: str = "") -> ThemesView:
    scope = ThemeJob.objects.filter(run_id=run_id, benchmark=benchmark)
    done = scope.filter(status=ThemeJob.Status.DONE).order_by("-finished_at", "-pk").first()
    pending = scope.filter(status__in=ThemeJob.unfinished_statuses).order_by("-created_at", "-pk").first()
    found = done.themes if done else []
    stored = Trajectory.objects.select_related("task").in_bulk(
        [pk for theme in found for pk in theme["representatives"]])
    rows = [(" · ".join(theme["phrases"]) or "(no words in common)", theme["size"],
             [stored[pk] for pk in theme["representatives"] if pk in stored]) for theme in found]
    return ThemesView(done, pending, rows)
