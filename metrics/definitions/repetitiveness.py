"""Repetitiveness Rate (METRICS.md section 3): how much of a trajectory repeats its previous step."""

from collections.abc import Sequence
from dataclasses import dataclass

from .base import DEFAULT_TAU, MetricResult, check_count, check_score, check_tau


@dataclass(frozen=True)
class Repetitiveness(MetricResult):
    value: float | None
    agent_steps: int
    repeated_steps: tuple[int, ...]
    tau: float


def repetitiveness(neighbour_scores: Sequence[float], agent_steps: int, *, tau: float = DEFAULT_TAU) -> Repetitiveness:
    """1 - r / n, where `neighbour_scores[k]` is the judge's score of agent step k+2 against step k+1.

    Higher is better: a trajectory doing every action exactly twice scores 0.5.
    """
    tau = check_tau(tau)
    n = check_count(agent_steps, "agent_steps")
    expected = max(n - 1, 0)
    if len(neighbour_scores) != expected:
        raise ValueError(
            f"{len(neighbour_scores)} neighbour scores for {n} agent steps, expected {expected} "
            "(one per step after the first)"
        )
    repeated = tuple(
        k + 2
        for k, score in enumerate(neighbour_scores)
        if check_score(score, f"neighbour score of agent step {k + 2}") >= tau
    )
    return Repetitiveness(
        value=1 - len(repeated) / n if n else None,
        agent_steps=n,
        repeated_steps=repeated,
        tau=tau,
    )
