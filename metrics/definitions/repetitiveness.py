"""Repetitiveness Rate (METRICS.md section 3): how much of a trajectory repeats its previous step.

A step repeats the one before when it is equivalent to it. For two structured actions (each has a
kind) equivalence is what the steps did, decided here without a judge (`same_action`): the same
kind, the same target and the same argument, on the same page. The target is the element (its
id, else its selector, else its label) or, for an agent acting by screen coordinates, a point
within POINT_TOLERANCE pixels of the other; the argument is the typed text, the keys, the URL
gone to, the scroll direction or the option chosen (whitespace normalised). Two steps are on the
same page unless both record a URL and the URLs differ. A step without structure (free text, an
output the harness could not read) is compared by the judge.
"""

import math
from collections.abc import Sequence
from dataclasses import dataclass

from trajectories.formats.actions import collapse_whitespace
from trajectories.formats.canonical import ActionParts

from .base import DEFAULT_TAU, MetricResult, check_count, check_score, check_tau

# Two clicks this close (Euclidean distance, screenshot pixels) are on the same target: agents
# re-aim by a few pixels at one button; distinct controls are rarely closer.
POINT_TOLERANCE = 10.0
NO_STEPS = "no agent steps"


@dataclass(frozen=True)
class ActedStep:
    """An agent step as repetition compares it: what it did (None: free text) and on which page."""

    parts: ActionParts | None
    url: str = ""

    @property
    def structured(self) -> bool:
        return self.parts is not None and self.parts.type not in ("", "none")


def _target(parts: ActionParts) -> tuple:
    if parts.element_id:
        return ("element", parts.element_id)
    if parts.selector:
        return ("selector", parts.selector)
    if parts.element_label:
        return ("label", collapse_whitespace(parts.element_label))
    if parts.has_point:
        return ("point",)
    return ()


def same_action(previous: ActedStep, step: ActedStep) -> bool | None:
    """Whether `step` does what `previous` did (the module's rule); None when either is free text."""
    if not (previous.structured and step.structured):
        return None
    first, second = previous.parts, step.parts
    if first.type != second.type:
        return False
    if previous.url and step.url and previous.url != step.url:
        return False
    target = _target(first)
    if target != _target(second):
        return False
    if target == ("point",) and math.dist((first.x, first.y), (second.x, second.y)) > POINT_TOLERANCE:
        return False
    return collapse_whitespace(first.value) == collapse_whitespace(second.value)


@dataclass(frozen=True)
class Repetitiveness(MetricResult):
    value: float | None
    agent_steps: int
    repeated_steps: tuple[int, ...]
    tau: float
    # Steps compared with the one before by the judge (free text); the others by `same_action`.
    judged_steps: tuple[int, ...] = ()
    null_reason: str = ""


def repetitiveness(neighbours: Sequence[float | bool], agent_steps: int, *, tau: float = DEFAULT_TAU
                   ) -> Repetitiveness:
    """1 - r / n, where `neighbours[k]` says whether agent step k+2 repeats step k+1: True or
    False where `same_action` decided, else the judge's score (a repeat at >= tau).

    Higher is better: a trajectory doing every action exactly twice scores 0.5.
    """
    tau = check_tau(tau)
    n = check_count(agent_steps, "agent_steps")
    expected = max(n - 1, 0)
    if len(neighbours) != expected:
        raise ValueError(
            f"{len(neighbours)} neighbour scores for {n} agent steps, expected {expected} "
            "(one per step after the first)"
        )
    repeated, judged = [], []
    for k, neighbour in enumerate(neighbours):
        if isinstance(neighbour, bool):
            same = neighbour
        else:
            judged.append(k + 2)
            same = check_score(neighbour, f"neighbour score of agent step {k + 2}") >= tau
        if same:
            repeated.append(k + 2)
    return Repetitiveness(
        value=1 - len(repeated) / n if n else None,
        agent_steps=n,
        repeated_steps=tuple(repeated),
        tau=tau,
        judged_steps=tuple(judged),
        null_reason="" if n else NO_STEPS,
    )
