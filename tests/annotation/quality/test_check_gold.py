"""Every check over a benchmark's gold at once (`check_gold`): on the published excerpt, on a sheet with a
moved block and a copied gold, and on golds of odd lengths."""

import numpy as np

from annotation.formats import read_gold_bytes, read_gold_file
from annotation.quality import GoldRecord, TaskRecord, check_gold
from tests.annotation.sheets import excerpt_rows, gold_records, misplaced_gold_sheet, sheet_bytes


def _found(findings) -> set[tuple]:
    return {(finding.gold_pk, finding.kind, finding.key) for finding in findings}


def test_the_real_excerpt_only_shows_its_real_duplicate(webarena_intents, gold_xlsx):
    # Tasks 1 and 2 of the published sheet carry the very same six steps.
    findings = check_gold(webarena_intents, gold_records(read_gold_file(gold_xlsx)))

    assert _found(findings) == {(1, "duplicate", "gold:2"), (2, "duplicate", "gold:1")}


def test_a_moved_block_and_a_gold_copied_under_a_sibling_are_found(webarena_intents, gold_xlsx):
    parsed = read_gold_bytes(sheet_bytes(misplaced_gold_sheet(excerpt_rows(gold_xlsx))), "xlsx", name="x.xlsx")
    golds = gold_records(parsed)
    moved, copied = golds[-2], golds[-1]
    assert (moved.task_pk, copied.task_pk) == (811, 83)

    findings = {(f.gold_pk, f.kind): f for f in check_gold(webarena_intents, golds)}

    assert (findings[moved.pk, "other_task"].key, findings[moved.pk, "other_task"].related_task_pk) == ("task:529", 529)
    assert findings[moved.pk, "other_task"].message.startswith("fits task 529 better than its own task 811: word fit")
    assert "‘bluetooth’, ‘speaker’" in findings[moved.pk, "other_task"].message
    # Task 75 names the same three places, but 82 is the sibling whose places the copy types.
    assert findings[copied.pk, "sibling_values"].related_task_pk == 82
    assert (copied.pk, "other_task") not in findings
    assert findings[copied.pk, "duplicate"].message == "the same 9 steps are stored under task 82 (gold #4)"
    assert (4, "duplicate") in findings and (moved.pk, "duplicate") not in findings  # moved, not copied


def test_lengths_one_step_golds_and_missing_intent_values():
    tasks = {pk: TaskRecord(pk, str(pk), 'Create an issue titled "404 for many URLs"', 5) for pk in (1, 2, 3)}
    steps = ("Click 'Issues'", "Click 'New issue'", "Type '404 for many URLs' into 'Title'", "Click 'Create'")
    golds = [GoldRecord(1, 1, steps), GoldRecord(2, 2, steps + ("Scroll down",)),
             GoldRecord(3, 3, steps), GoldRecord(4, 1, steps[:1]),
             GoldRecord(5, 2, steps * 3), GoldRecord(6, 3, (), cannot_complete=True)]

    found = {(f.gold_pk, f.kind) for f in check_gold(list(tasks.values()), golds)}

    assert {(4, "one_step"), (4, "too_short"), (4, "missing_values"), (5, "too_long")} <= found
    assert not {kind for pk, kind in found if pk in (1, 3, 6)} - {"duplicate"}


class _SameMeaning:
    """Every text means the same: the fit checks are left to words alone."""

    def encode(self, texts: list[str]) -> np.ndarray:
        return np.full((len(texts), 2), 2 ** -0.5, dtype=np.float32)


def test_progress_is_told_half_way_and_at_the_end():
    tasks = [TaskRecord(pk, str(pk), f"Open report {pk}") for pk in (1, 2)]
    golds = [GoldRecord(pk, 1 + pk % 2, ("Click 'Reports'", f"Click 'Report {pk}'")) for pk in range(5)]
    told = []

    check_gold(tasks, golds, told.append, encoder=_SameMeaning())

    assert told == [2, 5]  # 5 // 2 golds, then all 5


def test_golds_of_tasks_not_given_are_left_out_and_no_model_is_loaded_for_none(monkeypatch):
    monkeypatch.setattr("judges.embeddings.sentence_encoder", lambda: 1 / 0)

    assert check_gold([TaskRecord(1, "1", "Open the reports")], [GoldRecord(1, 2, ("Click 'Reports'",))]) == []
