"""The leaderboard: every run's numbers read from stored aggregates, never recomputed from scores.

Which evaluation speaks for a run: its latest finished evaluation (`metrics.selectors.latest_evaluations`).
Runs without a finished evaluation are still listed, after the others and without numbers.
The database ranks, filters, counts and pages the runs (`Ranking`), so a page reads its own
runs' numbers whatever the number of runs. With a task subset chosen, only runs with
trajectories in it are listed, and their numbers are the same evaluations' aggregates stored
for the subset (`metrics.services.aggregates.store_subset_aggregates`).
"""

from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property

from django.core.cache import cache
from django.db import connection
from django.db.models import Case, CharField, Count, Exists, F, FloatField, JSONField, Max, OuterRef, Sum, Value, When
from django.db.models.functions import Cast, Coalesce, Concat, NullIf, Round

from failures.selectors import TypeCount, failure_type_source, failure_types_of_runs, runs_with_failure_type
from judges.calibration import DEFAULT_THRESHOLD, trust
from judges.models import DecisionKind, JudgeConfig
from judges.selectors import judge_trust_by_kind
from judges.services import backend_and_model
from metrics.aggregation import CHECK_METRIC, METRICS, Summary
from metrics.models import Aggregate, EvaluationJob
from metrics.registry import SCORE_REGISTRY
from metrics.selectors.latest_evaluations import (
    Evaluation, cache_key, finished_evaluations, latest_evaluation_jobs, latest_evaluations,
)
from metrics.selectors.verdicts_per_task import success_counts
from metrics.subsets import subset_site_summaries
from trajectories.models import (
    AgentRun, Paradigm, RunTally, RunVerdictCount, SubsetTally, SubsetVerdictCount, TaskSubset, VerdictSource,
)
from trajectories.services.tallies import refresh_tallies
from trajectories.verdict_agreement import (
    CHECK, COMBINED, HARNESS, NAMED_PREFIX, SOURCE_LABELS, named_source, named_source_id,
)

METRIC_LABELS = {field.name: field.label for field in SCORE_REGISTRY if field.aggregated}
OUTCOMES, LENGTHS = "outcomes", "lengths"
RUN_FIELDS = ("name", "agent", "model", "paradigm", "benchmark", "created", "trajectories", "scored")
SORT_KEYS = RUN_FIELDS + METRICS


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
    success_source: str = COMBINED  # which verdict the success column is (trajectories.verdict_agreement)
    failure_source: str = ""  # whose failure types the failure column shows (failures.selectors.PEOPLE or a source id)
    failure_type: str = ""  # only runs with a failure of this type by that source (by some person when none chosen)

    def __post_init__(self):
        if self.subset and self.site:
            raise ValueError("subset: choose a site group or a subset, not both")
        if self.success_source not in SOURCE_LABELS and named_source_id(self.success_source) is None:
            raise ValueError(f"success_source: {self.success_source!r} is not one of {', '.join(SOURCE_LABELS)} "
                             "or a named source's source:<id>")
        if self.sort not in SORT_KEYS:
            raise ValueError(f"sort: unknown column {self.sort!r}; expected one of {', '.join(SORT_KEYS)}")
        if self.failure_source:
            failure_type_source(self.failure_source)
        if self.paradigm and self.paradigm not in Paradigm.values:
            raise ValueError(f"paradigm: {self.paradigm!r} is not one of {', '.join(Paradigm.values)}")

    @property
    def scope(self) -> tuple[str, str]:
        if self.subset:
            return Aggregate.Scope.SUBSET, self.subset
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
    failure_types: list[TypeCount] | None = None  # share of its attributed failures of each type, when asked for
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

    @property
    def partly_scored(self) -> int | None:
        """Of those scored, the trajectories some of whose judge questions failed (None: not counted, as in
        aggregates stored before partly scored trajectories were counted)."""
        return self.outcomes.get("partly_scored") if self.outcomes else None

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


def _stored_values(filters: LeaderboardFilters, metric: str, column: str = "mean"):
    """Every evaluation's stored `metric` per run in the filters' scope, as rows (job_id, run_id, value)."""
    scope, group = filters.scope
    return Aggregate.objects.filter(scope=scope, group=group, metric=metric).values("job_id", "run_id",
                                                                                   value=F(column))


def _rate(rows, keys: tuple[str, ...], passed, total):
    """passed / total summed over `rows` per `keys`, as `value`; NULL where nothing was judged."""
    return rows.order_by().values(*keys).annotate(
        value=Cast(Sum(passed), FloatField()) / NullIf(Sum(total), Value(0)))


def _counted_values(filters: LeaderboardFilters):
    """`success_counts`' rate of the filters' verdict source per run (per job and run for the offline check, which
    each evaluation stores), read by the database from the stored counts (of the subset's tasks, if one is chosen)."""
    source, site, subset = filters.success_source, filters.site, filters.subset
    if source == CHECK:
        scope = {"scope": Aggregate.Scope.SUBSET, "group": subset} if subset else {"scope": Aggregate.Scope.SITE}
        checks = Aggregate.objects.filter(metric=CHECK_METRIC, **scope, **({"group": site} if site else {}))
        return _rate(checks, ("job_id", "run_id"), Round(Coalesce("mean", Value(0.0)) * F("count")), "count")
    source = HARNESS if source == COMBINED else source
    if subset:
        counts = SubsetVerdictCount.objects.filter(subset__name=subset, source=source)
    else:
        counts = RunVerdictCount.objects.filter(source=source, **({"site": site} if site else {}))
    return _rate(counts, ("run_id",), "passed", "total")


def _ranking_value(filters: LeaderboardFilters) -> tuple[str, dict]:
    """What a row is ranked by, as `_success_by_source` and the aggregates give it: an SQL expression over the
    run (`r`), its tally (`t`), its chosen job (`latest.job`) and the per-run rows it names ({alias: rows})."""
    sort = filters.sort
    if sort == "created":
        return "r.created_at", {}
    if sort == "trajectories":
        return "t.trajectories", {}
    if sort == "scored":
        return "stored.value", {"stored": _stored_values(filters, OUTCOMES, "count")}
    if sort == "success":
        counted = {"counted": _counted_values(filters)}
        if filters.success_source != COMBINED:
            return "counted.value", counted
        # METRICS.md's combined success is the evaluation's aggregate; without one, the harness's.
        return ("CASE WHEN latest.job IS NOT NULL THEN stored.value ELSE counted.value END",
                {"stored": _stored_values(filters, "success"), **counted})
    if sort in METRICS:
        return "stored.value", {"stored": _stored_values(filters, sort)}
    return f"LOWER(r.{connection.ops.quote_name(AgentRun._meta.get_field(sort).column)})", {}


def ranking_query(runs, filters: LeaderboardFilters, start: int = 0, stop: int | None = None) -> tuple[str, list]:
    """The SQL and parameters of the ids of `runs` in the leaderboard's order, [start:stop]: those with numbers
    (a finished evaluation, or results-only) first; within them by the sort column, runs without a value last
    whatever the direction, ties by name.

    One query of hash joins: every run's latest finished evaluation and its sort value are each read once for
    all runs and joined, not looked up run by run (the ORM can only correlate a subquery per run)."""
    table = connection.ops.quote_name
    value, per_run = _ranking_value(filters)
    joins, params = [], []
    for alias, rows in {"latest": latest_evaluation_jobs(filters.judge), **per_run}.items():
        sql, rows_params = rows.query.sql_with_params()
        on = "latest.run = r.id" if alias == "latest" else f"{alias}.run_id = r.id"
        if "job_id" in rows.query.values_select:  # a number of one evaluation: the run's chosen one
            on += f" AND {alias}.job_id = latest.job"
        joins.append(f"LEFT JOIN ({sql}) {alias} ON {on}")
        params += rows_params
    filtered, filtered_params = runs.order_by().values("pk").query.sql_with_params()
    where = f" WHERE r.id IN ({filtered})" if runs.query.has_filters() else ""
    limit = "" if stop is None else f" LIMIT {int(stop) - int(start)}"
    offset = f" OFFSET {int(start)}" if start else ""
    if offset and not limit:
        limit = f" LIMIT {-1 if connection.vendor == 'sqlite' else 'ALL'}"
    direction = "DESC" if filters.descending else "ASC"
    counted = (SubsetVerdictCount.objects.filter(subset__name=filters.subset) if filters.subset
               else RunVerdictCount.objects.all())
    counted, counted_params = counted.order_by().values("run_id").query.sql_with_params()
    query = (
        f"SELECT r.id FROM {table(AgentRun._meta.db_table)} r"
        f" LEFT JOIN {table(RunTally._meta.db_table)} t ON t.run_id = r.id {' '.join(joins)}"
        f"{where}"
        " ORDER BY CASE WHEN latest.job IS NOT NULL OR (NOT t.with_steps AND (t.trajectories > 0 OR r.id IN"
        f" ({counted}))) THEN 1 ELSE 0 END DESC,"
        f" {value} {direction} NULLS LAST, LOWER(r.name), r.name{limit}{offset}"
    )
    return query, [*params, *(filtered_params if where else ()), *counted_params]


def ranked_run_ids(runs, filters: LeaderboardFilters, start: int = 0, stop: int | None = None) -> list[int]:
    with connection.cursor() as cursor:
        cursor.execute(*ranking_query(runs, filters, start, stop))
        return [run_id for (run_id,) in cursor.fetchall()]


def _filtered_runs(filters: LeaderboardFilters, subset: TaskSubset | None):
    runs = AgentRun.objects.all()
    if filters.benchmark:
        runs = runs.filter(benchmark=filters.benchmark)
    if filters.paradigm:
        runs = runs.filter(paradigm=filters.paradigm)
    if subset is not None:  # runs with trajectories, or results-only verdicts, on the subset's tasks
        runs = runs.filter(Exists(SubsetTally.objects.filter(subset=subset, run=OuterRef("pk"))))
    if filters.failure_type:
        source = failure_type_source(filters.failure_source) if filters.failure_source else None
        runs = runs.filter(pk__in=runs_with_failure_type(filters.failure_type, source))
    return runs


class Ranking:
    """The runs that pass the filters in the leaderboard's order, counted and ranked by the database and read a
    slice at a time (a `Paginator` pages it): a page costs the same few queries whatever the number of runs,
    with a task subset too (its numbers are stored as a site group's are)."""

    def __init__(self, filters: LeaderboardFilters, source_labels: dict[str, str] | None = None, *,
                 run_ids=None, evaluated: bool = False):
        """`run_ids`: only these runs; `evaluated`: only runs with a finished evaluation (of the judge named)."""
        self.filters = filters
        self.subset = chosen_subset(filters)
        self._runs = _filtered_runs(filters, self.subset)
        if run_ids is not None:
            self._runs = self._runs.filter(pk__in=list(run_ids))
        if evaluated:
            finished = finished_evaluations(filters.judge).filter(agentrun_id=OuterRef("pk"))
            self._runs = self._runs.filter(Exists(finished))
        self._labels = source_labels
        self._count = None
        self._fresh = False

    def _refresh(self) -> None:
        """Recount the tallies a single write dropped, once, before anything is read from them (a subset's runs
        are listed by them)."""
        if not self._fresh:
            stale = list(AgentRun.objects.filter(tally__isnull=True).values_list("pk", flat=True))
            if stale:
                refresh_tallies(stale)
            self._fresh = True

    def count(self) -> int:
        if self._count is None:
            self._refresh()
            self._count = self._runs.count()
        return self._count

    def __len__(self) -> int:
        return self.count()

    @cached_property
    def source_labels(self) -> dict[str, str]:
        return self._labels if self._labels is not None else success_sources()

    def __getitem__(self, index: slice) -> list[LeaderboardRow]:
        if not isinstance(index, slice) or index.step is not None:
            raise TypeError("a leaderboard is read a slice of runs at a time, without steps")
        self._refresh()
        ids = ranked_run_ids(self._runs, self.filters, index.start or 0, index.stop)
        runs = {run["pk"]: run for run in AgentRun.objects.filter(pk__in=ids).values(*AGENT_RUN_VALUES)}
        # A run deleted since it was ranked (an import that stored nothing removes its run) is left out.
        return _rows([runs[run_id] for run_id in ids if run_id in runs], self.filters, self.subset,
                     self.source_labels)

    def board(self, rows) -> Leaderboard:
        return Leaderboard(filters=self.filters, rows=list(rows), source_labels=self.source_labels)


def leaderboard(filters: LeaderboardFilters, source_labels: dict[str, str] | None = None) -> Leaderboard:
    """Every run that passes the filters, ranked (`source_labels`: `success_sources()` when the caller has read
    them already). A page of them: `Ranking`."""
    ranking = Ranking(filters, source_labels)
    return ranking.board(ranking[:])


# What a leaderboard row reads of its AgentRun (and its tally).
AGENT_RUN_VALUES = ("pk", "name", "agent", "model", "paradigm", "benchmark", "created_at", "tally__trajectories",
               "tally__with_steps")


def _rows(runs, filters: LeaderboardFilters, subset: TaskSubset | None, labels: dict[str, str]) -> list[LeaderboardRow]:
    """The rows of `runs` (their `AGENT_RUN_VALUES`), in their order, in a fixed number of queries whatever the runs
    hold: their evaluations, the stored aggregates and the stored verdict counts."""
    rows = {
        run["pk"]: LeaderboardRow(
            run_id=run["pk"], name=run["name"], agent=run["agent"], model=run["model"], paradigm=run["paradigm"],
            benchmark=run["benchmark"], created_at=run["created_at"], trajectories=run["tally__trajectories"],
            with_steps=run["tally__with_steps"], evaluation=None, source_labels=labels,
        )
        for run in runs
    }
    evaluations = latest_evaluations(rows, judge=filters.judge)
    for run_id, evaluation in evaluations.items():
        rows[run_id].evaluation = evaluation
    scope, group = filters.scope
    # Only the two tables are JSON worth decoding: decoding every metric's empty one cost more than the query.
    aggregates = Aggregate.objects.filter(
        scope=scope, group=group, metric__in=(*METRICS, OUTCOMES, LENGTHS), run_id__in=list(evaluations),
        job_id__in={e.job_id for e in evaluations.values()},
    ).annotate(table=Case(When(metric__in=(OUTCOMES, LENGTHS), then=F("data")), output_field=JSONField())).values_list(
        "job_id", "run_id", "metric", "mean", "std", "count", "null_count", "table")
    if not evaluations:
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
    if filters.failure_source:
        types = failure_types_of_runs(list(rows), failure_type_source(filters.failure_source))
        for run_id, row in rows.items():
            row.failure_types = types.get(run_id, ([], 0))[0]
    return list(rows.values())


def _success_by_source(rows: dict[int, LeaderboardRow], evaluations: dict[int, Evaluation],
                       filters: LeaderboardFilters, subset: TaskSubset | None) -> None:
    """Every row's success rate by each verdict source; the success column shows the chosen one.

    METRICS.md's combined success of an evaluated run stays its stored aggregate; a results-only
    run has only harness verdicts, which is then also its combined success.
    """
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


# The judge questions a metric's numbers rest on (element accuracy and success need no judge).
JUDGED_METRICS = {field.name: field.judged for field in SCORE_REGISTRY if field.aggregated and field.judged}


def judge_marks(board: Leaderboard) -> dict[int, dict[str, str]]:
    """{run id: {metric: why the judge behind it is not trusted yet}}: the judge of the run's
    evaluation, at that evaluation's tau, on the kind of question the metric asks, has fewer than
    50 human confirmations or a kappa interval reaching below 0.8 (`judges.calibration.Trust`)."""
    evaluations = board.evaluations
    # Only what says which judge at which tau: a job's other fields (its errors, say) can be long.
    jobs = (EvaluationJob.objects.filter(pk__in={e.job_id for e in evaluations.values()}).order_by()
            .select_related("judge_config").only("parameters", "judge_config"))
    trust_at: dict[float, dict] = {}
    identities: dict[int, tuple[str, str]] = {}
    runs_of: dict[int, list[int]] = {}
    for run_id, evaluation in evaluations.items():
        runs_of.setdefault(evaluation.job_id, []).append(run_id)
    marks: dict[int, dict[str, str]] = {}
    said: dict[tuple, dict[str, str]] = {}  # the same judge at the same tau says the same of every run
    for job in jobs:
        tau = float((job.parameters or {}).get("tau", DEFAULT_THRESHOLD))
        if tau not in trust_at:
            trust_at[tau] = judge_trust_by_kind(tau)
        by_kind = trust_at[tau]
        if job.judge_config_id not in identities:  # building a backend (an HTTP client) once per judge
            identities[job.judge_config_id] = backend_and_model(job.judge_config)
        backend, model = identities[job.judge_config_id]
        if (backend, model, tau) not in said:
            judge = f"{backend}:{model}" if model else backend
            why = said[backend, model, tau] = {}
            for metric, kind in JUDGED_METRICS.items():
                judged = by_kind.get((backend, model, kind)) or trust([], tau)
                if not judged.trusted:
                    why[metric] = (f"Judge {judge} is not trusted yet on '{DecisionKind(kind).label}' at tau "
                                   f"{tau:g}: {'; '.join(judged.concerns)}.")
        why = said[backend, model, tau]
        for run_id in runs_of.get(job.pk, []) if why else []:
            marks[run_id] = why
    return marks


@dataclass
class JudgeNotes:
    """A page's judge marks with each sentence said once: a cell's mark refers to its note by number,
    since the same few sentences would otherwise repeat in most cells of the page."""

    notes: list[str]  # note n is notes[n - 1]
    numbers: dict[int, dict[str, int]]  # {run id: {metric: its note's number}}


def judge_notes(marks: dict[int, dict[str, str]], run_ids, metrics) -> JudgeNotes:
    """`judge_marks` numbered in reading order: by row (`run_ids`), then by column (`metrics`)."""
    number_of: dict[str, int] = {}
    numbers: dict[int, dict[str, int]] = {}
    for run_id in run_ids:
        for metric in metrics:
            why = marks.get(run_id, {}).get(metric)
            if why:
                numbers.setdefault(run_id, {})[metric] = number_of.setdefault(why, len(number_of) + 1)
    return JudgeNotes(notes=list(number_of), numbers=numbers)


def chosen_subset(filters: LeaderboardFilters) -> TaskSubset | None:
    if not filters.subset:
        return None
    subset = TaskSubset.objects.filter(name=filters.subset).first()
    if subset is None:
        raise ValueError(f"subset: no subset named {filters.subset!r}")
    return subset


def subsets() -> list[str]:
    return list(TaskSubset.objects.order_by("name").values_list("name", flat=True))


def site_groups(judge: str = "") -> list[str]:
    """Site groups that some finished evaluation has numbers for (the choices of the site filter), remembered
    until an evaluation finishes or goes, or verdicts are counted or a run goes: finding them reads every run's."""
    finished = EvaluationJob.objects.filter(status=EvaluationJob.Status.DONE)
    if judge:
        finished = finished.filter(judge_config__name=judge)
    stamp = (finished.aggregate(jobs=Count("pk"), last=Max("finished_at")), AgentRun.objects.count(),
             RunVerdictCount.objects.aggregate(last=Max("pk")))

    def read() -> list[str]:
        groups = Aggregate.objects.filter(scope=Aggregate.Scope.SITE, metric=OUTCOMES, job__in=finished)
        # Results-only runs have per-site success without any evaluation.
        return sorted(set(groups.order_by().values_list("group", flat=True).distinct())
                      | set(RunVerdictCount.objects.order_by().values_list("site", flat=True).distinct()))

    return cache.get_or_set(cache_key("site-groups", judge, stamp), read)


def success_sources(benchmark: str = "") -> dict[str, str]:
    """{source key: label} of the built-in verdict sources and every named source some run (of `benchmark`,
    when given) has verdicts of."""
    key = Concat(Value(NAMED_PREFIX), Cast(OuterRef("pk"), CharField()))
    counts = RunVerdictCount.objects.filter(source=key, **({"run__benchmark": benchmark} if benchmark else {}))
    named = VerdictSource.objects.filter(Exists(counts))
    return {**SOURCE_LABELS, **{named_source(source.pk): str(source) for source in named}}


def benchmarks() -> list[str]:
    return list(AgentRun.objects.order_by("benchmark").values_list("benchmark", flat=True).distinct())


def judges() -> list[str]:
    """Judge configurations with at least one finished evaluation."""
    finished = EvaluationJob.objects.filter(judge_config=OuterRef("pk"), status=EvaluationJob.Status.DONE)
    return list(JudgeConfig.objects.filter(Exists(finished)).order_by("name").values_list("name", flat=True))


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
