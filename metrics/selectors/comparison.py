"""Two runs compared task by task, and two trajectories of one task side by side.

Each run is represented by its latest finished evaluation (`metrics.selectors.leaderboard`). Runs are paired
over the tasks both have scores for (errored scores left out); when an evaluation scored a
trajectory against several gold trajectories (gold policy "each"), the task's value is the mean
over them. Statistics come from `aggregation.compare_paired`: differences are candidate minus
baseline, with a percentile bootstrap CI, Wilcoxon signed-rank and paired t-test p-values.
"""

import statistics
from dataclasses import asdict, dataclass

from django.core.cache import cache

from annotation.models import GoldStep
from annotation.permissions import visible_gold
from metrics import aggregation
from metrics.aggregation import METRICS, PairedComparison, compare_paired
from metrics.alignment import GOLD, AgentStepMark, SideAlignment, align, align_side
from metrics.models import TrajectoryScore
from metrics.selectors.latest_evaluations import Evaluation, cache_key, latest_evaluations
from trajectories.models import AgentRun, Step, Task, TaskSubset, Trajectory

# SPSS's default, which the papers used. A CI bound of 812 pairs then lies within about 0.004 of
# its exact bootstrap value (0.01 for 100 pairs), against a CI width of 0.07 (0.2), and ten
# metrics over every site group of two 812-task runs take about a third of a second.
COMPARISON_RESAMPLES = 1_000
DIFFERING_TASKS = 20
CACHE_SECONDS = 24 * 3600
SAME = 1e-12  # ratios computed in different ways can differ in the last bit


class NotEvaluated(ValueError):
    """A run has no finished evaluation (with the chosen judge) to compare."""

    def __init__(self, run: AgentRun, judge: str = ""):
        self.run = run
        with_judge = f" with judge {judge!r}" if judge else ""
        super().__init__(f"run {run.name!r} has no finished evaluation{with_judge}")


@dataclass(frozen=True)
class Side:
    run_id: int
    name: str
    evaluation: Evaluation


def evaluated_side(run: AgentRun, judge: str = "") -> Side:
    evaluation = latest_evaluations([run.pk], judge=judge).get(run.pk)
    if evaluation is None:
        raise NotEvaluated(run, judge)
    return Side(run.pk, run.name, evaluation)


@dataclass(frozen=True)
class TaskScores:
    task_pk: int
    task_id: str
    number: int | None
    site: str
    intent: str
    trajectory_id: int
    values: dict  # metric -> value (mean over golds), None when null


def _mean(values):
    present = [float(value) for value in values if value is not None]
    return statistics.fmean(present) if present else None


def task_scores(side: Side, subset: TaskSubset | None = None) -> dict[int, TaskScores]:
    """{task pk: the side's scores on it} from one query; only the subset's tasks when one is given."""
    rows = TrajectoryScore.objects.filter(job_id=side.evaluation.job_id, trajectory__run_id=side.run_id, error="")
    if subset is not None:
        rows = rows.filter(subset.task_filter("trajectory__task__"))
    rows = rows.values_list("trajectory__task_id", "trajectory_id", "trajectory__task__task_id",
                            "trajectory__task__number", "trajectory__task__sites", "trajectory__task__intent", *METRICS)
    by_task: dict[int, list[tuple]] = {}
    for row in rows:
        by_task.setdefault(row[0], []).append(row)
    result = {}
    for task_pk, scored in by_task.items():
        _, trajectory_id, task_id, number, sites, intent = scored[0][: -len(METRICS)]
        values = [row[-len(METRICS):] for row in scored]
        if len(values) == 1:
            means = [None if value is None else float(value) for value in values[0]]
        else:  # one row per gold (the "each" gold policy): the task's value is their mean
            means = [_mean(column) for column in zip(*values)]
        result[task_pk] = TaskScores(
            task_pk=task_pk, task_id=task_id, number=number, site=aggregation.site_group({"sites": sites}),
            intent=intent, trajectory_id=trajectory_id, values=dict(zip(METRICS, means)),
        )
    return result


@dataclass(frozen=True)
class MetricComparison:
    metric: str
    overall: PairedComparison
    by_site: tuple[tuple[str, PairedComparison], ...]


@dataclass(frozen=True)
class TaskDifference:
    task_pk: int
    task_id: str
    site: str
    intent: str
    baseline: float
    candidate: float
    difference: float


@dataclass(frozen=True)
class RunComparison:
    baseline: Side
    candidate: Side
    shared_tasks: int
    sites: tuple[str, ...]
    metrics: tuple[MetricComparison, ...]
    difference_metric: str
    differing_tasks: tuple[TaskDifference, ...]
    subset: str = ""

    def to_dict(self) -> dict:
        return asdict(self)


def _paired(baseline: dict[int, TaskScores], candidate: dict[int, TaskScores], metric: str,
            resamples: int) -> PairedComparison:
    return compare_paired(
        {task: scores.values[metric] for task, scores in baseline.items()},
        {task: scores.values[metric] for task, scores in candidate.items()},
        resamples=resamples,
    )


def differing_tasks(baseline: dict[int, TaskScores], candidate: dict[int, TaskScores], metric: str,
                    limit: int = DIFFERING_TASKS) -> list[TaskDifference]:
    """Shared tasks whose values differ, largest absolute difference first."""
    differences = []
    for task_pk, base in baseline.items():
        other = candidate.get(task_pk)
        if other is None or base.values[metric] is None or other.values[metric] is None:
            continue
        a, b = base.values[metric], other.values[metric]
        if abs(b - a) <= SAME:
            continue
        order = (-abs(b - a), base.number is None, base.number or 0, base.task_id)
        differences.append((order, TaskDifference(task_pk, base.task_id, base.site, base.intent, a, b, b - a)))
    differences.sort(key=lambda item: item[0])
    return [difference for _, difference in differences[:limit]]


def compare_runs(baseline: AgentRun, candidate: AgentRun, *, judge: str = "", difference_metric: str = "step_success",
                 limit: int = DIFFERING_TASKS, resamples: int = COMPARISON_RESAMPLES,
                 subset: TaskSubset | None = None) -> RunComparison:
    """Paired comparison of every metric, overall and per site, plus the tasks that differ most.

    Cached, in two parts so that asking for another metric's differing tasks costs no statistics:
    both depend only on the two evaluations (and the subset's ids), which change only by
    finishing again.
    """
    if difference_metric not in METRICS:
        raise ValueError(f"metric: unknown metric {difference_metric!r}; expected one of {', '.join(METRICS)}")
    if baseline.pk == candidate.pk:
        raise ValueError("choose two different runs to compare")
    sides = evaluated_side(baseline, judge), evaluated_side(candidate, judge)
    loaded = []

    def scores() -> tuple[dict[int, TaskScores], dict[int, TaskScores]]:
        if not loaded:
            loaded.extend((task_scores(sides[0], subset), task_scores(sides[1], subset)))
        return loaded[0], loaded[1]

    def statistics_of_every_metric():
        base, other = scores()
        shared = base.keys() & other.keys()
        sites = tuple(sorted({base[task].site for task in shared}))
        by_site = {site: ({t: s for t, s in base.items() if s.site == site},
                          {t: s for t, s in other.items() if s.site == site}) for site in sites}
        metrics = tuple(
            MetricComparison(metric=metric, overall=_paired(base, other, metric, resamples),
                             by_site=tuple((site, _paired(*by_site[site], metric, resamples)) for site in sites))
            for metric in METRICS
        )
        return len(shared), sites, metrics

    scope = (subset.name, subset.benchmark, tuple(subset.task_ids)) if subset is not None else ()
    shared, sites, metrics = cache.get_or_set(cache_key("comparison", *sides, resamples, *scope),
                                              statistics_of_every_metric, CACHE_SECONDS)
    differing = cache.get_or_set(cache_key("differing-tasks", *sides, difference_metric, limit, *scope),
                                 lambda: tuple(differing_tasks(*scores(), difference_metric, limit)), CACHE_SECONDS)
    return RunComparison(baseline=sides[0], candidate=sides[1], shared_tasks=shared, sites=sites, metrics=metrics,
                         difference_metric=difference_metric, differing_tasks=differing,
                         subset=subset.name if subset is not None else "")


# Side by side ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class StepCell:
    mark: AgentStepMark
    action: str
    url: str


@dataclass
class TrajectorySide:
    side: Side
    trajectory: Trajectory | None
    score: TrajectoryScore | None
    alignment: SideAlignment


@dataclass(frozen=True)
class RowSide:
    """One trajectory's part of a row; `unmatched` marks a gold row it has no step on."""

    trajectory_id: int | None
    cells: tuple[StepCell, ...]
    unmatched: bool = False
    never_reached: bool = False  # the agent's steps ran out before this gold step


@dataclass(frozen=True)
class SideBySideRow:
    kind: str
    gold_step: int | None
    gold_texts: tuple[str | None, ...]  # one per distinct gold in use (one when both share it)
    sides: tuple[RowSide, ...]


@dataclass
class SideBySide:
    task: Task
    sides: list[TrajectorySide]
    same_gold: bool
    rows: list[SideBySideRow]
    gold_hidden: bool = False  # a side was scored against gold the viewer may not read: its text is left out


def _scores_by_trajectory(sides: list[Side], trajectories: dict[int, Trajectory]) -> dict[int, list[TrajectoryScore]]:
    found: dict[int, list[TrajectoryScore]] = {}
    for side in sides:
        trajectory = trajectories.get(side.run_id)
        if trajectory is None:
            continue
        found[side.run_id] = list(
            TrajectoryScore.objects.filter(job_id=side.evaluation.job_id, trajectory=trajectory)
            .select_related("gold__annotator").order_by("-gold_id")
        )
    return found


def _choose_scores(sides: list[Side], scores: dict[int, list[TrajectoryScore]]) -> dict[int, TrajectoryScore | None]:
    """One score per side, preferring a gold trajectory that every side was scored against."""
    gold_sets = [{score.gold_id for score in scores.get(side.run_id, [])} for side in sides]
    common = set.intersection(*gold_sets) - {None} if gold_sets else set()
    chosen = {}
    for side in sides:
        candidates = scores.get(side.run_id, [])
        shared = [score for score in candidates if score.gold_id in common]
        chosen[side.run_id] = (shared or candidates or [None])[0]
    return chosen


def side_by_side(task: Task, runs: list[AgentRun], *, viewer, judge: str = "") -> SideBySide:
    """The runs' trajectories of one task, aligned to the gold steps their scores used; the text of
    a gold `viewer` may not read (blind review) is None."""
    sides = [evaluated_side(run, judge) for run in runs]
    trajectories = {t.run_id: t for t in Trajectory.objects.filter(task=task, run__in=runs).select_related("run")}
    chosen = _choose_scores(sides, _scores_by_trajectory(sides, trajectories))
    steps: dict[int, dict[int, tuple[str, str]]] = {}
    for trajectory_id, index, action, url in Step.objects.filter(
        trajectory__in=list(trajectories.values())
    ).values_list("trajectory_id", "index", "action", "url"):
        steps.setdefault(trajectory_id, {})[index] = (action, url)

    columns = []
    for side in sides:
        trajectory, score = trajectories.get(side.run_id), chosen[side.run_id]
        agent_steps = len(steps.get(trajectory.pk, {})) if trajectory else 0
        details = score.details if score and not score.error else {}
        columns.append(TrajectorySide(side, trajectory, score, align_side(agent_steps, details)))

    gold_ids = list(dict.fromkeys(c.score.gold_id for c in columns if c.score and c.score.gold_id))
    readable = set(visible_gold(viewer).filter(pk__in=gold_ids).values_list("pk", flat=True))
    gold_text: dict[int, dict[int, str]] = {}
    for gold_id, index, text in GoldStep.objects.filter(gold_id__in=readable).values_list("gold_id", "index", "text"):
        gold_text.setdefault(gold_id, {})[index] = text

    def row_side(column: TrajectorySide, marks: tuple[AgentStepMark, ...], row, k: int) -> RowSide:
        own = steps.get(column.trajectory.pk, {}) if column.trajectory else {}
        return RowSide(
            trajectory_id=column.trajectory.pk if column.trajectory else None,
            cells=tuple(StepCell(mark, *own.get(mark.step, ("", ""))) for mark in marks),
            unmatched=bool(row.unmatched and row.unmatched[k]),
            never_reached=row.kind == GOLD and row.gold_step in column.alignment.never_reached,
        )

    rows = [
        SideBySideRow(
            kind=row.kind, gold_step=row.gold_step,
            gold_texts=tuple(gold_text.get(g, {}).get(row.gold_step) for g in gold_ids) if row.kind == GOLD else (),
            sides=tuple(row_side(column, marks, row, k) for k, (column, marks) in enumerate(zip(columns, row.sides))),
        )
        for row in align([column.alignment for column in columns])
    ]
    return SideBySide(task=task, sides=columns, same_gold=len(gold_ids) <= 1, rows=rows,
                      gold_hidden=len(readable) < len(gold_ids))

