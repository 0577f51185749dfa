"""The decisive step from gold (Django-free): where the agent left the gold path for the last time
and never came back, read from the deviation and recovery events Recovery Rate records
(`metrics.definitions.step_matching.recovery`, kept in a score's `details["recovery"]["events"]`).

- The last deviation that no recovery follows, with an agent step: that step, the first off the
  path, is decisive; the gold step it missed is the one expected next.
- The agent's steps ran out on the path (the deviation names no agent step): its last step, where it
  stopped short, is decisive; the gold step missed is the first it never reached.
- Every deviation recovered and every gold step matched: the gold path names no decisive step (the
  failure lies elsewhere, e.g. in the final answer), so there is none.
"""

from collections.abc import Sequence
from dataclasses import dataclass

DEVIATION, RECOVERY = "deviation", "recovery"


@dataclass(frozen=True)
class GoldPathAttribution:
    step: int
    missed_gold_step: int
    reason: str


def decisive_step(events: Sequence[dict], agent_steps: int) -> GoldPathAttribution | None:
    """`events`: the recovery walk's events in order ({kind, agent_step, gold_step})."""
    last_recovery = max((position for position, event in enumerate(events) if event["kind"] == RECOVERY), default=-1)
    final = next((event for event in events[last_recovery + 1:] if event["kind"] == DEVIATION), None)
    if final is None:
        return None
    if final["agent_step"] is None:
        if agent_steps < 1:
            return None
        return GoldPathAttribution(agent_steps, final["gold_step"],
                                   f"stopped on the gold path before gold step {final['gold_step']}")
    return GoldPathAttribution(final["agent_step"], final["gold_step"],
                               f"left the gold path at step {final['agent_step']} and never came back; "
                               f"gold step {final['gold_step']} was expected next")
