"""The checks of a gold's steps alone: lengths against the peers' median, duplicates under other tasks."""

import pytest

from annotation.quality import GoldRecord, TaskRecord
from annotation.quality.step_checks import check_duplicates, check_lengths


def _length_flags(n: int, peer_lengths: tuple[int, ...]) -> list[tuple[str, str]]:
    """The length flags of a gold of `n` steps among golds of the same task of `peer_lengths` steps."""
    task = TaskRecord(1, "1", "Open the reports")
    golds = [GoldRecord(100, 1, tuple(f"Click '{i}'" for i in range(n)))]
    golds += [GoldRecord(pk, 1, tuple(f"Select '{i}'" for i in range(length)))
              for pk, length in enumerate(peer_lengths, start=1)]
    return [(f.kind, f.message) for f in check_lengths({1: task}, golds)
            if f.gold_pk == 100 and f.kind != "one_step"]


@pytest.mark.parametrize(("n", "peers", "expected"), [
    # Too short: under half the peers' median AND at least 3 steps fewer.
    (2, (5, 5, 5), [("too_short", "2 steps where the task's other golds and its template siblings' have 5 "
                                  "(median of 3)")]),  # 2 < 5/2 and 5 - 2 = 3
    (1, (3, 3, 3), []),  # 1 < 3/2, but only 2 fewer
    (3, (6, 6, 6), []),  # 3 fewer, but 3 is not under 6/2
    (3, (7, 7, 7), [("too_short", "3 steps where the task's other golds and its template siblings' have 7 "
                                  "(median of 3)")]),  # 3 < 3.5 and 4 fewer
    # Too long: over twice the median AND at least 4 steps more.
    (7, (3, 3, 3), [("too_long", "7 steps where the task's other golds and its template siblings' have 3 "
                                 "(median of 3)")]),  # 7 > 6 and 7 - 3 = 4
    (5, (2, 2, 2), []),  # 5 > 4, but only 3 more
    (8, (4, 4, 4), []),  # 4 more, but 8 is not over 2 * 4
    # The median, not the mean: peers of 1, 6 and 6 steps have a median of 6 (mean 4.33, under which 2 is
    # not under half, 4.33 - 2 < 3).
    (2, (1, 6, 6), [("too_short", "2 steps where the task's other golds and its template siblings' have 6 "
                                  "(median of 3)")]),
    # Fewer than three peers: no length is judged.
    (1, (5, 5), []),
    (20, (2, 2), []),
])
def test_a_gold_is_too_short_or_too_long_only_past_both_the_ratio_and_the_margin(n, peers, expected):
    assert _length_flags(n, peers) == expected


def test_only_golds_of_two_steps_or_more_are_duplicates():
    tasks = {pk: TaskRecord(pk, str(pk), f"intent {pk}") for pk in (1, 2, 3, 4)}
    # One step ("Click 'Reports'") in common says little: two tasks often start alike.
    one_step = [GoldRecord(1, 1, ("Click 'Reports'",)), GoldRecord(2, 2, ("click 'reports'.",))]
    two_steps = [GoldRecord(3, 3, ("Click 'Reports'", "Click 'Sales'")),
                 GoldRecord(4, 4, ("click  'Reports'", "Click 'Sales'."))]  # case, spaces, end stop

    assert check_duplicates(tasks, one_step) == []
    assert [(f.gold_pk, f.related_gold_pk) for f in check_duplicates(tasks, two_steps)] == [(3, 4), (4, 3)]


def test_copies_of_one_gold_under_many_tasks_give_one_flag_each():
    tasks = {pk: TaskRecord(pk, str(pk), f"intent {pk}") for pk in (1, 2, 3)}
    steps = ("Click on 'Reports'", "Click on 'Sales'")
    golds = [GoldRecord(10 + pk, pk, steps) for pk in (1, 2, 3)]
    findings = check_duplicates(tasks, golds)
    assert [(finding.gold_pk, finding.kind) for finding in findings] == [(11, "duplicate"), (12, "duplicate"),
                                                                         (13, "duplicate")]
    assert findings[0].message == "the same 2 steps are stored under task 2 (gold #12) and 1 other task"
