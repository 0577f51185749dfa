"""Trajectories laid out against the gold steps, for reading two runs side by side (Django-free).

Built only from what a score stored in `TrajectoryScore.details`: the recovery walk
(`recovery.matched` and `recovery.events`, METRICS.md section 2) places each agent step on the
gold path, in order; the Step Success matching (`step_success.matched`, section 1) is shown beside
it, since its greedy rule may pair an agent step with a gold step out of order.

Rows run down the gold steps. Before the row of gold step j come, per trajectory, the agent steps
taken since its previous match (off the path, or the way towards g_j); the row itself holds the
agent step that matched g_j on the walk. A deviation that never came back is shown before the
gold step it left the path at. Steps after the walk ended (every gold step matched), or of a
trajectory scored without gold, come last.
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

GOLD, BEFORE, AFTER = "gold", "before", "after"


@dataclass(frozen=True)
class AgentStepMark:
    """One agent step and what the metrics said about it (step numbers are 1-based)."""

    step: int
    path_gold_step: int | None = None  # gold step this step matched on the recovery walk
    ssr_gold_step: int | None = None  # gold step Step Success matched it with
    ssr_score: float | None = None
    left_path: int | None = None  # this step started a deviation; the gold step expected then
    came_back: int | None = None  # this step ended a deviation by matching this gold step
    recovery_cost: int | None = None
    off_path: bool = False  # inside a deviation (from its first step up to the recovery)


@dataclass(frozen=True)
class SideAlignment:
    """One trajectory's steps by row; `aligned` is False when it was scored without gold."""

    aligned: bool
    gold_steps: int
    steps: tuple[AgentStepMark, ...]
    slots: Mapping[tuple[str, int], tuple[AgentStepMark, ...]]
    never_reached: frozenset[int]  # gold steps left unmatched when the agent's steps ran out
    walk_completed: bool  # every gold step matched: later steps are not deviations


def align_side(agent_steps: int, details: Mapping) -> SideAlignment:
    """Place one trajectory's agent steps on its gold path from a score's `details`."""
    recovery = details.get("recovery")
    ssr = {pair["agent_step"]: pair for pair in (details.get("step_success") or {}).get("matched", ())}
    if not recovery:
        steps = tuple(
            AgentStepMark(step=i, ssr_gold_step=ssr.get(i, {}).get("gold_step"), ssr_score=ssr.get(i, {}).get("score"))
            for i in range(1, agent_steps + 1)
        )
        return SideAlignment(False, 0, steps, {(AFTER, 0): steps} if steps else {}, frozenset(), False)

    path = {pair["agent_step"]: pair["gold_step"] for pair in recovery.get("matched", ())}
    left, back, never_reached = {}, {}, set()
    for event in recovery.get("events", ()):
        if event["kind"] == "deviation":
            if event.get("agent_step") is None:
                never_reached.add(event["gold_step"])
            else:
                left[event["agent_step"]] = event["gold_step"]
        elif event["kind"] == "recovery":
            back[event["agent_step"]] = (event["gold_step"], event.get("cost"))

    gold_steps = recovery.get("gold_steps", 0)
    walk_completed = gold_steps > 0 and len(path) == gold_steps and not never_reached
    marks, off_path = [], False
    for i in range(1, agent_steps + 1):
        if i in left:
            off_path = True
        if i in back:
            off_path = False
        pair = ssr.get(i, {})
        marks.append(AgentStepMark(
            step=i, path_gold_step=path.get(i), ssr_gold_step=pair.get("gold_step"), ssr_score=pair.get("score"),
            left_path=left.get(i), came_back=back.get(i, (None, None))[0], recovery_cost=back.get(i, (None, None))[1],
            off_path=off_path and i not in back,
        ))

    slots: dict[tuple[str, int], list[AgentStepMark]] = {}
    matches = sorted(path.items())  # (agent step, gold step), increasing in both
    expected = None  # the gold step the running deviation left the path at
    for mark in marks:
        expected = mark.left_path or (None if mark.came_back else expected)
        following = next((gold for agent, gold in matches if agent > mark.step), None)
        if mark.path_gold_step is not None:
            key = (GOLD, mark.path_gold_step)
        elif following is not None:
            key = (BEFORE, following)
        elif mark.off_path:
            key = (BEFORE, expected)  # never came back: shown where it left
        else:
            key = (AFTER, 0)
        slots.setdefault(key, []).append(mark)
    return SideAlignment(
        True, gold_steps, tuple(marks), {key: tuple(value) for key, value in slots.items()},
        frozenset(never_reached), walk_completed,
    )


@dataclass(frozen=True)
class AlignedRow:
    """A row of the side-by-side view: `kind` is gold, before (steps leading to a gold step) or after."""

    kind: str
    gold_step: int | None
    sides: tuple[tuple[AgentStepMark, ...], ...]
    unmatched: tuple[bool, ...] = ()  # gold rows: the side has no step on this gold step


def align(sides: Sequence[SideAlignment]) -> list[AlignedRow]:
    """Rows shared by several trajectories of one task, aligned on gold step numbers."""
    rows = []
    gold_steps = max((side.gold_steps for side in sides), default=0)
    for j in range(1, gold_steps + 1):
        before = tuple(side.slots.get((BEFORE, j), ()) for side in sides)
        if any(before):
            rows.append(AlignedRow(BEFORE, j, before))
        on_gold = tuple(side.slots.get((GOLD, j), ()) for side in sides)
        unmatched = tuple(side.aligned and j <= side.gold_steps and not steps for side, steps in zip(sides, on_gold))
        rows.append(AlignedRow(GOLD, j, on_gold, unmatched))
    after = tuple(side.slots.get((AFTER, 0), ()) for side in sides)
    if any(after):
        rows.append(AlignedRow(AFTER, None, after))
    return rows
