import json

import pytest
from django.core.management import CommandError, call_command

from accounts.roles import ANNOTATOR
from annotation.gold_records import GoldFormatError
from annotation.models import GoldStatus, GoldTrajectory
from annotation.services.gold_import import import_gold_file
from tests.factories import TaskFactory

pytestmark = pytest.mark.django_db


def _gold_summary():
    return sorted(
        (gold.task.task_id, gold.steps.count()) for gold in GoldTrajectory.objects.select_related("task")
    )


def test_the_published_excerpt_imports_as_the_paper_annotator(webarena_tasks, gold_xlsx, capsys):
    call_command("import_gold", str(gold_xlsx), "--annotator", "paper", "--create-annotator")

    assert _gold_summary() == [
        ("1", 6), ("2", 6), ("3", 6), ("529", 7), ("809", 7), ("809", 7), ("82", 9), ("96", 2),
    ]
    task_529 = GoldTrajectory.objects.get(task__task_id="529")
    assert [(s.index, s.source_label, s.text) for s in task_529.steps.all()][3:6] == [
        (4, "4", "Click on the 'View Order' link for order ID 000000148"),
        (5, "5", "Scroll down"),
        (6, "6", "Click on the 'Contact Us' link"),
    ]
    first_809, second_809 = GoldTrajectory.objects.filter(task__task_id="809").order_by("pk")
    assert first_809.steps.get(index=6).text == "Type '03/01/2030' into the 'Select due date' textbox."
    assert second_809.steps.get(index=6).text == "Type '31/01/2030' into the 'Select due date' textbox."
    assert {g.status for g in GoldTrajectory.objects.all()} == {GoldStatus.APPROVED}
    paper = first_809.annotator
    assert paper.username == "paper" and paper.groups.filter(name=ANNOTATOR).exists()
    assert not paper.has_usable_password()
    out = capsys.readouterr().out
    assert "7 tasks, 8 gold trajectories, 50 steps (8 created, 0 updated, 0 unchanged)" in out


def test_a_second_run_changes_nothing(webarena_tasks, gold_xlsx):
    first = import_gold_file(gold_xlsx, annotator="paper", create_annotator=True)
    before = list(GoldTrajectory.objects.values_list("pk", "version", "updated_at").order_by("pk"))
    step_ids = sorted(GoldTrajectory.objects.values_list("steps__pk", flat=True))

    second = import_gold_file(gold_xlsx, annotator="paper", create_annotator=True)

    assert (first.count("created"), second.count("unchanged"), second.count("created")) == (8, 8, 0)
    assert list(GoldTrajectory.objects.values_list("pk", "version", "updated_at").order_by("pk")) == before
    assert sorted(GoldTrajectory.objects.values_list("steps__pk", flat=True)) == step_ids


def test_another_annotator_importing_the_same_file_gets_their_own_gold(webarena_tasks, gold_xlsx):
    import_gold_file(gold_xlsx, annotator="paper", create_annotator=True)
    import_gold_file(gold_xlsx, annotator="second", status=GoldStatus.SUBMITTED, create_annotator=True)

    assert GoldTrajectory.objects.filter(annotator__username="second", status="submitted").count() == 8
    assert GoldTrajectory.objects.count() == 16


def test_missing_tasks_are_reported_and_the_rest_imports(gold_xlsx):
    for number in (1, 3, 809):
        TaskFactory(task_id=str(number), number=number)

    report = import_gold_file(gold_xlsx, annotator="paper", create_annotator=True)

    assert report.missing_tasks == ["2", "82", "96", "529"]
    assert (report.tasks, len(report.gold), report.steps) == (3, 4, 26)
    unplaced = {row.where: row.reason for row in report.unplaced}
    assert len(unplaced) == 6 + 9 + 2 + 7
    assert unplaced["row 49"] == "task 529 does not exist in benchmark 'webarena'"
    summary = report.summary()
    assert "tasks not found in benchmark 'webarena': 2, 82, 96, 529" in summary
    assert "  row 15: task 2 does not exist in benchmark 'webarena'" in summary
    assert report.to_dict()["gold_trajectories"] == 4


def test_a_changed_file_updates_the_same_gold_in_place(tmp_path):
    TaskFactory(task_id="5", number=5)
    path = tmp_path / "gold.csv"
    path.write_text("Task No.,Step No.,Text\n5,1,Click on the 'A' link\n5,2,Scroll down\n")
    import_gold_file(path, annotator="ann", create_annotator=True)
    gold = GoldTrajectory.objects.get()

    path.write_text("Task No.,Step No.,Text\n5,1,Click on the 'B' link\n")
    report = import_gold_file(path, annotator="ann", create_annotator=True)

    gold.refresh_from_db()
    assert report.count("updated") == 1
    assert (GoldTrajectory.objects.count(), gold.version) == (1, 2)
    assert [s.text for s in gold.steps.all()] == ["Click on the 'B' link"]


def test_json_keeps_structure_reasons_and_answers(tmp_path):
    TaskFactory(task_id="5", number=5)
    TaskFactory(task_id="6", number=6)
    path = tmp_path / "gold.json"
    path.write_text(json.dumps({"schema": "gold/v1", "gold": [
        {"task_id": 5, "final_answer": " 42 ", "steps": [
            {"text": "Type 'x' into the 'To' textbox", "action_type": "type", "element_role": "textbox",
             "element_name": "To", "value": "x", "label": 1},
        ]},
        {"task_id": "6", "cannot_complete": True, "cannot_complete_reason": "No such order.", "steps": []},
    ]}))

    import_gold_file(path, annotator="ann", status="draft", create_annotator=True)

    five = GoldTrajectory.objects.get(task__task_id="5")
    step = five.steps.get()
    assert (five.final_answer, five.status, five.submitted_at) == ("42", "draft", None)
    assert (step.action_type, step.element_role, step.element_name, step.value, step.source_label) == (
        "type", "textbox", "To", "x", "1"
    )
    six = GoldTrajectory.objects.get(task__task_id="6")
    assert (six.cannot_complete, six.cannot_complete_reason, six.steps.count()) == (True, "No such order.", 0)


def test_a_bad_file_stores_nothing_and_names_the_problem(tmp_path):
    TaskFactory(task_id="5", number=5)
    path = tmp_path / "gold.json"
    path.write_text(json.dumps({"schema": "gold/v1", "gold": [
        {"task_id": 5, "steps": [{"text": "ok"}]},
        {"task_id": 5, "steps": [{"text": "   "}]},
    ]}))

    with pytest.raises(GoldFormatError, match=r"gold.json: gold\[1\].steps\[0\].text: '   ' does not match"):
        import_gold_file(path, annotator="ann", create_annotator=True)
    assert GoldTrajectory.objects.count() == 0


def test_the_command_reports_unreadable_files_and_fails(tmp_path, capsys):
    bad = tmp_path / "gold.csv"
    bad.write_text("Task,Step\n1,2\n")
    with pytest.raises(CommandError, match="1 of 1 files not imported"):
        call_command("import_gold", str(bad), "--annotator", "ann")
    assert "gold.csv: line 1: header must have columns" in capsys.readouterr().err


def test_an_unknown_status_is_refused(tmp_path):
    path = tmp_path / "gold.csv"
    path.write_text("Task No.,Step No.,Text\n")
    with pytest.raises(ValueError, match="unknown status 'done'"):
        import_gold_file(path, annotator="ann", status="done", create_annotator=True)


def test_the_demo_gold_fixture_imports(webarena_tasks, settings):
    report = import_gold_file(settings.BASE_DIR / "fixtures" / "demo" / "gold.json", annotator="demo-annotator",
                              create_annotator=True)

    assert report.missing_tasks == [] and report.unplaced == []
    assert sorted((item.task_id, item.steps) for item in report.gold) == [("0", 6), ("3", 6), ("6", 6)]
    task_0 = GoldTrajectory.objects.get(task__task_id="0")
    assert task_0.steps.get(index=1).text == "Click on the 'REPORTS' link"
    assert task_0.steps.get(index=3).action_type == "select"
    assert task_0.final_answer == "Quest Lumaflex™ Band"
