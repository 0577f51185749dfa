"""Agreement of a judge with human verdicts, and how far it can be trusted (Django-free).

A judge's score counts as "equivalent" at or above a threshold, a human's at or above 0.5.
"""

from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

import numpy as np

HUMAN_YES = 0.5
DEFAULT_THRESHOLD = 0.7


def parse_threshold(value) -> float:
    """τ as typed in any form or query string: a number from 0 to 1, else ValueError saying which
    rule it breaks (a number of 400 digits is a number, out of range, not "not a number")."""
    text = str(value if value is not None else "").strip()
    shown = text if len(text) <= 24 else text[:20] + "…"
    try:
        number = Decimal(text)
    except InvalidOperation:
        raise ValueError(f"τ is a number from 0 to 1, such as 0.7; {shown!r} is not a number") from None
    if not number.is_finite() or not 0 <= number <= 1:
        raise ValueError(f"τ must be from 0 to 1; {shown} is outside that range")
    return float(number)


def read_threshold(value, default: float = DEFAULT_THRESHOLD) -> tuple[float, str]:
    """τ for a page: the value typed, `default` when none was, or `default` with the reason the
    value typed was refused, to show at the field."""
    if value is None or not str(value).strip():
        return default, ""
    try:
        return parse_threshold(value), ""
    except ValueError as error:
        return default, f"{error}; showing τ = {default}"


@dataclass(frozen=True)
class Agreement:
    count: int
    threshold: float
    accuracy: float | None
    precision: float | None
    recall: float | None
    kappa: float | None
    true_positives: int
    false_positives: int
    true_negatives: int
    false_negatives: int


def _ratio(numerator: int, denominator: int) -> float | None:
    return numerator / denominator if denominator else None


def agreement(pairs: Iterable[tuple[float, float]], threshold: float = DEFAULT_THRESHOLD) -> Agreement:
    """`pairs` are (judge score, human score)."""
    tp = fp = tn = fn = 0
    for judge, human in pairs:
        said, truth = judge >= threshold, human >= HUMAN_YES
        tp += said and truth
        fp += said and not truth
        tn += not said and not truth
        fn += not said and truth
    count = tp + fp + tn + fn
    kappa = None
    if count:
        observed = (tp + tn) / count
        expected = ((tp + fp) * (tp + fn) + (tn + fn) * (tn + fp)) / count**2
        kappa = (observed - expected) / (1 - expected) if expected < 1 else None
    return Agreement(
        count=count,
        threshold=threshold,
        accuracy=_ratio(tp + tn, count),
        precision=_ratio(tp, tp + fp),
        recall=_ratio(tp, tp + fn),
        kappa=kappa,
        true_positives=tp,
        false_positives=fp,
        true_negatives=tn,
        false_negatives=fn,
    )


def best_threshold(pairs: Iterable[tuple[float, float]], default: float = DEFAULT_THRESHOLD) -> Agreement:
    """The threshold (among the judge's own scores) with the highest accuracy.

    Ties go to the higher kappa, then to the threshold nearest the default.
    """
    pairs = list(pairs)
    candidates = sorted({judge for judge, _ in pairs} | {default})
    return max(
        (agreement(pairs, t) for t in candidates),
        key=lambda a: (a.accuracy or 0.0, a.kappa if a.kappa is not None else -1.0, -abs(a.threshold - default)),
    )


# --- how far a judge can be trusted ----------------------------------------------------------

TRUSTED_CONFIRMATIONS = 50
TRUSTED_KAPPA = 0.8
BOOTSTRAP_RESAMPLES = 2000
BOOTSTRAP_SEED = 0
CONFIDENCE = 0.95


def kappa_interval(
    pairs: Iterable[tuple[float, float]],
    threshold: float = DEFAULT_THRESHOLD,
    *,
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = BOOTSTRAP_SEED,
    level: float = CONFIDENCE,
) -> tuple[float, float] | None:
    """A percentile bootstrap interval for Cohen's kappa over the (judge, human) pairs."""
    result = agreement(pairs, threshold)
    return confusion_kappa_interval(result.true_positives, result.false_positives, result.true_negatives,
                                    result.false_negatives, resamples=resamples, seed=seed, level=level)


def confusion_kappa_interval(
    tp: int,
    fp: int,
    tn: int,
    fn: int,
    *,
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = BOOTSTRAP_SEED,
    level: float = CONFIDENCE,
) -> tuple[float, float] | None:
    """A percentile bootstrap interval for Cohen's kappa of two yes/no raters, from their confusion matrix.

    Each resample draws n pairs with replacement; drawing pairs only matters through
    the confusion matrix it yields, so a resample is one multinomial draw of its four cells
    (numpy's default generator, seeded: the same pairs give the same interval everywhere).
    Resamples where kappa is undefined (both sides say one thing only) are left out; None when
    every resample is, or there are no pairs. Percentiles interpolate linearly (numpy's default).
    """
    cells = [tp, fp, tn, fn]
    n = sum(cells)
    if not n:
        return None
    drawn = np.random.default_rng(seed).multinomial(n, [cell / n for cell in cells], size=resamples)
    tp, fp, tn, fn = drawn.T.astype(float)
    observed = (tp + tn) / n
    expected = ((tp + fp) * (tp + fn) + (tn + fn) * (tn + fp)) / n**2
    defined = expected < 1
    if not defined.any():
        return None
    kappas = (observed[defined] - expected[defined]) / (1 - expected[defined])
    low, high = np.quantile(kappas, [(1 - level) / 2, 1 - (1 - level) / 2])
    return float(low), float(high)


@dataclass(frozen=True)
class Trust:
    """A judge's agreement with the humans who confirmed or overruled its decisions, with the
    95 % interval of its kappa; trusted from 50 confirmations with an interval above 0.8."""

    agreement: Agreement
    interval: tuple[float, float] | None

    @property
    def confirmations(self) -> int:
        return self.agreement.count

    @property
    def concerns(self) -> list[str]:
        """Why the judge is not trusted yet (empty when it is)."""
        found = []
        if self.confirmations < TRUSTED_CONFIRMATIONS:
            found.append(f"{self.confirmations} human confirmations (fewer than {TRUSTED_CONFIRMATIONS})")
        if self.interval is None:
            found.append("Cohen's kappa cannot be estimated yet")
        elif self.interval[0] < TRUSTED_KAPPA:
            found.append(f"Cohen's kappa interval {format_interval(self.interval)} reaches below {TRUSTED_KAPPA:g}")
        return found

    @property
    def trusted(self) -> bool:
        return not self.concerns


def trust(pairs: Iterable[tuple[float, float]], threshold: float = DEFAULT_THRESHOLD) -> Trust:
    pairs = list(pairs)
    return Trust(agreement(pairs, threshold), kappa_interval(pairs, threshold))


def format_interval(interval: tuple[float, float] | None) -> str:
    """`[0.712, 0.934]`, the same on the judge-quality page, the leaderboard and calibrate_judge."""
    return "-" if interval is None else f"[{interval[0]:.3f}, {interval[1]:.3f}]"
