"""Element Accuracy (METRICS.md section 4): did the agent execute the action it said it would?

No judge: the planned and executed actions are compared with the WebArena action grammar,
so a planned action in a wrong format is a miss even when its intent is plain. A hit has the
same action type, element id, argument (whitespace normalised) and Enter flag, each side's
flag read as the harness encodes it (`type [20] [abc] [1]` is executed as `type [20] [abc ]`).
"""

from collections.abc import Sequence
from dataclasses import dataclass

from trajectories.formats.actions import forced_stop_reason, parse_action

from .base import MetricResult

NO_PLANNED_ACTION = "no_planned_action"
PLANNED_ACTION_UNPARSEABLE = "planned_action_unparseable"
EXECUTED_ACTION_INVALID = "executed_action_invalid"
DIFFERENT_TARGET = "different_target"
MISS_LABELS = {
    NO_PLANNED_ACTION: "the reasoning states no action",
    PLANNED_ACTION_UNPARSEABLE: "the action stated in the reasoning cannot be read",
    EXECUTED_ACTION_INVALID: "the executed action is not a valid action",
    DIFFERENT_TARGET: "it acted on another element than the one stated",
}


@dataclass(frozen=True)
class ElementMiss:
    step: int
    planned: str | None
    executed: str
    reason: str


@dataclass(frozen=True)
class ElementAccuracy(MetricResult):
    value: float | None
    steps: int
    hits: int
    misses: tuple[ElementMiss, ...]
    forced_stop_step: int | None


def element_accuracy(planned_actions: Sequence[str | None], executed_actions: Sequence[str]) -> ElementAccuracy:
    """Hits / steps over the steps before the first forced stop.

    A harness's forced stop (`stop [Early stop: ...]`) is not an agent action, so it and
    anything after it are left out even when a caller passes them in.
    """
    if len(planned_actions) != len(executed_actions):
        raise ValueError(
            f"{len(planned_actions)} planned actions for {len(executed_actions)} executed actions; "
            "expected one planned action (or None) per step"
        )
    misses, forced_stop_step, steps = [], None, 0
    for index, (planned_text, executed_text) in enumerate(zip(planned_actions, executed_actions), start=1):
        executed = parse_action(executed_text, executed=True)
        if forced_stop_reason(executed):
            forced_stop_step = index
            break
        steps += 1
        planned = parse_action(planned_text)
        if planned_text is None or not planned_text.strip():
            reason = NO_PLANNED_ACTION
        elif not planned.valid:
            reason = PLANNED_ACTION_UNPARSEABLE
        elif not executed.valid:
            reason = EXECUTED_ACTION_INVALID
        elif not executed.executes(planned):
            reason = DIFFERENT_TARGET
        else:
            continue
        misses.append(ElementMiss(step=index, planned=planned_text, executed=executed_text, reason=reason))
    return ElementAccuracy(
        value=(steps - len(misses)) / steps if steps else None,
        steps=steps,
        hits=steps - len(misses),
        misses=tuple(misses),
        forced_stop_step=forced_stop_step,
    )
