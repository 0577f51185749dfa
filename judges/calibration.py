"""Agreement of a judge with human verdicts (Django-free).

A judge's score counts as "equivalent" at or above a threshold, a human's at or above 0.5.
"""

from collections.abc import Iterable
from dataclasses import dataclass

HUMAN_YES = 0.5
DEFAULT_THRESHOLD = 0.7


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
