"""Element Accuracy (METRICS.md section 4): did the agent execute the action it said it would?

No judge: the planned and executed actions are compared with the WebArena action grammar,
so a planned action in a wrong format is a miss even when its intent is plain. A hit has the
same action type, element id, argument (whitespace normalised) and Enter flag, each side's
flag read as the harness encodes it (`type [20] [abc] [1]` is executed as `type [20] [abc ]`).

It needs an action stated apart from the one executed. An agent whose own output is the action
run (browser-use, BrowserGym, WebVoyager, computer-use agents) states none, and its Element
Accuracy is null with the reason; so is that of an agent acting by screen coordinates, which
records no element at all, unless a judge that sees the screenshot says, for each step that
acted at a point, whether the element there is the one the step's reasoning meant
(`point_scores`): the value is then the share of such steps it found so.
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from trajectories.formats.actions import forced_stop_reason, parse_action
from trajectories.formats.canonical import ActionParts

from .base import DEFAULT_TAU, MetricResult, check_score, check_tau

NO_PLANNED_ACTION = "no_planned_action"
PLANNED_ACTION_UNPARSEABLE = "planned_action_unparseable"
EXECUTED_ACTION_INVALID = "executed_action_invalid"
DIFFERENT_TARGET = "different_target"
OTHER_ELEMENT_AT_POINT = "other_element_at_point"
MISS_LABELS = {
    NO_PLANNED_ACTION: "the reasoning states no action",
    PLANNED_ACTION_UNPARSEABLE: "the action stated in the reasoning cannot be read",
    EXECUTED_ACTION_INVALID: "the executed action is not a valid action",
    DIFFERENT_TARGET: "it acted on another element than the one stated",
    OTHER_ELEMENT_AT_POINT: "the element at the point it acted on is not the one its reasoning meant",
}
NO_STEPS = "no agent steps"
BY_COORDINATES = "the agent acts by screen coordinates; no element was recorded"
NO_SCREENSHOT_AT_POINT = (f"{BY_COORDINATES}, and no step acting at a point has a screenshot "
                          "on which the judge could resolve it")
NO_STATED_ACTION = ("the agent states no action apart from the one it executes: "
                    "there is no planned action to compare")
# What the value counts: planned against executed actions, or the judge on the points acted at.
BY_GRAMMAR = "planned_vs_executed"
BY_SCREENSHOT = "judge_on_screenshot"


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
    by: str = BY_GRAMMAR
    null_reason: str = ""


def _webarena_action(executed: str) -> bool:
    """An executed action the WebArena grammar reads, or the harness's `none` for an unreadable output."""
    return executed.strip() == "none" or parse_action(executed, executed=True).valid


def at_point_only(parts: ActionParts | None) -> bool:
    """A step that acted at a point of the screen and recorded no element."""
    return parts is not None and parts.has_point and not parts.has_element


def _by_coordinates(planned_actions: Sequence[str | None], executed_actions: Sequence[str],
                    executed_parts: Sequence[ActionParts | None]) -> bool | None:
    """None: the agent states its actions (the grammar compares them); else whether it acts by
    screen coordinates (some step acted at a point and recorded no element)."""
    stated = any(text and text.strip() for text in planned_actions)
    if stated or any(_webarena_action(text) for text in executed_actions):
        return None
    return any(at_point_only(parts) for parts in executed_parts)


def points_to_resolve(planned_actions: Sequence[str | None], executed_actions: Sequence[str],
                      executed_parts: Sequence[ActionParts | None]) -> tuple[int, ...]:
    """The steps (numbers) whose element only a judge that sees their screenshot can tell: those
    acting at a point, of an agent acting by screen coordinates."""
    if not _by_coordinates(planned_actions, executed_actions, executed_parts):
        return ()
    return tuple(step for step, parts in enumerate(executed_parts, start=1) if at_point_only(parts))


def element_accuracy(planned_actions: Sequence[str | None], executed_actions: Sequence[str],
                     executed_parts: Sequence[ActionParts | None] = (),
                     point_scores: Mapping[int, float] | None = None, *, tau: float = DEFAULT_TAU) -> ElementAccuracy:
    """Hits / steps over the steps before the first forced stop.

    A harness's forced stop (`stop [Early stop: ...]`) is not an agent action, so it and
    anything after it are left out even when a caller passes them in. `executed_parts` are the
    executed actions' parts as the readers stored them (by step, when known); `point_scores`
    maps a step acting at a point (`at_point_only`) to a judge's score that the element there is
    the one its reasoning meant, for the steps a judge that sees screenshots was asked about
    (None: no such judge).
    """
    tau = check_tau(tau)
    if len(planned_actions) != len(executed_actions):
        raise ValueError(
            f"{len(planned_actions)} planned actions for {len(executed_actions)} executed actions; "
            "expected one planned action (or None) per step"
        )
    if not executed_actions:
        return ElementAccuracy(None, 0, 0, (), None, null_reason=NO_STEPS)
    by_coordinates = _by_coordinates(planned_actions, executed_actions, executed_parts)
    if by_coordinates:
        return _judged_points(executed_actions, point_scores, tau)
    if by_coordinates is False:
        return ElementAccuracy(None, 0, 0, (), None, null_reason=NO_STATED_ACTION)
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
        null_reason="" if steps else NO_STEPS,
    )


def _judged_points(executed_actions: Sequence[str], point_scores: Mapping[int, float] | None,
                   tau: float) -> ElementAccuracy:
    """The steps acting at a point that the judge saw, each a hit when it found the element there
    to be the one meant."""
    if not point_scores:
        reason = BY_COORDINATES if point_scores is None else NO_SCREENSHOT_AT_POINT
        return ElementAccuracy(None, 0, 0, (), None, by=BY_SCREENSHOT, null_reason=reason)
    misses = tuple(
        ElementMiss(step=step, planned=None, executed=executed_actions[step - 1], reason=OTHER_ELEMENT_AT_POINT)
        for step, score in sorted(point_scores.items())
        if check_score(score, f"element at the point of step {step}") < tau
    )
    steps = len(point_scores)
    return ElementAccuracy((steps - len(misses)) / steps, steps, steps - len(misses), misses, None, by=BY_SCREENSHOT)
