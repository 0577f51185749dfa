"""The checks of a gold's steps alone: lengths against the peers' median, duplicates under other tasks."""

import pytest

from annotation.quality import GoldRecord, TaskRecord
from annotation.quality.step_checks import check_duplicates, check_intent_values, check_lengths


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


def test_the_intents_quoted_values_a_gold_never_types_are_named_one_or_many():
    task = TaskRecord(1, "1", 'Add "red teapot", "Blue Kettle" and "lamp" to the cart')
    golds = [
        GoldRecord(1, 1, ("Type 'nothing'",), cannot_complete=True),  # cannot be done: not checked
        GoldRecord(2, 1, ()),  # no steps: not checked
        GoldRecord(3, 1, ("Search 'blue  kettle.'", "Search 'red")),  # "teapot" and "lamp" never typed
        GoldRecord(4, 1, ("Search 'blue kettle'", "Search 'lamp' and 'red", "teapot'")),  # across two steps
        GoldRecord(5, 1, ("Search 'blue kettle'", "Search 'red teapot'")),
    ]

    found = [(f.gold_pk, f.kind, f.key, f.message) for f in check_intent_values({1: task}, golds)]

    assert found == [
        (3, "missing_values", "", "never types the intent's quoted values “red teapot”, “lamp”"),
        (5, "missing_values", "", "never types the intent's quoted value “lamp”"),
    ]


def test_only_copies_under_two_tasks_or_more_are_flagged_naming_the_first_and_counting_the_rest():
    tasks = {pk: TaskRecord(pk, f"t{pk}", f"intent {pk}") for pk in (1, 2, 3, 4)}
    steps = ("Click 'Reports'", "Click 'Sales'")
    # Two copies under one task come first: the same task twice is no duplicate.
    twice = ("Click 'Orders'", "Click 'Refunds'")
    golds = [GoldRecord(1, 1, twice), GoldRecord(2, 1, twice)]
    golds += [GoldRecord(10 + pk, pk, steps) for pk in (1, 2, 3, 4)]

    found = [(f.gold_pk, f.key, f.related_gold_pk, f.related_task_pk, f.message)
             for f in check_duplicates(tasks, golds)]

    assert found[0] == (11, "gold:12", 12, 2, "the same 2 steps are stored under task t2 (gold #12) and 2 other tasks")
    assert [row[:4] for row in found] == [(11, "gold:12", 12, 2), (12, "gold:11", 11, 1), (13, "gold:11", 11, 1),
                                          (14, "gold:11", 11, 1)]


def test_lengths_skip_golds_that_cannot_be_completed_or_have_no_steps_and_golds_with_few_peers():
    tasks = {1: TaskRecord(1, "1", "Open the reports"), 2: TaskRecord(2, "2", "Open the sales")}

    def gold(pk: int, task: int, n: int, cannot_complete: bool = False) -> GoldRecord:
        return GoldRecord(pk, task, tuple(f"Click '{i}'" for i in range(n)), cannot_complete)

    golds = [gold(0, 2, 3),  # task 2 has no other gold: no length is judged
             gold(1, 1, 20, cannot_complete=True),  # neither judged nor a peer
             gold(2, 1, 0),  # no steps: not judged, but a peer of 0 steps
             gold(3, 1, 1), gold(4, 1, 6), gold(5, 1, 6), gold(6, 1, 6), gold(7, 1, 14)]

    found = [(f.gold_pk, f.kind, f.key, f.message) for f in check_lengths(tasks, golds)]

    # Gold 3: peers of 0, 6, 6, 6 and 14 steps, median 6: 1 < 3 and 5 fewer. Gold 7: peers of 0, 1, 6, 6
    # and 6, median 6: 14 > 12 and 8 more.
    assert found == [
        (3, "one_step", "", "a gold of one step: rarely the whole path of a task"),
        (3, "too_short", "", "1 steps where the task's other golds and its template siblings' have 6 (median of 5)"),
        (7, "too_long", "", "14 steps where the task's other golds and its template siblings' have 6 (median of 5)"),
    ]
