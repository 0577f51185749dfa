"""What an agent step and a trajectory's end mean, shared by every WebArena-derived format.

METRICS.md section 7: the executed action is split into its parts with the element label taken
from the harness's `where [id] is ...` suffix or, failing that, looked up in the step's own
accessibility tree; a harness's forced stop ends the agent steps and sets the outcome instead
of being one.
"""

from .actions import ParsedAction, forced_stop_reason, parse_action, resolve_element_label
from .canonical import ActionParts, Outcome, Step


def action_parts(action: str, observation: str) -> ActionParts:
    parsed = parse_action(action, executed=True)
    label = parsed.element_label or resolve_element_label(observation, parsed.element_id)
    return ActionParts(
        type=parsed.type,
        element_id=parsed.element_id,
        element_label=label,
        value=parsed.value,
        press_enter=parsed.press_enter,
    )


def forced_stop(action: str) -> ParsedAction | None:
    """The parsed action when the harness, not the agent, wrote this stop."""
    parsed = parse_action(action)
    return parsed if forced_stop_reason(parsed) else None


def is_not_available(answer: str) -> bool:
    """`stop [N/A]`, however the agent quoted it (`stop ['N/A']`)."""
    return answer.strip().strip("'\"").strip().upper() == "N/A"


def agent_outcome(steps: list[Step], stopped_by_harness: ParsedAction | None) -> tuple[Outcome, str | None]:
    """The outcome category and the final answer (the argument of the agent's own stop)."""
    if stopped_by_harness is not None:
        reason = forced_stop_reason(stopped_by_harness)
        return Outcome(status="early_stop", reason=reason, message=stopped_by_harness.value.strip()), None
    if not steps:
        return Outcome(status="crashed"), None
    last = steps[-1].action_parts or action_parts(steps[-1].action, steps[-1].observation)
    if last.type == "stop":
        return Outcome(status="na" if is_not_available(last.value) else "answered"), last.value
    return Outcome(status="no_stop"), None
