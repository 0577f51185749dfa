"""Summaries of trajectory scores and paired comparison of two runs (METRICS.md, Aggregation).

Pure functions over plain rows (mappings with TrajectoryScore's field names, plus `sites`
and `paradigm` for grouping), so pages and exports read the same numbers the tests check.
A null metric is left out of every mean and counted beside it.
"""

import math
import statistics
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from functools import lru_cache

import numpy as np

from metrics.registry import SCORE_REGISTRY
from trajectories.formats.canonical import EARLY_STOP_REASONS, OUTCOME_STATUSES
from trajectories.verdict_agreement import site_group  # noqa: F401  (the grouping of every per-site number)

# The offline check's success rate, stored with a job's aggregates beside METRICS (whose success is combined).
CHECK_METRIC = "check_success"
METRICS = tuple(field.name for field in SCORE_REGISTRY if field.aggregated)


@dataclass(frozen=True)
class Summary:
    """`std` is the sample standard deviation (n - 1), as SPSS reports it; None below two values."""

    mean: float | None
    std: float | None
    count: int
    null_count: int

    def to_dict(self) -> dict:
        return asdict(self)


def summarize(values: Iterable[float | bool | None]) -> Summary:
    """Booleans (grounded, success, ...) count as 1 and 0, so their mean is a rate."""
    present, null_count = [], 0
    for value in values:
        if value is None:
            null_count += 1
        else:
            present.append(float(value))
    return Summary(
        mean=statistics.fmean(present) if present else None,
        std=statistics.stdev(present) if len(present) >= 2 else None,
        count=len(present),
        null_count=null_count,
    )


@lru_cache(maxsize=65536)
def summarize_counts(passed: int, count: int) -> Summary:
    """`summarize` of `passed` successes among `count` verdicts, remembered: stored counts repeat, and each
    computation costs as much as the verdicts it stands for."""
    return summarize([True] * passed + [False] * (count - passed))


def summarize_metrics(rows: Iterable[Mapping], metrics: Sequence[str] = METRICS) -> dict[str, Summary]:
    rows = list(rows)
    return {metric: summarize(row.get(metric) for row in rows) for metric in metrics}


def paradigm_group(row: Mapping) -> str:
    return row.get("paradigm") or "unknown"


def group_rows(rows: Iterable[Mapping], group: Callable[[Mapping], str]) -> dict[str, list[Mapping]]:
    """Rows by group name, names sorted (per site: `group=site_group`; per paradigm: `group=paradigm_group`)."""
    groups: dict[str, list[Mapping]] = {}
    for row in rows:
        groups.setdefault(group(row), []).append(row)
    return {name: groups[name] for name in sorted(groups)}


def summarize_groups(
    rows: Iterable[Mapping], group: Callable[[Mapping], str], metrics: Sequence[str] = METRICS
) -> dict[str, dict[str, Summary]]:
    return {name: summarize_metrics(members, metrics) for name, members in group_rows(rows, group).items()}


def within_successful(rows: Iterable[Mapping]) -> list[Mapping]:
    """Rows of successful tasks only; unknown success is not success."""
    return [row for row in rows if row.get("success") is True]


OUTCOME_CATEGORIES = tuple(
    (status, reason)
    for status in OUTCOME_STATUSES
    for reason in (EARLY_STOP_REASONS if status == "early_stop" else ("",))
)


@dataclass(frozen=True)
class OutcomeRow:
    status: str
    reason: str
    count: int
    share: float | None
    successes: int


@dataclass(frozen=True)
class OutcomeTable:
    """Every category is listed, zeros included, so that tables of two runs line up. `partly_scored`:
    of the `total` scored trajectories, those some of whose judge questions failed."""

    total: int
    rows: tuple[OutcomeRow, ...]
    partly_scored: int = 0

    def to_dict(self) -> dict:
        return asdict(self)


def outcome_table(rows: Iterable[Mapping]) -> OutcomeTable:
    """How trajectories ended (the paper's Table 7), with how many of each were successful."""
    counts = dict.fromkeys(OUTCOME_CATEGORIES, 0)
    successes = dict.fromkeys(OUTCOME_CATEGORIES, 0)
    partly_scored = 0
    for row in rows:
        key = (row.get("outcome_status"), row.get("outcome_reason") or "")
        if key not in counts:
            raise ValueError(f"outcome_status {key[0]!r} with outcome_reason {key[1]!r} is not an outcome category")
        counts[key] += 1
        successes[key] += row.get("success") is True
        partly_scored += bool(row.get("failed_questions"))
    total = sum(counts.values())
    return OutcomeTable(
        total=total,
        rows=tuple(
            OutcomeRow(status, reason, counts[status, reason], counts[status, reason] / total if total else None,
                       successes[status, reason])
            for status, reason in OUTCOME_CATEGORIES
        ),
        partly_scored=partly_scored,
    )


@dataclass(frozen=True)
class LengthComparison:
    """Agent steps n against gold steps m over the trajectories that have both (the paper's Table 6)."""

    pairs: int
    without_gold: int
    agent_steps: Summary
    gold_steps: Summary
    mean_difference: float | None

    def to_dict(self) -> dict:
        return asdict(self)


def length_comparison(rows: Iterable[Mapping]) -> LengthComparison:
    agent, gold, without_gold = [], [], 0
    for row in rows:
        if row.get("gold_steps") is None or row.get("agent_steps") is None:
            without_gold += 1
        else:
            agent.append(row["agent_steps"])
            gold.append(row["gold_steps"])
    return LengthComparison(
        pairs=len(agent),
        without_gold=without_gold,
        agent_steps=summarize(agent),
        gold_steps=summarize(gold),
        mean_difference=statistics.fmean(a - g for a, g in zip(agent, gold)) if agent else None,
    )


@dataclass(frozen=True)
class PairedComparison:
    """A candidate run against a baseline over the tasks both scored; differences are candidate - baseline.

    The confidence interval is a percentile bootstrap of the mean difference; Wilcoxon's
    signed-rank test drops zero differences (as SPSS does). A statistic that the pairs cannot
    support (fewer than two pairs, no non-zero difference, no spread) is None.
    """

    pairs: int
    baseline_mean: float | None
    candidate_mean: float | None
    mean_difference: float | None
    ci_low: float | None
    ci_high: float | None
    confidence: float
    wilcoxon_p: float | None
    t_test_p: float | None
    only_in_baseline: int
    only_in_candidate: int
    null_pairs: int
    seed: int
    resamples: int

    def to_dict(self) -> dict:
        return asdict(self)


_BOOTSTRAP_BATCH = 1000
# Metric values are ratios; two equal ones computed in different ways can differ in the last bit.
_TIE = 1e-12
# Index batches of at most this many entries are kept (at most 8 MB each, 24 of them).
_CACHED_INDEXES_AT_MOST = 1_000_000


@lru_cache(maxsize=24)
def _cached_resample_indexes(n: int, resamples: int, seed: int) -> tuple[np.ndarray, ...]:
    return _resample_indexes(n, resamples, seed)


def _resample_indexes(n: int, resamples: int, seed: int) -> tuple[np.ndarray, ...]:
    """The bootstrap's resamples as index batches. They depend only on (n, resamples, seed), so a
    comparison's metrics and sites with the same number of pairs share one draw."""
    rng = np.random.default_rng(seed)
    return tuple(
        rng.integers(0, n, size=(min(_BOOTSTRAP_BATCH, resamples - start), n))
        for start in range(0, resamples, _BOOTSTRAP_BATCH)
    )


def _bootstrap_ci(differences: np.ndarray, confidence: float, resamples: int, seed: int) -> tuple[float, float]:
    n = len(differences)
    draw = _cached_resample_indexes if n * resamples <= _CACHED_INDEXES_AT_MOST else _resample_indexes
    means = np.concatenate([differences[indexes].mean(axis=1) for indexes in draw(n, resamples, seed)])
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(means, [tail, 100 - tail])
    return float(low), float(high)


# scipy.stats.wilcoxon(method="auto") is exact up to this many differences without ties...
_EXACT_AT_MOST = 50
# ...and enumerates the 2**n sign patterns up to this many tied ones; beyond, normal approximation.
_PERMUTED_AT_MOST = 13


def _wilcoxon_p(differences: np.ndarray) -> float:
    """Two-sided p of Wilcoxon's signed-rank test on non-zero differences, exactly as
    scipy.stats.wilcoxon's defaults give it, computed directly: scipy's general machinery costs
    about a millisecond per call (a comparison runs a hundred), and for tied differences it
    enumerates sign patterns where counting sums of mid-ranks gives the same exact p."""
    from scipy import special  # about a quarter of a second to import: only comparisons pay for it

    n = len(differences)
    _, inverse, ties = np.unique(np.abs(differences), return_inverse=True, return_counts=True)
    ranks = (np.cumsum(ties) - (ties - 1) / 2)[inverse]  # mid-ranks of the magnitudes
    positive = float(ranks[differences > 0].sum())
    tied = len(ties) < n
    if n <= (_PERMUTED_AT_MOST if tied else _EXACT_AT_MOST):
        doubled = np.rint(2 * ranks).astype(int)  # mid-ranks are multiples of 1/2
        counts = np.zeros(doubled.sum() + 1)  # counts[s]: sign patterns whose positive ranks sum to s / 2
        counts[0] = 1
        for rank in doubled:
            counts[rank:] += counts[:-rank].copy()
        observed = int(round(2 * positive))
        low, high = counts[: observed + 1].sum(), counts[observed:].sum()
        return min(1.0, 2 * min(low, high) / counts.sum())
    variance = (n * (n + 1) * (2 * n + 1) - np.sum(ties**3 - ties) / 2) / 24
    z = (positive - n * (n + 1) / 4) / math.sqrt(variance)
    return min(1.0, 2 * float(special.ndtr(-abs(z))))


def _paired_t_p(differences: np.ndarray) -> float:
    """Two-sided p of the paired t-test (scipy.stats.ttest_rel), for differences with spread."""
    from scipy import special

    n = len(differences)
    t = differences.mean() / (differences.std(ddof=1) / math.sqrt(n))
    return min(1.0, 2 * float(special.stdtr(n - 1, -abs(t))))


def compare_paired(
    baseline: Mapping[Hashable, float | bool | None],
    candidate: Mapping[Hashable, float | bool | None],
    *,
    seed: int = 0,
    resamples: int = 10_000,
    confidence: float = 0.95,
) -> PairedComparison:
    """Compare one metric of two runs, each given as {task: value}; tasks are paired by key."""
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be between 0 and 1, got {confidence!r}")
    if isinstance(resamples, bool) or not isinstance(resamples, int) or resamples < 1:
        raise ValueError(f"resamples must be a positive integer, got {resamples!r}")
    shared = [task for task in baseline if task in candidate]
    pairs = [(float(baseline[task]), float(candidate[task])) for task in shared
             if baseline[task] is not None and candidate[task] is not None]
    a = np.array([pair[0] for pair in pairs])
    b = np.array([pair[1] for pair in pairs])
    differences = b - a
    n = len(pairs)
    ci_low = ci_high = wilcoxon_p = t_test_p = None
    if n >= 2:
        ci_low, ci_high = _bootstrap_ci(differences, confidence, resamples, seed)
        nonzero = differences[np.abs(differences) > _TIE]
        if len(nonzero):
            wilcoxon_p = _wilcoxon_p(nonzero)
        if np.ptp(differences) > _TIE:
            t_test_p = _paired_t_p(differences)
    return PairedComparison(
        pairs=n,
        baseline_mean=float(a.mean()) if n else None,
        candidate_mean=float(b.mean()) if n else None,
        mean_difference=float(differences.mean()) if n else None,
        ci_low=ci_low,
        ci_high=ci_high,
        confidence=confidence,
        wilcoxon_p=wilcoxon_p,
        t_test_p=t_test_p,
        only_in_baseline=sum(1 for task in baseline if task not in candidate),
        only_in_candidate=sum(1 for task in candidate if task not in baseline),
        null_pairs=len(shared) - n,
        seed=seed,
        resamples=resamples,
    )
