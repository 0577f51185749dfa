"""Outcome category and lengths of a trajectory (METRICS.md section 7; the paper's Table 7)."""

from dataclasses import dataclass

from trajectories.formats.canonical import EARLY_STOP_REASONS, OUTCOME_STATUSES

from .base import MetricResult, check_count

CRASHED = "crashed"
EARLY_STOP = "early_stop"


@dataclass(frozen=True)
class OutcomeCategory(MetricResult):
    """`reason` is set for early stops only; `gold_steps` is None when there is no gold."""

    status: str
    reason: str
    agent_steps: int
    gold_steps: int | None

    @property
    def label(self) -> str:
        return f"{self.status} ({self.reason})" if self.reason else self.status


def outcome_category(status: str, reason: str | None, agent_steps: int, gold_steps: int | None = None
                     ) -> OutcomeCategory:
    """The trajectory's outcome as imported, checked; a trajectory without steps is `crashed`
    whatever its recorded status, since nothing it did can be scored."""
    if status not in OUTCOME_STATUSES:
        raise ValueError(f"outcome.status: {status!r} is not one of {', '.join(OUTCOME_STATUSES)}")
    reason = reason or ""
    if status == EARLY_STOP:
        if reason and reason not in EARLY_STOP_REASONS:
            raise ValueError(f"outcome.reason: {reason!r} is not one of {', '.join(EARLY_STOP_REASONS)}")
        reason = reason or "other"
    elif reason:
        raise ValueError(f"outcome.reason: {reason!r} given for status {status!r}; only early_stop has a reason")
    agent_steps = check_count(agent_steps, "agent_steps")
    if gold_steps is not None:
        check_count(gold_steps, "gold_steps")
    if agent_steps == 0:
        status, reason = CRASHED, ""
    return OutcomeCategory(status=status, reason=reason, agent_steps=agent_steps, gold_steps=gold_steps)
