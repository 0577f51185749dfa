"""How far two people who named the decisive step of the same failed trajectory agree (Django-free).

Every pair of annotators of one trajectory is one unit: the same step, within 1 and within 3 steps,
the same responsible agent (over pairs where both named one) and the same failure type, with
Cohen's kappa over the types (the pair ordered by annotator name). Each figure has a 95 % percentile
bootstrap interval over the units, seeded, so the same annotations give the same interval everywhere.
"""

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import combinations

import numpy as np

from judges.calibration import BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED, CONFIDENCE

WITHIN = (1, 3)


@dataclass(frozen=True)
class Label:
    """One annotator's attribution of one trajectory's failure."""

    annotator: str
    step: int | None
    agent: str = ""
    failure_type: str = ""


@dataclass(frozen=True)
class Figure:
    """A share (or kappa) over `count` units, with its interval; None when no unit counts."""

    value: float | None
    count: int
    interval: tuple[float, float] | None = None


@dataclass(frozen=True)
class StepAgreement:
    pairs: int
    exact: Figure
    within_1: Figure
    within_3: Figure
    agent: Figure
    failure_type: Figure
    type_kappa: Figure


def annotator_pairs(labels_by_trajectory: Iterable[Sequence[Label]]) -> list[tuple[Label, Label]]:
    """Every pair of different annotators of one trajectory, ordered by name."""
    pairs = []
    for labels in labels_by_trajectory:
        ordered = sorted(labels, key=lambda label: label.annotator)
        pairs.extend((first, second) for first, second in combinations(ordered, 2)
                     if first.annotator != second.annotator)
    return pairs


def _quantiles(samples: np.ndarray) -> tuple[float, float] | None:
    samples = samples[~np.isnan(samples)]
    if not samples.size:
        return None
    low, high = np.quantile(samples, [(1 - CONFIDENCE) / 2, 1 - (1 - CONFIDENCE) / 2])
    return float(low), float(high)


def _draws(count: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, count, size=(BOOTSTRAP_RESAMPLES, count))


def share(hits: Sequence[bool], seed: int = BOOTSTRAP_SEED) -> Figure:
    """The share of true values, with its bootstrap interval."""
    if not hits:
        return Figure(None, 0)
    values = np.asarray(hits, dtype=float)
    return Figure(float(values.mean()), len(values), _quantiles(values[_draws(len(values), seed)].mean(axis=1)))


def _kappas(first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """Cohen's kappa per row of one-hot label matrices (rows: resamples; NaN where undefined)."""
    observed = (first * second).sum(axis=2).mean(axis=1)
    expected = (first.mean(axis=1) * second.mean(axis=1)).sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(expected < 1, (observed - expected) / (1 - expected), np.nan)


def kappa(pairs: Sequence[tuple[str, str]], seed: int = BOOTSTRAP_SEED) -> Figure:
    """Cohen's kappa of the (first, second) category pairs, with its bootstrap interval; None when
    both sides give one and the same category throughout (chance agreement is then certain)."""
    if not pairs:
        return Figure(None, 0)
    categories = sorted({category for pair in pairs for category in pair})
    position = {category: index for index, category in enumerate(categories)}
    eye = np.eye(len(categories))
    first = eye[[position[a] for a, _ in pairs]]
    second = eye[[position[b] for _, b in pairs]]
    value = float(_kappas(first[None], second[None])[0])
    draws = _draws(len(pairs), seed)
    return Figure(None if np.isnan(value) else value, len(pairs), _quantiles(_kappas(first[draws], second[draws])))


def step_agreement(pairs: Sequence[tuple[Label, Label]], seed: int = BOOTSTRAP_SEED) -> StepAgreement:
    stepped = [(a.step, b.step) for a, b in pairs if a.step is not None and b.step is not None]
    distances = [abs(a - b) for a, b in stepped]
    agents = [a.agent == b.agent for a, b in pairs if a.agent and b.agent]
    types = [(a.failure_type, b.failure_type) for a, b in pairs if a.failure_type and b.failure_type]
    return StepAgreement(
        pairs=len(pairs),
        exact=share([distance == 0 for distance in distances], seed),
        within_1=share([distance <= WITHIN[0] for distance in distances], seed),
        within_3=share([distance <= WITHIN[1] for distance in distances], seed),
        agent=share(agents, seed),
        failure_type=share([a == b for a, b in types], seed),
        type_kappa=kappa(types, seed),
    )
