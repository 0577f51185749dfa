"""Every source's verdicts on runs' tasks, read one way: the named sources' stored verdicts (published
judges, human labels, an agent's self-report) and the four every run may have without them (harness,
offline check, human graders, the platform's LLM judge), each under its `VerdictSource` row. Pages,
filters, exports and APIs that name a source read it here, so a new source needs no code.

The built-in four are read where they live (trajectories and task results, the latest evaluation's
scores, the graders' grades) rather than copied, so they never drift from what the pages show.
"""

from dataclasses import dataclass, field

from judges.models import JudgeConfig
from metrics.definitions.judges_vs_humans import JudgesVsHumans, SourceVerdict as JudgedVerdict, judges_vs_humans
from metrics.selectors.latest_evaluations import Evaluation
from metrics.selectors.verdicts_per_task import benchmarks_with_runs, run_verdicts
from trajectories.formats.published_verdicts import NOT_EXECUTABLE
from trajectories.formats.wording import count_of
from trajectories.models import AgentRun, Task, Verdict, VerdictSource
from trajectories.services.built_in_sources import (
    CHECK_SOURCE, HARNESS_SOURCE, HUMAN_GRADERS_SOURCE, built_in_sources, judge_source_key,
)
from trajectories.verdict_agreement import GRADE_LABELS, consensus_success, named_source


@dataclass(frozen=True)
class SourceVerdict:
    """One source's verdict on one task of a run (one grader's, where the source has several)."""

    run_id: int
    task_id: int  # the Task's primary key
    trajectory_id: int | None
    source: VerdictSource
    success: bool | None
    label: str = ""
    grader: str = ""
    score: float | None = None
    labels: dict = field(default_factory=dict, hash=False, compare=False)
    note: str = field(default="", compare=False)  # what the source noted beside its verdict

    @property
    def counted_success(self) -> bool | None:
        """Success as success rates count it: a task that could not be executed is not a success."""
        if self.success is None and self.label == NOT_EXECUTABLE:
            return False
        return self.success


def verdicts_of(run_ids, *, task_pks=None, evaluations: dict[int, Evaluation] | None = None) -> list[SourceVerdict]:
    """Every verdict of every source on the runs' tasks (only tasks `task_pks` when given). The offline
    check and LLM judge come from each run's latest finished evaluation unless `evaluations` names others."""
    run_ids = list(run_ids)
    only = {} if task_pks is None else {"task_id__in": list(task_pks)}
    named = [
        SourceVerdict(row.run_id, row.task_id, row.trajectory_id, row.source, row.success, row.label, row.grader,
                      row.score, row.labels, row.note)
        for row in Verdict.objects.filter(run_id__in=run_ids, **only).select_related("source").order_by(
            "run_id", "task_id", "source__kind", "source__name", "source__model", "grader")
    ]
    return _built_in_verdicts(run_ids, task_pks, evaluations) + named


def benchmark_verdicts(benchmark: str) -> list[SourceVerdict]:
    """Every source's verdicts on the runs of one benchmark."""
    return verdicts_of(AgentRun.objects.filter(benchmark=benchmark).values_list("pk", flat=True))


def _built_in_verdicts(run_ids, task_pks, evaluations) -> list[SourceVerdict]:
    tables = run_verdicts(run_ids, evaluations=evaluations, task_pks=task_pks)
    judges = dict(JudgeConfig.objects.filter(name__in={table.judge_name for table in tables.values()}).values_list(
        "name", "model"))
    judge_keys = {run_id: judge_source_key(table.judge_name, judges.get(table.judge_name, ""))
                  for run_id, table in tables.items() if table.judge_name}
    sources = built_in_sources({HARNESS_SOURCE, CHECK_SOURCE, HUMAN_GRADERS_SOURCE, *judge_keys.values()})
    found = []
    for run_id, table in tables.items():
        for task_pk, task in table.tasks.items():
            def add(key, success, **more):
                found.append(SourceVerdict(run_id, task_pk, task.trajectory_id, sources[key], success, **more))

            if task.harness is not None:
                add(HARNESS_SOURCE, task.harness)
            if task.check is not None:
                add(CHECK_SOURCE, task.check)
            if task.judge is not None and run_id in judge_keys:
                add(judge_keys[run_id], task.judge)
            for grader, value in sorted(task.grades.items()):
                add(HUMAN_GRADERS_SOURCE, consensus_success(value), label=GRADE_LABELS[value], grader=grader,
                    score=value)
    return found


def sources_of(verdicts: list[SourceVerdict]) -> list[VerdictSource]:
    """The distinct sources among `verdicts`, by kind, name and model."""
    unique = {verdict.source.pk: verdict.source for verdict in verdicts}
    return sorted(unique.values(), key=lambda source: (source.kind, source.name, source.model))


def judges_report(benchmark: str, reference: str = "") -> JudgesVsHumans:
    """Every automatic source of the benchmark's runs against the human consensus, or against the human
    source `reference` (`source:<pk>`; ValueError when the runs have no such source)."""
    runs = dict(AgentRun.objects.filter(benchmark=benchmark).values_list("pk", "name"))
    return judges_vs_humans([
        JudgedVerdict(run=runs[verdict.run_id], task=verdict.task_id, source=named_source(verdict.source.pk),
                      source_label=str(verdict.source), kind=verdict.source.kind, success=verdict.success,
                      label=verdict.label, grader=verdict.grader)
        for verdict in verdicts_of(runs)
    ], reference=reference)


def judges_scope(benchmark: str, run: str) -> tuple[str, AgentRun | None]:
    """The benchmark and run the judges-vs-humans report is read for: the named run's benchmark, else
    the benchmark named, else the first with runs. ValueError (for the field `run`) when the run is
    unknown or of another benchmark."""
    if not run:
        return benchmark or next(iter(benchmarks_with_runs()), ""), None
    found = AgentRun.objects.filter(name=run).first()
    if found is None:
        raise ValueError(f"no run is named {run!r}")
    if benchmark and benchmark != found.benchmark:
        raise ValueError(f"run {run} is a run of {found.benchmark}, not of {benchmark}")
    return found.benchmark, found


NAMED_TASKS = 10


@dataclass(frozen=True)
class MissingVerdicts:
    """Why no automatic source can be read against human verdicts on a run or a benchmark, and so what
    to import next: `reasons` are (kind, words), kind one of no_runs, no_human, no_automatic, no_overlap."""

    reasons: tuple[tuple[str, str], ...]

    @property
    def kinds(self) -> set[str]:
        return {kind for kind, _ in self.reasons}

    @property
    def words(self) -> list[str]:
        return [words for _, words in self.reasons]


def missing_verdicts(benchmark: str, report: JudgesVsHumans, run: str = "") -> MissingVerdicts | None:
    """None when some automatic source met a human verdict on the run (or on any run of the benchmark)."""
    met = any(run in row.runs for row in report.sources) if run else bool(report.sources)
    if met:
        return None
    if not AgentRun.objects.filter(benchmark=benchmark).exists():
        return MissingVerdicts((("no_runs", f"No run of {benchmark or 'any benchmark'} yet: import a run first."),))
    scope = f"run {run}" if run else benchmark
    human, automatic = report.coverage(run)
    reasons = []
    if not human:
        reasons.append(("no_human", f"No human verdict on {scope} yet: import human labels (a file of them, on the "
                                    "verdict import page or with manage.py import_verdicts) or grade trajectories "
                                    "on their pages."))
    if not automatic:
        reasons.append(("no_automatic", f"No automatic verdict on {scope} yet: run the outcome judge from a run's "
                                        "page, or import a judge's outputs (on the verdict import page or with "
                                        "manage.py import_verdicts)."))
    if human and automatic:
        reasons.append(("no_overlap", f"Human verdicts cover {_named_tasks(human)} of {scope}, automatic verdicts "
                                      f"{_named_tasks(automatic)}, never the same task of one run, so no source "
                                      "can be read against the humans: import the humans' labels into the run the "
                                      "judges judged, or judge the run the humans graded."))
    return MissingVerdicts(tuple(reasons))


def _named_tasks(pks: set) -> str:
    """'2 tasks (101, 102)': their ids, the first NAMED_TASKS of them."""
    ids = list(Task.objects.filter(pk__in=pks).order_by("number", "task_id").values_list("task_id", flat=True))
    named = ", ".join(ids[:NAMED_TASKS]) + (f" and {len(ids) - NAMED_TASKS} more" if len(ids) > NAMED_TASKS else "")
    return f"{count_of(len(ids), 'task')} ({named})"
