"""The leaderboard: every run's numbers read from stored aggregates, never recomputed from scores.

Which evaluation speaks for a run: its *latest finished evaluation*, i.e. among the evaluation
jobs that include the run and have status `done`, the one that finished last (ties: the newer
job). Naming a judge configuration restricts the choice to that judge's jobs. A job that is
being re-run does not count until it finishes again, so the previous numbers stay up meanwhile.
Runs without a finished evaluation are still listed, after the others and without numbers.
With a task subset chosen, only runs with trajectories in it are listed, and their numbers are
summarised from the same evaluations' scores on the subset's tasks (`metrics.subsets`).
"""

import hashlib
from dataclasses import dataclass, field
from datetime import datetime

from django.db.models import Case, CharField, Exists, F, JSONField, OuterRef, Value, When
from django.db.models.functions import Cast, Concat

from judges import questions as q
from judges.calibration import DEFAULT_THRESHOLD, trust
from judges.models import DecisionKind
from judges.selectors import judge_trust_by_kind
from judges.services import backend_and_model
from metrics.aggregation import METRICS, Summary
from metrics.models import Aggregate, EvaluationJob
from metrics.subsets import subset_numbers, subset_site_summaries
from trajectories.models import AgentRun, Paradigm, RunVerdictCount, TaskResult, TaskSubset, Trajectory, VerdictSource
from trajectories.services.tallies import refresh_tallies
from trajectories.verdicts import COMBINED, NAMED_PREFIX, SOURCE_LABELS, named_source, named_source_id

METRIC_LABELS = {
    "step_success": "Step success",
    "recovery": "Recovery",
    "repetitiveness": "Repetitiveness",
    "element_accuracy": "Element accuracy",
    "partial_success": "Partial success",
    "grounded": "Grounded",
    "relevant": "Relevant",
    "correct": "Correct",
    "success": "Success (harness, else offline check)",
    "plan_step_success": "Plan step success",
    "key_node_completion": "Key-node completion",
}
OUTCOMES, LENGTHS = "outcomes", "lengths"
RUN_FIELDS = ("name", "agent", "model", "paradigm", "benchmark", "created", "trajectories", "scored")
SORT_KEYS = RUN_FIELDS + METRICS


@dataclass(frozen=True)
class Evaluation:
    """The evaluation job that represents a run."""

    job_id: int
    judge: str
    finished_at: datetime


def latest_evaluations(run_ids=None, *, judge: str = "") -> dict[int, Evaluation]:
    """{run id: its latest finished evaluation}, for the given runs (all runs when None)."""
    memberships = EvaluationJob.runs.through.objects.filter(evaluationjob__status=EvaluationJob.Status.DONE)
    if run_ids is not None:
        memberships = memberships.filter(agentrun_id__in=list(run_ids))
    if judge:
        memberships = memberships.filter(evaluationjob__judge_config__name=judge)
    rows = memberships.order_by("agentrun_id", "-evaluationjob__finished_at", "-evaluationjob_id").values_list(
        "agentrun_id", "evaluationjob_id", "evaluationjob__judge_config__name", "evaluationjob__finished_at"
    )
    chosen: dict[int, Evaluation] = {}
    for run_id, job_id, judge_name, finished_at in rows:
        chosen.setdefault(run_id, Evaluation(job_id, judge_name, finished_at))
    return chosen


def cache_key(kind: str, *parts) -> str:
    """A cache key for something derived from finished evaluations: name them (id and finish time) in `parts`."""
    digest = hashlib.sha256(repr(parts).encode()).hexdigest()
    return f"{kind}:{digest}"


@dataclass(frozen=True)
class LeaderboardFilters:
    """`site` switches every number to that site group's aggregates (a multi-site task's group
    is its sites joined by "+", as in `aggregation.site_group`)."""

    benchmark: str = ""
    site: str = ""
    paradigm: str = ""
    judge: str = ""
    sort: str = "success"
    descending: bool = True
    subset: str = ""
    success_source: str = COMBINED  # which verdict the success column is (trajectories.verdicts)

    def __post_init__(self):
        if self.subset and self.site:
            raise ValueError("subset: choose a site group or a subset, not both")
        if self.success_source not in SOURCE_LABELS and named_source_id(self.success_source) is None:
            raise ValueError(f"success_source: {self.success_source!r} is not one of {', '.join(SOURCE_LABELS)} "
                             "or a named source's source:<id>")
        if self.sort not in SORT_KEYS:
            raise ValueError(f"sort: unknown column {self.sort!r}; expected one of {', '.join(SORT_KEYS)}")
        if self.paradigm and self.paradigm not in Paradigm.values:
            raise ValueError(f"paradigm: {self.paradigm!r} is not one of {', '.join(Paradigm.values)}")

    @property
    def scope(self) -> tuple[str, str]:
        return (Aggregate.Scope.SITE, self.site) if self.site else (Aggregate.Scope.RUN, "")


@dataclass
class LeaderboardRow:
    run_id: int
    name: str
    agent: str
    model: str
    paradigm: str
    benchmark: str
    created_at: datetime
    trajectories: int
    evaluation: Evaluation | None
    with_steps: bool = True  # False: its trajectories (if any) are final answers and verdicts only
    metrics: dict[str, Summary] = field(default_factory=dict)
    outcomes: dict | None = None  # aggregation.OutcomeTable.to_dict()
    lengths: dict | None = None  # aggregation.LengthComparison.to_dict()
    success_sources: dict[str, Summary] = field(default_factory=dict)  # every verdict source's success rate
    results_only: bool = False  # per-task verdicts and no agent steps: success is the only number
    uniform: bool | None = None  # a results-only run whose hundreds of verdicts are all one value
    site_success: dict[str, Summary] | None = None  # per site group, when success is not the stored aggregate
    source_labels: dict[str, str] = field(default_factory=dict, repr=False)  # `success_sources()`, shared

    @property
    def success(self) -> Summary | None:
        return self.metrics.get("success")

    @property
    def success_others(self) -> list[tuple[str, str, Summary]]:
        """(source, label, rate) of the other sources where their rate differs from the one shown."""
        shown = self.metrics.get("success")
        return [(source, self.source_labels.get(source, source), summary)
                for source, summary in self.success_sources.items()
                if source != COMBINED and summary.count
                and (shown is None or shown.mean is None or round(summary.mean, 3) != round(shown.mean, 3))]

    @property
    def scored(self) -> int | None:
        """Scored trajectories in the scope (errored scores are not in aggregates)."""
        return self.outcomes["total"] if self.outcomes else None

    def metric(self, name: str) -> Summary | None:
        return self.metrics.get(name)


@dataclass
class Leaderboard:
    filters: LeaderboardFilters
    rows: list[LeaderboardRow]
    source_labels: dict[str, str] = field(default_factory=dict)  # `success_sources()`

    @property
    def success_label(self) -> str:
        return self.source_labels.get(self.filters.success_source, self.filters.success_source)

    @property
    def evaluations(self) -> dict[int, Evaluation]:
        return {row.run_id: row.evaluation for row in self.rows if row.evaluation}


def _summary(mean, std, count, null_count) -> Summary:
    return Summary(mean=mean, std=std, count=count, null_count=null_count)


def _sort_value(row: LeaderboardRow, sort: str):
    if sort in METRICS:
        summary = row.metrics.get(sort)
        return summary.mean if summary else None
    if sort == "created":
        return row.created_at
    if sort == "scored":
        return row.scored
    value = getattr(row, sort)
    return value.lower() if isinstance(value, str) else value


def sort_rows(rows: list[LeaderboardRow], sort: str, descending: bool) -> list[LeaderboardRow]:
    """Sorted by one column; rows without a value for it come last whatever the direction."""
    by_name = sorted(rows, key=lambda row: row.name.lower())
    present = [row for row in by_name if _sort_value(row, sort) is not None]
    missing = [row for row in by_name if _sort_value(row, sort) is None]
    return sorted(present, key=lambda row: _sort_value(row, sort), reverse=descending) + missing


def leaderboard(filters: LeaderboardFilters, source_labels: dict[str, str] | None = None) -> Leaderboard:
    """One row per run that passes the filters, in a fixed number of queries whatever the runs hold: the runs
    with their stored tallies, their evaluations, the stored aggregates and the stored verdict counts
    (`source_labels`: `success_sources()` when the caller has read them already)."""
    runs = AgentRun.objects.all()
    if filters.benchmark:
        runs = runs.filter(benchmark=filters.benchmark)
    if filters.paradigm:
        runs = runs.filter(paradigm=filters.paradigm)
    subset = chosen_subset(filters)
    if subset is not None:  # runs with trajectories, or results-only verdicts, on the subset's tasks
        on_tasks = subset.task_filter("task__")
        runs = runs.filter(Exists(Trajectory.objects.filter(on_tasks, run=OuterRef("pk")))
                           | Exists(TaskResult.objects.filter(on_tasks, run=OuterRef("pk"))))
    fields = ("pk", "name", "agent", "model", "paradigm", "benchmark", "created_at", "tally__trajectories",
              "tally__with_steps")
    found = list(runs.values(*fields))
    stale = [run["pk"] for run in found if run["tally__trajectories"] is None]
    if stale:  # counted once after a single write dropped them
        refresh_tallies(stale)
        found = list(runs.values(*fields))
    rows = {
        run["pk"]: LeaderboardRow(
            run_id=run["pk"], name=run["name"], agent=run["agent"], model=run["model"], paradigm=run["paradigm"],
            benchmark=run["benchmark"], created_at=run["created_at"], trajectories=run["tally__trajectories"],
            with_steps=run["tally__with_steps"], evaluation=None,
        )
        for run in found
    }
    evaluations = latest_evaluations(rows, judge=filters.judge)
    for run_id, evaluation in evaluations.items():
        rows[run_id].evaluation = evaluation
    if subset is not None:
        _fill_from_subset(rows, evaluations, subset)
    scope, group = filters.scope
    # Only the two tables are JSON worth decoding: decoding every metric's empty one cost more than the query.
    aggregates = Aggregate.objects.filter(
        scope=scope, group=group, metric__in=(*METRICS, OUTCOMES, LENGTHS), run_id__in=list(evaluations),
        job_id__in={e.job_id for e in evaluations.values()},
    ).annotate(table=Case(When(metric__in=(OUTCOMES, LENGTHS), then=F("data")), output_field=JSONField())).values_list(
        "job_id", "run_id", "metric", "mean", "std", "count", "null_count", "table")
    if subset is not None:  # the subset's numbers are all filled in already
        aggregates = ()
    for job_id, run_id, metric, mean, std, count, null_count, data in aggregates:
        if evaluations[run_id].job_id != job_id:
            continue
        row = rows[run_id]
        if metric == OUTCOMES:
            row.outcomes = data
        elif metric == LENGTHS:
            row.lengths = data
        elif metric in METRICS:
            row.metrics[metric] = _summary(mean, std, count, null_count)
    _success_by_source(rows, evaluations, filters, subset)
    labels = source_labels if source_labels is not None else success_sources()
    for row in rows.values():
        row.source_labels = labels
    ordered = sort_rows(list(rows.values()), filters.sort, filters.descending)
    numbered = [row for row in ordered if row.evaluation or row.results_only]
    return Leaderboard(filters=filters, source_labels=labels,
                       rows=numbered + [row for row in ordered if not (row.evaluation or row.results_only)])


def _success_by_source(rows: dict[int, LeaderboardRow], evaluations: dict[int, Evaluation],
                       filters: LeaderboardFilters, subset: TaskSubset | None) -> None:
    """Every row's success rate by each verdict source; the success column shows the chosen one.

    METRICS.md's combined success of an evaluated run stays its stored aggregate; a results-only
    run has only harness verdicts, which is then also its combined success.
    """
    from metrics.verdicts import success_counts  # reads the leaderboard's choice of evaluation

    counts = success_counts(rows, evaluations, subset)
    for run_id, row in rows.items():
        run_counts = counts[run_id]
        row.success_sources = {source: run_counts.summary(source, filters.site)
                               for source in [*SOURCE_LABELS, *sorted(run_counts.sources() - set(SOURCE_LABELS))]}
        if row.evaluation and "success" in row.metrics:
            row.success_sources[COMBINED] = row.metrics["success"]
        row.results_only, row.uniform = run_counts.results_only, run_counts.uniform
        if filters.success_source != COMBINED or not row.evaluation:
            row.site_success = {site: run_counts.summary(filters.success_source, site) for site in run_counts.sites()}
            chosen = row.success_sources.get(filters.success_source) or run_counts.summary(filters.success_source)
            if chosen.count or row.evaluation:
                row.metrics["success"] = chosen
            else:
                row.metrics.pop("success", None)


# The judge questions a metric's numbers rest on (Element accuracy and success need no judge).
JUDGED_METRICS = {
    "step_success": q.STEP_MATCH, "recovery": q.STEP_MATCH, "plan_step_success": q.STEP_MATCH,
    "repetitiveness": q.REPETITION, "partial_success": q.REQUIREMENTS,
    "grounded": q.GROUNDEDNESS, "relevant": q.GROUNDEDNESS, "correct": q.GROUNDEDNESS,
}


def judge_marks(board: Leaderboard) -> dict[int, dict[str, str]]:
    """{run id: {metric: why the judge behind it is not trusted yet}}: the judge of the run's
    evaluation, at that evaluation's tau, on the kind of question the metric asks, has fewer than
    50 human confirmations or a kappa interval reaching below 0.8 (`judges.calibration.Trust`)."""
    evaluations = board.evaluations
    jobs = EvaluationJob.objects.filter(pk__in={e.job_id for e in evaluations.values()}).select_related("judge_config")
    trust_at: dict[float, dict] = {}
    identities: dict[int, tuple[str, str]] = {}
    runs_of: dict[int, list[int]] = {}
    for run_id, evaluation in evaluations.items():
        runs_of.setdefault(evaluation.job_id, []).append(run_id)
    marks: dict[int, dict[str, str]] = {}
    for job in jobs:
        tau = float((job.parameters or {}).get("tau", DEFAULT_THRESHOLD))
        if tau not in trust_at:
            trust_at[tau] = judge_trust_by_kind(tau)
        by_kind = trust_at[tau]
        if job.judge_config_id not in identities:  # building a backend (an HTTP client) once per judge
            identities[job.judge_config_id] = backend_and_model(job.judge_config)
        backend, model = identities[job.judge_config_id]
        judge = f"{backend}:{model}" if model else backend
        why = {}
        for metric, kind in JUDGED_METRICS.items():
            judged = by_kind.get((backend, model, kind)) or trust([], tau)
            if not judged.trusted:
                why[metric] = (f"Judge {judge} is not trusted yet on '{DecisionKind(kind).label}' at tau {tau:g}: "
                               f"{'; '.join(judged.concerns)}.")
        for run_id in runs_of.get(job.pk, []) if why else []:
            marks[run_id] = why
    return marks
def chosen_subset(filters: LeaderboardFilters) -> TaskSubset | None:
    if not filters.subset:
        return None
    subset = TaskSubset.objects.filter(name=filters.subset).first()
    if subset is None:
        raise ValueError(f"subset: no subset named {filters.subset!r}")
    return subset


def subsets() -> list[str]:
    return list(TaskSubset.objects.order_by("name").values_list("name", flat=True))


def _fill_from_subset(rows: dict[int, LeaderboardRow], evaluations: dict[int, Evaluation], subset) -> None:
    numbers = subset_numbers({run_id: evaluation.job_id for run_id, evaluation in evaluations.items()}, subset)
    for run_id, found in numbers.items():
        row = rows[run_id]
        row.metrics = {metric: found.metrics[metric] for metric in METRICS}
        row.outcomes, row.lengths = found.outcomes, found.lengths


def site_groups(judge: str = "") -> list[str]:
    """Site groups that some finished evaluation has numbers for (the choices of the site filter)."""
    groups = Aggregate.objects.filter(scope=Aggregate.Scope.SITE, metric=OUTCOMES,
                                      job__status=EvaluationJob.Status.DONE)
    if judge:
        groups = groups.filter(job__judge_config__name=judge)
    # Results-only runs have per-site success without any evaluation.
    return sorted(set(groups.values_list("group", flat=True))
                  | set(RunVerdictCount.objects.values_list("site", flat=True).distinct()))


def success_sources() -> dict[str, str]:
    """{source key: label} of the built-in verdict sources and every named source some run has verdicts of."""
    key = Concat(Value(NAMED_PREFIX), Cast(OuterRef("pk"), CharField()))
    named = VerdictSource.objects.filter(Exists(RunVerdictCount.objects.filter(source=key)))
    return {**SOURCE_LABELS, **{named_source(source.pk): str(source) for source in named}}


def benchmarks() -> list[str]:
    return sorted(set(AgentRun.objects.values_list("benchmark", flat=True)))


def judges() -> list[str]:
    """Judge configurations with at least one finished evaluation."""
    return sorted(set(EvaluationJob.objects.filter(status=EvaluationJob.Status.DONE)
                      .values_list("judge_config__name", flat=True)))


@dataclass
class SiteBreakdown:
    """One metric per run and site group (the paper's Figures 2 and 3)."""

    metric: str
    sites: list[str]
    rows: list[tuple[LeaderboardRow, list[Summary | None]]]

    def means(self) -> dict[str, list[float | None]]:
        """{run name: [mean per site]}, for the bar chart."""
        return {row.name: [cell.mean if cell else None for cell in cells] for row, cells in self.rows}


def site_breakdown(board: Leaderboard, metric: str) -> SiteBreakdown:
    if metric not in METRICS:
        raise ValueError(f"metric: unknown metric {metric!r}; expected one of {', '.join(METRICS)}")
    evaluations = board.evaluations
    subset = chosen_subset(board.filters)
    cells: dict[int, dict[str, Summary]] = (
        subset_site_summaries({run_id: e.job_id for run_id, e in evaluations.items()}, subset, metric)
        if subset is not None else {}
    )
    aggregates = Aggregate.objects.filter(
        scope=Aggregate.Scope.SITE, metric=metric, run_id__in=list(evaluations),
        job_id__in={e.job_id for e in evaluations.values()},
    ).values_list("job_id", "run_id", "group", "mean", "std", "count", "null_count") if subset is None else ()
    for job_id, run_id, group, mean, std, count, null_count in aggregates:
        if evaluations[run_id].job_id == job_id:
            cells.setdefault(run_id, {})[group] = _summary(mean, std, count, null_count)
    if metric == "success":  # the chosen verdict source's rates, where they are not the stored aggregates
        for row in board.rows:
            if row.site_success is not None:
                cells[row.run_id] = {site: summary for site, summary in row.site_success.items() if summary.count}
    sites = sorted({site for by_site in cells.values() for site in by_site})
    rows = [(row, [cells.get(row.run_id, {}).get(site) for site in sites]) for row in board.rows
            if row.evaluation or row.run_id in cells]
    return SiteBreakdown(metric=metric, sites=sites, rows=rows)
