"""Step Success Rate and Recovery Rate (METRICS.md sections 1 and 2).

Both read the judge's answers as a score matrix, so the same judge decisions explain both
numbers and the metrics never call a judge themselves. The Step Success of a full-plan
agent's stated plan is the same computation with plan steps in place of agent steps.
"""

from dataclasses import dataclass

from judges.matching import MatchedPair, ScoreMatrix, match_steps

from .base import DEFAULT_TAU, MetricResult, check_tau


NO_GOLD_STEPS = "the gold trajectory has no steps"


@dataclass(frozen=True)
class StepSuccess(MetricResult):
    value: float | None
    gold_steps: int
    agent_steps: int
    matched: tuple[MatchedPair, ...]
    unmatched_gold_steps: tuple[int, ...]
    tau: float
    ordered: bool
    null_reason: str = ""


def step_success(matrix: ScoreMatrix, *, tau: float = DEFAULT_TAU, ordered: bool = False) -> StepSuccess:
    """Matched gold steps / m; each gold step and each agent step is used at most once
    (`judges.matching.match_steps`: greedy as in the published code)."""
    tau = check_tau(tau)
    matched, unmatched = match_steps(matrix, tau=tau, ordered=ordered)
    m = matrix.gold_steps
    return StepSuccess(
        value=len(matched) / m if m else None,
        gold_steps=m,
        agent_steps=matrix.agent_steps,
        matched=matched,
        unmatched_gold_steps=unmatched,
        tau=tau,
        ordered=bool(ordered),
        null_reason="" if m else NO_GOLD_STEPS,
    )


DEVIATION = "deviation"
RECOVERY = "recovery"


@dataclass(frozen=True)
class RecoveryEvent:
    """A point where the agent left the gold path or came back to it.

    A deviation names the gold step that was expected next; `agent_step` is None for a gold
    step the agent never reached because its steps ran out. A recovery names the gold step it
    matched and its `cost`: the agent steps from the start of the deviation to the recovery
    (1 when the step right after the first off-path step recovers).
    """

    kind: str
    agent_step: int | None
    gold_step: int
    cost: int | None = None


@dataclass(frozen=True)
class Recovery(MetricResult):
    value: float | None
    deviations: int
    recoveries: int
    mean_recovery_cost: float | None
    events: tuple[RecoveryEvent, ...]
    matched: tuple[MatchedPair, ...]
    gold_steps: int
    agent_steps: int
    tau: float
    window: int
    null_reason: str = ""


def recovery(matrix: ScoreMatrix, *, tau: float = DEFAULT_TAU, window: int = 1) -> Recovery:
    """Recoveries / deviations from a two-pointer walk along the gold path.

    An agent step that matches one of the next `window` gold steps moves the gold pointer past
    the first one it matches (ending any deviation: a recovery); any other step starts a
    deviation unless one is already running. Once every gold step is matched the walk ends,
    so steps after the task was done are not deviations. If the agent's steps run out while
    on the path, each gold step not yet reached is a deviation never recovered.
    """
    tau = check_tau(tau)
    if isinstance(window, bool) or not isinstance(window, int) or window < 1:
        raise ValueError(f"window must be an integer >= 1, got {window!r}")
    m, n, scores = matrix.gold_steps, matrix.agent_steps, matrix.scores
    events, matched, costs = [], [], []
    deviation_start = None
    i = j = 0
    while i < n and j < m:
        k = next((k for k in range(j, min(j + window, m)) if scores[k][i] >= tau), None)
        if k is not None:
            if deviation_start is not None:
                costs.append(i - deviation_start)
                events.append(RecoveryEvent(RECOVERY, agent_step=i + 1, gold_step=k + 1, cost=i - deviation_start))
                deviation_start = None
            matched.append(MatchedPair(gold_step=k + 1, agent_step=i + 1, score=scores[k][i]))
            j = k + 1
        elif deviation_start is None:
            deviation_start = i
            events.append(RecoveryEvent(DEVIATION, agent_step=i + 1, gold_step=j + 1))
        i += 1
    if deviation_start is None:
        events.extend(RecoveryEvent(DEVIATION, agent_step=None, gold_step=k + 1) for k in range(j, m))
    deviations = sum(1 for event in events if event.kind == DEVIATION)
    recoveries = len(costs)
    if not m:
        value = None
    elif not deviations:
        value = 1.0
    else:
        value = recoveries / deviations
    return Recovery(
        value=value,
        deviations=deviations,
        recoveries=recoveries,
        mean_recovery_cost=sum(costs) / recoveries if recoveries else None,
        events=tuple(events),
        matched=tuple(matched),
        gold_steps=m,
        agent_steps=n,
        tau=tau,
        window=window,
        null_reason="" if m else NO_GOLD_STEPS,
    )
