import json

import pytest
from django.core.management import CommandError, call_command

from tests.factories import TaskFactory
from trajectories.formats.webarena_tasks import TaskConfigError
from trajectories.models import Task
from trajectories.services.tasks import import_task_file

pytestmark = pytest.mark.django_db


@pytest.fixture
def task_file(shared_data):
    return shared_data / "webarena" / "test.raw.json"


def test_import_twice_leaves_exactly_812_tasks(task_file, capsys):
    call_command("import_tasks", str(task_file))
    call_command("import_tasks", str(task_file))
    out = capsys.readouterr().out
    assert "812 created" in out and "812 unchanged" in out
    assert Task.objects.count() == 812
    assert Task.objects.filter(unachievable=True).count() == 36
    task = Task.objects.get(benchmark="webarena", task_id="6")
    assert task.sites == ["shopping_admin"]
    assert task.requirements_source == "must_include"
    assert task.requirements[:2] == ["Sprite Yoga Strap 6 foot", "Overnight Duffle"]
    assert task.config["intent_template"] == "What are the top-{{n}} best-selling product in {{year}}"


def test_reimport_updates_changed_tasks_in_place(task_file, tmp_path):
    import_task_file(task_file)
    data = json.loads(task_file.read_text())
    data[0]["intent"] = "What is the top-1 best-selling product in 2023"
    changed = tmp_path / "test.raw.json"
    changed.write_text(json.dumps(data))
    report = import_task_file(changed)
    assert (report.created, report.updated, report.unchanged) == (0, 1, 811)
    assert Task.objects.get(task_id="0").intent.endswith("2023")
    assert Task.objects.count() == 812


def test_annotator_requirements_survive_reimport(task_file):
    import_task_file(task_file)
    Task.objects.filter(task_id="6").update(requirements=["Sprite Yoga Strap"], requirements_source="annotator")
    import_task_file(task_file)
    task = Task.objects.get(task_id="6")
    assert (task.requirements, task.requirements_source) == (["Sprite Yoga Strap"], "annotator")


def test_strict_refuses_a_broken_file_whole_and_changes_nothing(task_file, tmp_path, capsys):
    existing = TaskFactory(task_id="0", number=0, intent="unchanged intent")
    data = json.loads(task_file.read_text())
    del data[17]["eval"]["eval_types"]
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps(data))

    with pytest.raises(TaskConfigError):
        import_task_file(broken, strict=True)
    with pytest.raises(CommandError, match="refused"):
        call_command("import_tasks", str(broken), "--strict")

    assert "broken.json: 1 entry not read as written (refused by --strict)" in capsys.readouterr().err
    assert list(Task.objects.all()) == [existing]
    existing.refresh_from_db()
    assert existing.intent == "unchanged intent"


def test_a_broken_entry_is_skipped_and_named_while_the_rest_import(task_file, tmp_path, capsys):
    data = json.loads(task_file.read_text())
    data[17]["sites"] = 7
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps(data))

    call_command("import_tasks", str(broken))

    out = capsys.readouterr().out
    assert "broken.json: 811 webarena tasks (811 created" in out
    assert "broken.json: 1 entry skipped, the rest imported:\n  task 17 (entry 18): field 'sites'" in out
    assert Task.objects.count() == 811 and not Task.objects.filter(task_id="17").exists()


def test_command_reads_folders_of_per_task_configs(tmp_path, task_file):
    data = json.loads(task_file.read_text())
    for raw in data[:3]:
        (tmp_path / f"{raw['task_id']}.json").write_text(json.dumps(raw))
    call_command("import_tasks", str(tmp_path))
    assert sorted(Task.objects.values_list("number", flat=True)) == [0, 1, 2]
