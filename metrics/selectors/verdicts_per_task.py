"""Reads of every verdict source, task by task: harness, offline check, human graders, LLM judge, named sources.

The harness's verdict on a task is its trajectory's `success`, else the run's task result
(results-only runs have nothing else). The offline check's and the judge's come from the run's
latest finished evaluation (`metrics.selectors.latest_evaluations.latest_evaluations`); the human verdict is the
graders' consensus (`trajectories.verdict_agreement`). A few queries per call, whatever the number of runs.
"""

import itertools
from collections import defaultdict
from dataclasses import dataclass, field

from django.db.models import Count, Q, Value
from django.db.models.functions import Coalesce, NullIf

from metrics.aggregation import CHECK_METRIC, Summary, compare_paired, site_group, summarize, summarize_counts
from metrics.models import Aggregate, TrajectoryScore
from metrics.selectors.latest_evaluations import Evaluation, latest_evaluations
from trajectories.models import (
    AgentRun, OutcomeGrade, RunTally, RunVerdictCount, SubsetVerdictCount, TaskResult, TaskSubset, Trajectory,
    Verdict, VerdictKind, VerdictSource,
)
from trajectories.selectors import named_majorities
from trajectories.verdict_agreement import (
    CHECK, COMBINED, HARNESS, SOURCE_LABELS, SOURCES, Verdicts, binary_agreement, consensus,
    consensus_success, krippendorff_alpha_ordinal, named_source, named_source_id, pair_name, pairwise_agreement,
    uniform_counts, uniform_verdicts,
)

JUDGE = "judge"


@dataclass
class TaskVerdicts:
    """Every verdict on one task of one run, with what they came from."""

    task_pk: int
    task_id: str
    number: int | None
    site: str
    trajectory_id: int | None = None
    harness: bool | None = None
    harness_source: str = ""  # the file the harness verdict came from
    check: bool | None = None
    check_source: str = ""  # string_match, url_match, ...
    judge: bool | None = None  # the LLM judge's "final answer correct", where the evaluation has one
    grades: dict[str, float] = field(default_factory=dict)  # {grader: value}
    named: dict[str, bool] = field(default_factory=dict)  # {named source's key: its yes or no}

    def take_harness(self, success: bool | None, source_name: str) -> None:
        """The harness verdict: the trajectory's, else the run's task result's, whichever is known first."""
        if self.harness is None and success is not None:
            self.harness, self.harness_source = success, source_name

    def take_score(self, check: bool | None, check_source: str, correct: bool | None, backend: str) -> bool:
        """The offline check's verdict from an error-free score, and the LLM judge's on the final answer when
        its evaluation had one (an OpenAI judge): whether it had."""
        self.check, self.check_source = check, check_source or ""
        if backend == "openai":
            self.judge = correct
            return True
        return False

    @property
    def verdicts(self) -> Verdicts:
        return Verdicts(harness=self.harness, check=self.check, human=consensus(self.grades.values()),
                        graders=len(self.grades))

    @property
    def human(self) -> bool | None:
        return consensus_success(consensus(self.grades.values()))

    def said(self) -> dict[str, bool]:
        """{source: success} of every source that has spoken on the task, built-in ones first."""
        return {**self.verdicts.known(), **dict(sorted(self.named.items()))}

    def disagreements(self) -> list[tuple[str, str]]:
        """Pairs of sources whose verdicts on the task differ."""
        said = self.said()
        return [(a, b) for a, b in itertools.combinations(said, 2) if said[a] != said[b]]

    @property
    def human_detail(self) -> str:
        if not self.grades:
            return ""
        count = len(self.grades)
        return f"mean grade {consensus(self.grades.values()):.2f} of {count} grader{'s' if count > 1 else ''}"


@dataclass
class RunVerdicts:
    run_id: int
    evaluation: Evaluation | None
    judge_name: str
    tasks: dict[int, TaskVerdicts]
    results_only: bool

    def values(self, source: str, site: str = "") -> dict[int, bool | None]:
        """{task pk: success by `source`} (tasks of one site group when given)."""
        return {pk: (task.judge if source == JUDGE else task.named.get(source) if named_source_id(source) is not None
                     else task.verdicts.success(source))
                for pk, task in self.tasks.items() if not site or task.site == site}

    def summary(self, source: str, site: str = "") -> Summary:
        """The success rate by one source, over the tasks it has spoken on."""
        return summarize(value for value in self.values(source, site).values() if value is not None)

    def disagreements(self) -> dict[str, list[TaskVerdicts]]:
        """{"harness-check": [tasks where those two differ], ...} for every pair of sources that have both spoken
        on some task of the run: a pair of which one source never spoke has nothing to disagree on."""
        spoken = {source for task in self.tasks.values() for source in task.said()}
        named = sorted(source for source in spoken if named_source_id(source) is not None)
        sources = [source for source in SOURCES if source in spoken] + named
        found = {pair_name(a, b): [] for a, b in itertools.combinations(sources, 2)}
        for task in self.tasks.values():
            for a, b in task.disagreements():
                found[pair_name(a, b)].append(task)
        return found

    def rates(self) -> list[dict]:
        """[{source, label, mean, passed, count}] of the sources that have spoken on some task, harness first."""
        sources = [(source, SOURCE_LABELS[source]) for source in SOURCES]
        if self.judge_name:
            sources.append((JUDGE, f"LLM judge {self.judge_name}"))
        rates = []
        for source, label in sources:
            known = [value for value in self.values(source).values() if value is not None]
            if known:
                rates.append({"source": source, "label": label, "mean": sum(known) / len(known),
                              "passed": sum(known), "count": len(known)})
        return rates

    @property
    def uniform(self) -> bool | None:
        """The one harness verdict of a results-only run whose hundreds of tasks all got it."""
        return uniform_verdicts(list(self.values(HARNESS).values())) if self.results_only else None


def run_verdicts(run_ids, *, judge: str = "", job_ids: dict[int, int] | None = None,
                 evaluations: dict[int, Evaluation] | None = None, task_pks=None) -> dict[int, RunVerdicts]:
    """{run id: its tasks' verdicts} (only tasks `task_pks` when given), in six queries. The evaluation per
    run is its latest finished one (with `judge` when named), unless `evaluations` gives them already or
    `job_ids` picks others."""
    run_ids = list(run_ids)
    only = {} if task_pks is None else {"task_id__in": list(task_pks)}
    if evaluations is None:
        evaluations = latest_evaluations(run_ids, judge=judge)
    chosen = {run_id: evaluation.job_id for run_id, evaluation in evaluations.items()}
    chosen.update(job_ids or {})
    trajectories, results, grades, named = _verdict_rows(run_ids, only)
    tables = _TaskTables(trajectories, (*results, *grades, *named))
    for run_id, task_pk, pk, success, source_name, *_ in trajectories:
        task = tables.entry(run_id, task_pk)
        task.trajectory_id = pk
        task.take_harness(success, source_name)
    for run_id, task_pk, success, source_name, *_ in results:
        tables.entry(run_id, task_pk).take_harness(success, source_name)
    for run_id, task_pk, grader, value, *_ in grades:
        tables.entry(run_id, task_pk).grades[grader] = value
    for run_id, task_pk, source_id, success, *_ in named:
        tables.entry(run_id, task_pk).named[named_source(source_id)] = success
    judge_names = _take_scores(tables.by_run, chosen, run_ids, only)
    # Trajectories without steps (a final answer and verdicts only) make a results-only run too.
    with_steps = {row[0] for row in trajectories if row[5]}
    return {
        run_id: RunVerdicts(run_id=run_id, evaluation=evaluations.get(run_id), judge_name=judge_names.get(run_id, ""),
                            tasks=dict(sorted(tables.by_run.get(run_id, {}).items(),
                                              key=lambda item: (item[1].number is None, item[1].number or 0,
                                                                item[1].task_id))),
                            results_only=run_id not in with_steps and bool(tables.by_run.get(run_id)))
        for run_id in run_ids
    }


def _verdict_rows(run_ids: list[int], only: dict) -> tuple[list, list, list, list]:
    """The runs' trajectories, task results, grades and named verdicts, each row ending with its task's
    (task id, number, sites)."""
    # The harness verdict's own file (a format trace, a log) when the import recorded one, else the trajectory's.
    trajectories = list(Trajectory.objects.filter(run_id__in=run_ids, **only).annotate(
        harness_file=Coalesce(NullIf("success_source", Value("")), "source_name"),
    ).values_list("run_id", "task_id", "pk", "success", "harness_file", "step_count", "task__task_id", "task__number",
                  "task__sites"))
    # A task result without a verdict (grades of a task without a trajectory, a trace's model outputs
    # alone) adds nothing to the task's verdicts.
    results = list(TaskResult.objects.filter(run_id__in=run_ids, success__isnull=False, **only).values_list(
        "run_id", "task_id", "success", "source_name", "task__task_id", "task__number", "task__sites"))
    grades = list(OutcomeGrade.objects.filter(run_id__in=run_ids, **only).values_list(
        "run_id", "task_id", "grader_name", "value", "task__task_id", "task__number", "task__sites"))
    named = list(Verdict.objects.filter(run_id__in=run_ids, success__isnull=False, **only).values_list(
        "run_id", "task_id", "source_id", "success", "task__task_id", "task__number", "task__sites"))
    return trajectories, results, grades, named


class _TaskTables:
    """{run id: {task pk: TaskVerdicts}}, each task's entry made the first time a row names it."""

    def __init__(self, trajectories: list, others: tuple):
        self.by_run: dict[int, dict[int, TaskVerdicts]] = defaultdict(dict)
        self.task_info: dict[int, tuple] = {}
        for row in trajectories:
            self.task_info.setdefault(row[1], row[6:])
        for row in others:
            self.task_info.setdefault(row[1], row[4:])

    def entry(self, run_id: int, task_pk: int) -> TaskVerdicts:
        table = self.by_run[run_id]
        if task_pk not in table:
            task_id, number, sites = self.task_info[task_pk]
            table[task_pk] = TaskVerdicts(task_pk, task_id, number, site_group({"sites": sites}))
        return table[task_pk]


def _take_scores(tables: dict[int, dict[int, TaskVerdicts]], chosen: dict[int, int], run_ids: list[int],
                 only: dict) -> dict[int, str]:
    """The offline check's and the LLM judge's verdicts from each run's chosen evaluation, onto the tasks
    already listed; {run id: the name of its LLM judge}, for the runs whose evaluation had one."""
    judge_names = {}
    if not chosen:
        return judge_names
    scores = TrajectoryScore.objects.filter(job_id__in=set(chosen.values()), trajectory__run_id__in=run_ids,
                                            error="", **{f"trajectory__{key}": value for key, value in only.items()}
                                            ).values_list(
        "job_id", "trajectory__run_id", "trajectory__task_id", "check_success", "check_source", "correct",
        "job__judge_config__name", "job__judge_config__backend")
    for job_id, run_id, task_pk, check, check_source, correct, judge_name, backend in scores:
        if chosen.get(run_id) != job_id or task_pk not in tables[run_id]:
            continue
        if tables[run_id][task_pk].take_score(check, check_source, correct, backend):
            judge_names[run_id] = judge_name
    return judge_names


def one_run(run: AgentRun, **kwargs) -> RunVerdicts:
    return run_verdicts([run.pk], **kwargs)[run.pk]


def trajectory_verdicts(trajectory: Trajectory, score: TrajectoryScore | None, *, grades, verdicts) -> TaskVerdicts:
    """The verdicts on one trajectory's task from what its page has read already: the score it shows (with
    its job's judge config), every human grade and every named source's verdict on the task; the run's task
    result is read only when the trajectory holds no harness verdict."""
    task = trajectory.task
    found = TaskVerdicts(task.pk, task.task_id, task.number, site_group({"sites": task.sites}),
                         trajectory_id=trajectory.pk)
    found.take_harness(trajectory.success, trajectory.success_source or trajectory.source_name)
    if found.harness is None:
        result = (TaskResult.objects.filter(run_id=trajectory.run_id, task_id=trajectory.task_id,
                                            success__isnull=False).values_list("success", "source_name").first())
        if result is not None:
            found.take_harness(*result)
    for grade in grades:
        found.grades[grade.grader_name] = grade.value
    for verdict in verdicts:
        if verdict.success is not None:
            found.named[named_source(verdict.source_id)] = verdict.success
    if score is not None and not score.error:
        found.take_score(score.check_success, score.check_source, score.correct, score.job.judge_config.backend)
    return found


# Agreement of graders and automatic verdicts -------------------------------------------------

@dataclass(frozen=True)
class SourceAgreement:
    source: str
    label: str
    agreement: object  # trajectories.verdict_agreement.BinaryAgreement


@dataclass(frozen=True)
class AgreementTable:
    """Graders among themselves and each automatic verdict against their consensus, over one group of tasks."""

    group: str
    tasks: int
    graded: int
    graders: tuple[str, ...]
    alpha: float | None
    pairs: tuple
    sources: tuple[SourceAgreement, ...]


def agreement_table(verdicts: RunVerdicts, group: str = "", named: dict | None = None) -> AgreementTable:
    """`named`: {source key: (label, {task pk: success})} of the run's named automatic sources."""
    tasks = [task for task in verdicts.tasks.values() if not group or task.site == group]
    graded = [task for task in tasks if task.grades]
    marks: dict[str, dict[int, float]] = defaultdict(dict)
    for task in graded:
        for grader, value in task.grades.items():
            marks[grader][task.task_pk] = value
    sources = [(HARNESS, SOURCE_LABELS[HARNESS]), (CHECK, SOURCE_LABELS[CHECK])]
    if verdicts.judge_name:
        sources.append((JUDGE, f"LLM judge {verdicts.judge_name} (final answer correct)"))
    return AgreementTable(
        group=group, tasks=len(tasks), graded=len(graded), graders=tuple(sorted(marks)),
        alpha=krippendorff_alpha_ordinal(list(task.grades.values()) for task in graded),
        pairs=tuple(pairwise_agreement(marks)),
        sources=tuple(
            SourceAgreement(source, label, binary_agreement(
                (task.judge if source == JUDGE else task.verdicts.success(source), task.human) for task in graded))
            for source, label in sources
        ) + tuple(
            SourceAgreement(source, label, binary_agreement((said.get(task.task_pk), task.human) for task in graded))
            for source, (label, said) in (named or {}).items()
        ),
    )


def _named_automatic(run: AgentRun) -> dict[str, tuple[str, dict[int, bool]]]:
    """The run's named sources other than humans (published judges, a second harness, the agent's
    self-report), each with its yes/no per task (`named_majorities`: a task where its graders split is left out)."""
    said = named_majorities([run.pk], leave_out_kinds=[VerdictKind.HUMAN])
    sources = VerdictSource.objects.in_bulk({verdict.source_id for verdict in said})
    named = {named_source(source.pk): (str(source), {}) for source in
             sorted(sources.values(), key=lambda source: (source.kind, source.name, source.model))}
    for verdict in said:
        named[named_source(verdict.source_id)][1][verdict.task_id] = verdict.success
    return named


def agreement_report(run: AgentRun) -> tuple[AgreementTable, list[AgreementTable]]:
    """The run overall and per site group (groups with graded tasks only)."""
    verdicts, named = one_run(run), _named_automatic(run)
    sites = sorted({task.site for task in verdicts.tasks.values() if task.grades})
    return agreement_table(verdicts, named=named), [agreement_table(verdicts, site, named) for site in sites]


# Leaderboard and comparison ------------------------------------------------------------------

def paired_success(baseline: AgentRun, candidate: AgentRun, *, judge: str = "") -> list[tuple[str, str, object]]:
    """[(source, label, PairedComparison)] of success by each source over the tasks both runs have a verdict on;
    works for results-only runs, which have no evaluation."""
    tables = run_verdicts([baseline.pk, candidate.pk], judge=judge)
    return [
        (source, SOURCE_LABELS[source], compare_paired(tables[baseline.pk].values(source),
                                                       tables[candidate.pk].values(source), resamples=1000))
        for source in (COMBINED, *SOURCES)
    ]


# Counts for many runs at once --------------------------------------------------------------

@dataclass
class SourceCounts:
    """Per run and site group: {source: [passed, with a verdict]}, counted in the database."""

    by_site: dict[str, dict[str, list[int]]] = field(default_factory=dict)
    results_only: bool = False

    def add(self, site: str, source: str, passed: int, count: int) -> None:
        cell = self.by_site.setdefault(site, {}).setdefault(source, [0, 0])
        cell[0] += passed
        cell[1] += count

    def cell(self, source: str, site: str = "") -> tuple[int, int]:
        """(passed, with a verdict) by one source, over every site group or one."""
        passed = count = 0
        for group, sources in self.by_site.items():
            if not site or group == site:
                cell_passed, cell_count = sources.get(source, (0, 0))
                passed, count = passed + cell_passed, count + cell_count
        return passed, count

    def summary(self, source: str, site: str = "") -> Summary:
        return summarize_counts(*self.cell(source, site))

    def sites(self) -> set[str]:
        return set(self.by_site)

    def sources(self) -> set[str]:
        return {source for sources in self.by_site.values() for source in sources}

    @property
    def uniform(self) -> bool | None:
        return uniform_counts(*self.cell(HARNESS)) if self.results_only else None

    def rates(self, labels: dict[str, str]) -> list[dict]:
        """As `RunVerdicts.rates`, without the LLM judge, with every source of `labels` ({source key: label}:
        the built-in ones and the named sources) that has verdicts here."""
        rates = []
        for source, label in labels.items():
            passed, count = self.cell(source)
            if count:
                rates.append({"source": source, "label": label, "mean": passed / count, "passed": passed,
                              "count": count})
        return rates


def success_counts(run_ids, evaluations: dict[int, Evaluation],
                   subset: TaskSubset | None = None) -> dict[int, SourceCounts]:
    """The success rates of `RunVerdicts.summary` for many runs, by every source: what the leaderboard and
    runs list need. Read from the counts stored per run and site group (`RunVerdictCount`, and the offline
    check's with the evaluation's aggregates), a row per run, source and site group whatever the runs hold;
    with a `subset`, those stored for its tasks (`SubsetVerdictCount`; the offline check's counted over the
    scores of the runs' evaluations on its tasks). The offline check comes from the run's
    evaluation in `evaluations`. A run without trajectories with steps but with verdicts is results-only.
    The runs' tallies must be fresh (`trajectories.services.tallies.fresh_tallies`).
    """
    run_ids = list(run_ids)
    counts = {run_id: SourceCounts() for run_id in run_ids}
    stored = RunVerdictCount.objects if subset is None else SubsetVerdictCount.objects.filter(subset=subset)
    rows = stored.filter(run_id__in=run_ids).values_list("run_id", "source", "site", "passed", "total")
    for run_id, source, site, passed, total in rows:
        counts[run_id].add(site, source, passed, total)
    jobs = {evaluation.job_id: run_id for run_id, evaluation in evaluations.items() if run_id in counts}
    if subset is None:
        checks = (Aggregate.objects.filter(job_id__in=list(jobs), scope=Aggregate.Scope.SITE, metric=CHECK_METRIC)
                  .values_list("job_id", "run_id", "group", "mean", "count"))
        checks = [(job_id, run_id, site, count, round((mean or 0) * count)) for job_id, run_id, site, mean, count in checks]
    else:
        checks = (TrajectoryScore.objects.filter(subset.task_filter("trajectory__task__"), job_id__in=list(jobs),
                                                 error="", check_success__isnull=False)
                  .order_by().values("job_id", "trajectory__run_id", "trajectory__task__sites")
                  .annotate(n=Count("trajectory", distinct=True),
                            yes=Count("trajectory", distinct=True, filter=Q(check_success=True)))
                  .values_list("job_id", "trajectory__run_id", "trajectory__task__sites", "n", "yes"))
        checks = [(job_id, run_id, site_group({"sites": sites}), n, yes) for job_id, run_id, sites, n, yes in checks]
    for job_id, run_id, site, total, passed in checks:
        if jobs.get(job_id) == run_id and total:
            counts[run_id].add(site, CHECK, passed, total)
    tallies = {run_id: (held, with_steps) for run_id, held, with_steps in
               RunTally.objects.filter(run_id__in=run_ids).values_list("run_id", "trajectories", "with_steps")}
    for run_id, run_counts in counts.items():
        held, with_steps = tallies.get(run_id, (0, False))
        run_counts.results_only = not with_steps and (bool(run_counts.by_site) or held > 0)
        if run_id not in evaluations:  # no offline check: METRICS.md's success is the harness's
            for sources in run_counts.by_site.values():
                if HARNESS in sources:
                    sources[COMBINED] = list(sources[HARNESS])
    return counts


def benchmarks_with_runs() -> list[str]:
    return sorted(set(AgentRun.objects.values_list("benchmark", flat=True)))
