"""Numbering anomalies of the full human gold sheet, rebuilt from real rows of the excerpt:
each is resolved into the gold trajectories a reviewer would sign, and reported."""

import pytest
from django.core.management import CommandError, call_command

from annotation.formats import AnomalyKind, read_gold_bytes, read_gold_file
from annotation.gold_records import GoldFormatError
from annotation.models import GoldFlag, GoldTrajectory
from annotation.services.gold_import import import_gold
from tests.annotation.sheets import block, excerpt_rows, relabel, sheet_bytes


@pytest.fixture
def rows(gold_xlsx):
    return excerpt_rows(gold_xlsx)


def _read(sheet_rows):
    return read_gold_bytes(sheet_bytes(sheet_rows), "xlsx", name="gold.xlsx")


def _shape(parsed):
    return [(b.task_id, b.ordinal, len(b.steps)) for b in parsed.blocks]


def _anomalies(parsed):
    return [(a.kind, a.task_id, a.rows) for a in parsed.anomalies]


def test_the_excerpt_has_no_anomaly(gold_xlsx):
    assert read_gold_file(gold_xlsx).anomalies == []


def test_ten_rows_all_numbered_one_are_one_gold(rows):
    parsed = _read(relabel(block(rows, 27, 35), numbers=[1] * 9))

    assert _shape(parsed) == [("82", 1, 9)]
    assert _anomalies(parsed) == [(AnomalyKind.ALL_NUMBERED_ONE, "82", list(range(2, 11)))]
    assert "all 9 rows are numbered 1" in parsed.anomalies[0].action
    assert parsed.anomalies[0].where == "rows 2, 3, 4, 5, 6, 7, 8, 9, 10"


def test_a_first_step_left_at_the_end_of_the_task_before_moves_to_its_task(rows):
    # Task 1's six steps, then task 82's step 1 written under task 1; task 82 then starts at step 2.
    sheet = block(rows, 9, 14) + relabel([rows[27]], task=1) + block(rows, 28, 35)

    parsed = _read(sheet)

    assert _shape(parsed) == [("1", 1, 6), ("82", 1, 9)]
    assert parsed.blocks[1].steps[0].text == "Click on the 'Find directions between two points'"
    assert parsed.blocks[1].rows[0] == "row 8"
    assert _anomalies(parsed) == [(AnomalyKind.FIRST_STEP_OF_NEXT_TASK, "82", [8])]
    assert "moved to task 82 as its step 1" in str(parsed.anomalies[0])


def test_a_last_step_left_at_the_start_of_the_next_task_moves_back(rows):
    # Task 1 ends at step 5; its step 6 is written as task 82's first row, before 82's steps 1..9.
    sheet = block(rows, 9, 13) + relabel([rows[14]], task=82) + block(rows, 27, 35)

    parsed = _read(sheet)

    assert _shape(parsed) == [("1", 1, 6), ("82", 1, 9)]
    assert parsed.blocks[0].steps[-1].text == "Click on the 'Show Report' button."
    assert _anomalies(parsed) == [(AnomalyKind.LAST_STEP_OF_PREVIOUS_TASK, "1", [7])]


@pytest.mark.parametrize("first", [3, 4])
def test_a_block_without_step_one_is_one_gold(rows, first):
    parsed = _read(block(rows, first, 8))  # task 809 from step 2 (or 3)

    assert _shape(parsed) == [("809", 1, 9 - first)]
    assert _anomalies(parsed) == [(AnomalyKind.NO_FIRST_STEP, "809", list(range(2, 11 - first)))]


def test_repeated_numbers_stay_in_one_gold(rows):
    parsed = _read(relabel(block(rows, 9, 14), numbers=[1, 2, 2, 3, 4, 5]))

    assert _shape(parsed) == [("1", 1, 6)]
    assert _anomalies(parsed) == [(AnomalyKind.REPEATED_NUMBER, "1", [3, 4])]


def test_two_identical_step_one_rows_are_one_gold(rows):
    parsed = _read([rows[2]] + block(rows, 2, 8))

    assert _shape(parsed) == [("809", 1, 8)]
    assert _anomalies(parsed) == [(AnomalyKind.DUPLICATE_FIRST_STEP, "809", [2, 3])]


def test_a_real_restart_is_a_second_gold_but_a_lone_row_is_not(rows):
    restart = _read(block(rows, 9, 14) + block(rows, 9, 14))
    lone = _read(block(rows, 9, 14) + [rows[9]] + block(rows, 21, 26))

    assert _shape(restart) == [("1", 1, 6), ("1", 2, 6)] and restart.anomalies == []
    assert _shape(lone) == [("1", 1, 7), ("3", 1, 6)]
    assert _anomalies(lone) == [(AnomalyKind.LONE_ROW, "1", [8])]


def test_a_separate_block_that_continues_the_numbering_joins_the_gold_it_continues(rows):
    continued = _read(block(rows, 2, 5) + block(rows, 9, 14) + block(rows, 6, 8))
    second_version = _read(block(rows, 2, 8) + block(rows, 9, 14) + block(rows, 38, 44))

    assert _shape(continued) == [("809", 1, 7), ("1", 1, 6)]
    assert _anomalies(continued) == [(AnomalyKind.CONTINUED_BLOCK, "809", [12, 13, 14])]
    assert continued.anomalies[0].action == ("a separate block of 3 rows whose numbering (5..) continues the task's "
                                             "gold above, which ends at step 4: joined to that gold")
    assert _shape(second_version) == [("809", 1, 7), ("1", 1, 6), ("809", 2, 7)]
    assert second_version.anomalies == []


def test_a_one_row_block_starting_again_at_step_one_is_a_gold_of_its_own(rows):
    # A 2-step gold of task 809 and, after other tasks' rows, a second annotator's one-row version.
    parsed = _read(block(rows, 2, 3) + block(rows, 9, 14) + [rows[38]])

    assert _shape(parsed) == [("809", 1, 2), ("1", 1, 6), ("809", 2, 1)]
    assert [step.text for step in parsed.blocks[0].steps] == [rows[2][2].strip(), rows[3][2].strip()]
    assert parsed.blocks[2].rows == ["row 10"] and parsed.anomalies == []


def test_a_block_written_for_another_task_is_not_joined_to_the_gold_above(rows):
    # Task 809's five steps, then task 1's click written under 809 after task 3's rows.
    parsed = _read(block(rows, 2, 6) + block(rows, 21, 26) + relabel([rows[9]], task=809))

    assert _shape(parsed) == [("809", 1, 5), ("3", 1, 6), ("809", 2, 1)]
    assert parsed.blocks[0].steps[-1].text == rows[6][2].strip()
    assert parsed.blocks[2].steps[0].text == rows[9][2].strip()


@pytest.mark.parametrize("numbers, anomalies", [
    ([0, 1, 2, 3, 4, 5, 6], []),  # numbered from 0
    (["Pink"] * 7, []),  # no numbers at all
    ([4, 5, 6, 7, 8, 9, 10], [(AnomalyKind.NO_FIRST_STEP, "809", list(range(15, 22)))]),  # neither starts nor continues
])
def test_a_separate_block_that_does_not_continue_the_numbering_is_a_second_gold(rows, numbers, anomalies):
    parsed = _read(block(rows, 2, 8) + block(rows, 9, 14) + relabel(block(rows, 38, 44), numbers=numbers))

    assert _shape(parsed) == [("809", 1, 7), ("1", 1, 6), ("809", 2, 7)]
    assert _anomalies(parsed) == anomalies


def test_every_row_stays_a_step(rows):
    sheet = (relabel(block(rows, 27, 35), numbers=[1] * 9) + block(rows, 9, 14) + relabel([rows[21]], task=1)
             + block(rows, 22, 26) + block(rows, 3, 8) + [rows[38]] + block(rows, 38, 44))

    parsed = _read(sheet)

    assert sum(len(b.steps) for b in parsed.blocks) == len(sheet)
    assert _shape(parsed) == [("82", 1, 9), ("1", 1, 6), ("3", 1, 6), ("809", 1, 6), ("809", 2, 8)]


# Import -------------------------------------------------------------------------------------

ANOMALOUS = "anomalous.xlsx"


@pytest.fixture
def anomalous_sheet(rows):
    return block(rows, 9, 14) + relabel([rows[27]], task=1) + block(rows, 28, 35) + [rows[2]] + block(rows, 2, 8)


def test_the_import_reports_and_flags_each_anomaly(db, webarena_tasks, anomalous_sheet, tmp_path, capsys):
    path = tmp_path / ANOMALOUS
    path.write_bytes(sheet_bytes(anomalous_sheet))

    call_command("import_gold", str(path), "--annotator", "paper", "--create-annotator")

    out = capsys.readouterr().out
    assert "3 tasks, 3 gold trajectories, 23 steps" in out
    assert "2 numbering anomalies resolved:" in out
    assert "task 82, row 8: numbered 1 at the end of task 1" in out
    assert "task 809, rows 17, 18: two identical step-1 rows" in out
    flags = GoldFlag.objects.filter(kind=GoldFlag.Kind.IMPORT_ANOMALY).select_related("gold__task")
    assert sorted((flag.gold.task.task_id, flag.rows) for flag in flags) == [("809", [17, 18]), ("82", [8])]

    call_command("import_gold", str(path), "--annotator", "paper", "--create-annotator")  # idempotent, flags included

    assert GoldTrajectory.objects.count() == 3 and GoldFlag.objects.count() == 2
    assert "(0 created, 0 updated, 3 unchanged)" in capsys.readouterr().out


def test_strict_refuses_the_file_and_stores_nothing(db, webarena_tasks, anomalous_sheet, tmp_path, capsys):
    path = tmp_path / ANOMALOUS
    path.write_bytes(sheet_bytes(anomalous_sheet))

    with pytest.raises(CommandError):
        call_command("import_gold", str(path), "--annotator", "paper", "--create-annotator", "--strict")

    err = capsys.readouterr().err
    assert "anomalous.xlsx: 2 numbering anomalies (refused by --strict)" in err and "row 8" in err
    assert GoldTrajectory.objects.count() == 0


def test_the_api_report_lists_the_anomalies(db, webarena_tasks, anomalous_sheet):
    parsed = read_gold_bytes(sheet_bytes(anomalous_sheet), "xlsx", name=ANOMALOUS)

    report = import_gold(parsed, file_name=ANOMALOUS, annotator="paper", create_annotator=True).to_dict()

    assert [(a["task_id"], a["where"]) for a in report["anomalies"]] == [("82", "row 8"), ("809", "rows 17, 18")]
    with pytest.raises(GoldFormatError, match="refused by --strict"):
        import_gold(parsed, file_name=ANOMALOUS, annotator="paper", create_annotator=True, strict=True)


def test_the_web_import_page_lists_the_anomalies(db, webarena_tasks, anomalous_sheet, reviewer, client):
    from django.core.files.uploadedfile import SimpleUploadedFile
    from django.urls import reverse

    client.force_login(reviewer)
    upload = SimpleUploadedFile(ANOMALOUS, sheet_bytes(anomalous_sheet))

    html = client.post(reverse("annotation:import"), {"file": upload, "status": "submitted"}).content.decode()

    assert "2 numbering anomalies resolved" in html
    assert "<td>82</td><td>row 8</td><td>numbered 1 at the end of task 1" in html
    strict = SimpleUploadedFile(ANOMALOUS, sheet_bytes(anomalous_sheet))
    refused = client.post(reverse("annotation:import"), {"file": strict, "strict": "1"}).content.decode()
    assert "Not imported: anomalous.xlsx: 2 numbering anomalies (refused by --strict)" in refused


def test_the_excerpt_with_a_second_one_row_gold_imports_it_as_its_own(db, webarena_tasks, gold_xlsx, rows, tmp_path,
                                                                       capsys):
    # The whole excerpt, then task 1's first step again on its own, as a second annotator's version.
    path = tmp_path / "gold.xlsx"
    path.write_bytes(sheet_bytes(block(rows, 2, max(rows)) + [rows[9]]))

    call_command("import_gold", str(path), "--annotator", "paper", "--create-annotator", "--strict")

    assert "7 tasks, 9 gold trajectories, 51 steps (9 created" in capsys.readouterr().out
    task_1 = GoldTrajectory.objects.filter(task__task_id="1").order_by("pk")
    assert [gold.steps.count() for gold in task_1] == [6, 1]
