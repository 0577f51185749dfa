"""Attribution sources measured against people (Django-free): how often a source names the agent,
the decisive step (exactly, within 1 and within 3 steps) and the failure type that the people did,
beside the floor of choosing at random.

A trajectory that several people annotated is measured against their consensus: the step most of
them named (ties: the earliest), the agent most named (ties: alphabetical) and the type most named.
The random floor is computed exactly, not drawn: a uniform choice among a trajectory's n steps finds
step s with probability 1/n, and within k steps with probability (min(n, s+k) - max(1, s-k) + 1)/n;
a uniform choice among its speakers finds the agent with probability 1/(number of speakers), and
among the taxonomy's types the type with 1/(number of types). Expected kappa of a random choice is 0.
"""

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from statistics import fmean

from .agreement import WITHIN, Figure, Label, StepAgreement, step_agreement

CONSENSUS = "consensus"


def _most_named(values: Sequence, key) -> object:
    counts = Counter(value for value in values if value not in (None, ""))
    if not counts:
        return None
    return min(counts, key=lambda value: (-counts[value], key(value)))


def consensus(labels: Sequence[Label]) -> Label:
    return Label(
        CONSENSUS,
        _most_named([label.step for label in labels], key=lambda step: step),
        _most_named([label.agent for label in labels], key=lambda agent: agent) or "",
        _most_named([label.failure_type for label in labels], key=lambda key: key) or "",
    )


def against(reference: Mapping[int, Label], predicted: Mapping[int, Label]) -> StepAgreement:
    """The source's `predicted` attributions against the `reference` ones, per trajectory id, over
    the trajectories both have; each figure with its bootstrap interval over trajectories."""
    return step_agreement([(reference[key], predicted[key]) for key in sorted(reference.keys() & predicted.keys())])


@dataclass(frozen=True)
class Shape:
    """What a random choice chooses among in one trajectory."""

    steps: int
    agents: int = 0
    types: int = 0


def _within(step: int, steps: int, distance: int) -> float:
    return (min(steps, step + distance) - max(1, step - distance) + 1) / steps


def _mean(values: list[float]) -> Figure:
    return Figure(fmean(values) if values else None, len(values))


def random_floor(reference: Mapping[int, Label], shapes: Mapping[int, Shape]) -> StepAgreement:
    """The expected agreement of a uniform random choice with `reference`, computed exactly."""
    stepped = [(label.step, shapes[key].steps) for key, label in reference.items()
               if key in shapes and label.step is not None and shapes[key].steps >= label.step]
    agents = [1 / shapes[key].agents for key, label in reference.items()
              if key in shapes and label.agent and shapes[key].agents]
    types = [1 / shapes[key].types for key, label in reference.items()
             if key in shapes and label.failure_type and shapes[key].types]
    return StepAgreement(
        pairs=len(stepped),
        exact=_mean([1 / steps for _, steps in stepped]),
        within_1=_mean([_within(step, steps, WITHIN[0]) for step, steps in stepped]),
        within_3=_mean([_within(step, steps, WITHIN[1]) for step, steps in stepped]),
        agent=_mean(agents),
        failure_type=_mean(types),
        type_kappa=Figure(0.0 if types else None, len(types)),
    )
