"""Laying trajectories out against the gold steps, from score details alone (no database)."""

from metrics import definitions as md
from metrics.alignment import AFTER, BEFORE, GOLD, align, align_side


def _details(gold: list[str], agent: list[str], window: int = 1) -> dict:
    """What an evaluation stores, computed by the metric functions with exact matching."""
    matrix = md.ScoreMatrix(scores=tuple(tuple(float(g == a) for a in agent) for g in gold), agent_steps=len(agent))
    return {"step_success": md.step_success(matrix).to_dict(), "recovery": md.recovery(matrix, window=window).to_dict()}


GOLD_PATH = ["Products", "Electronics", "Smartphones"]
TABLE_1 = ["About Us", "Products", "Electronics", "Scroll down", "Smartphones", "Back"]


def _layout(rows):
    return [(row.kind, row.gold_step, [[mark.step for mark in side] for side in row.sides]) for row in rows]


def test_table_1_walk_places_every_step():
    side = align_side(6, _details(GOLD_PATH, TABLE_1))
    assert side.aligned and side.walk_completed and not side.never_reached
    marks = {mark.step: mark for mark in side.steps}
    assert marks[1].left_path == 1 and marks[1].off_path
    assert marks[2].path_gold_step == 1 and marks[2].came_back == 1 and marks[2].recovery_cost == 1
    assert not marks[2].off_path
    assert marks[4].left_path == 3 and marks[4].off_path
    assert (marks[5].came_back, marks[5].path_gold_step) == (3, 3)
    assert marks[6].path_gold_step is None and not marks[6].off_path  # after the task was done
    assert _layout(align([side])) == [
        (BEFORE, 1, [[1]]), (GOLD, 1, [[2]]), (GOLD, 2, [[3]]), (BEFORE, 3, [[4]]), (GOLD, 3, [[5]]),
        (AFTER, None, [[6]]),
    ]


def test_two_trajectories_share_the_gold_rows():
    first = align_side(6, _details(GOLD_PATH, TABLE_1))
    second = align_side(3, _details(GOLD_PATH, ["Products", "Scroll down", "Scroll down"]))
    rows = align([first, second])
    assert _layout(rows) == [
        (BEFORE, 1, [[1], []]), (GOLD, 1, [[2], [1]]), (BEFORE, 2, [[], [2, 3]]), (GOLD, 2, [[3], []]),
        (BEFORE, 3, [[4], []]), (GOLD, 3, [[5], []]), (AFTER, None, [[6], []]),
    ]
    # the second left the path after its first step and never came back: its steps sit where it left
    assert [mark.off_path for mark in second.steps] == [False, True, True]
    by_gold = {row.gold_step: row.unmatched for row in rows if row.kind == GOLD}
    assert by_gold == {1: (False, False), 2: (False, True), 3: (False, True)}


def test_never_reached_gold_steps_are_named():
    side = align_side(2, _details(GOLD_PATH, ["Products", "Electronics"]))
    assert side.never_reached == {3} and not side.walk_completed
    assert [mark.off_path for mark in side.steps] == [False, False]


def test_step_success_match_is_shown_even_out_of_path_order():
    # Step Success pairs gold 1 with agent step 2 although the walk (window 1) never reached it
    side = align_side(2, _details(["A", "B"], ["B", "A"]))
    marks = {mark.step: mark for mark in side.steps}
    assert (marks[1].ssr_gold_step, marks[1].path_gold_step) == (2, None)
    assert (marks[2].ssr_gold_step, marks[2].path_gold_step) == (1, 1)


def test_a_wider_window_skips_a_gold_step():
    side = align_side(2, _details(["A", "B", "C"], ["A", "C"], window=2))
    rows = align([side])
    assert _layout(rows) == [(GOLD, 1, [[1]]), (GOLD, 2, [[]]), (GOLD, 3, [[2]])]
    assert rows[1].unmatched == (True,)


def test_without_gold_every_step_comes_unaligned_at_the_end():
    side = align_side(3, {"repetitiveness": {"value": 1.0}})
    assert not side.aligned and side.gold_steps == 0
    rows = align([side, align_side(6, _details(GOLD_PATH, TABLE_1))])
    assert rows[-1].kind == AFTER and [m.step for m in rows[-1].sides[0]] == [1, 2, 3]
    assert all(not row.unmatched[0] for row in rows if row.kind == GOLD)


def test_no_steps_no_rows():
    assert align([align_side(0, {})]) == []
