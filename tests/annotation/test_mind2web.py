"""Mind2Web human demonstrations as structured gold of `mind2web` tasks created from the file."""

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.urls import reverse
from rest_framework.test import APIClient

from annotation.formats import read_gold_bytes, read_gold_file
from annotation.gold_records import GoldFormatError
from annotation.mind2web import task_id_of
from annotation.models import GoldStep, GoldTrajectory
from trajectories.models import Task

MIND2WEB = "more-benchmarks/mind2web-actions.excerpt.json"


@pytest.fixture
def actions_file(shared_data):
    return shared_data / MIND2WEB


def test_each_entry_is_a_task_and_a_gold_trajectory_of_structured_steps(actions_file):
    parsed = read_gold_file(actions_file)
    assert parsed.format == "mind2web"
    assert [task.intent[:30] for task in parsed.tasks] == [
        "Check for pickup restaurant av", "Book a winery tour in Napa Val", "Sign Allan Smith for email off"]
    assert [task.sites for task in parsed.tasks] == [["exploretock"], ["exploretock"], ["enterprise"]]
    assert [len(block.steps) for block in parsed.blocks] == [11, 19, 7]
    first = parsed.blocks[0].steps
    assert (first[0].action_type, first[0].element_role, first[0].element_name, first[0].value) == (
        "select", "combobox", "Reservation type", "Pickup")
    assert first[0].text == "Select the 'Reservation type' combobox and choose 'Pickup'"
    assert (first[1].action_type, first[1].element_role, first[1].element_name) == ("click", "svg", "")
    assert (first[2].action_type, first[2].value, first[2].text) == (
        "type", "Boston", "Type 'Boston' into the 'Find a location' searchbox")
    assert {block.benchmark for block in parsed.blocks} == {"mind2web"}
    assert [block.task_id for block in parsed.blocks] == [task.task_id for task in parsed.tasks]


def test_enter_and_hover_and_an_annotation_id():
    document = [{"website": "site", "task": "Search", "annotation_id": "a-1",
                 "actions": [["HOVER", "[link]", "Menu"], ["ENTER", "[textbox]", "Search"]]}]
    parsed = read_gold_bytes(json.dumps(document).encode(), "json", name="m.json")
    hover, enter = parsed.blocks[0].steps
    assert (hover.action_type, hover.element_role, hover.element_name) == ("hover", "link", "Menu")
    assert (enter.action_type, enter.value, enter.text) == ("press", "Enter", "Press Enter")
    assert parsed.tasks[0].task_id == "a-1"


def test_task_ids_without_annotation_id_are_stable_digests():
    entry = {"website": "enterprise", "task": "Sign up"}
    assert task_id_of(entry) == task_id_of(dict(entry)) != task_id_of({"website": "enterprise", "task": "Sign in"})


def test_bad_entries_name_the_file_entry_and_field(actions_file):
    document = json.loads(actions_file.read_text(encoding="utf-8"))
    document[1]["actions"][3] = ["DRAG", "[span]", "Napa Valley"]
    document[2]["actions"][1][1] = "textbox"
    document[2]["actions"][2] = ["TYPE", "[textbox]", "Last Name (required)"]
    with pytest.raises(GoldFormatError) as caught:
        read_gold_bytes(json.dumps(document).encode(), "json", name="m2w.json")
    message = str(caught.value)
    assert message.startswith("m2w.json: entry 2: field 'actions[3][0]': unknown operation 'DRAG'")
    assert "entry 3: field 'actions[1][1]': expected the element's tag in brackets" in message
    assert "entry 3: field 'actions[2][0]': TYPE needs its value" in message


@pytest.mark.django_db
def test_the_command_creates_tasks_and_gold_and_a_second_import_changes_nothing(actions_file, capsys):
    call_command("import_gold", str(actions_file), "--annotator", "mind2web", "--create-annotator")
    steps = list(GoldStep.objects.order_by("pk").values_list("pk", "text", "action_type", "element_role", "value"))
    call_command("import_gold", str(actions_file), "--annotator", "mind2web", "--create-annotator")
    out = capsys.readouterr().out
    assert "3 tasks, 3 gold trajectories, 37 steps (3 created" in out
    assert "mind2web tasks of the file: 3 created" in out and "mind2web tasks of the file: 0 created, 0 updated, 3 unchanged" in out
    assert list(GoldStep.objects.order_by("pk").values_list("pk", "text", "action_type", "element_role", "value")) == steps
    assert Task.objects.filter(benchmark="mind2web").count() == 3
    task = Task.objects.get(benchmark="mind2web", intent__startswith="Sign Allan Smith")
    assert task.sites == ["enterprise"]
    assert GoldTrajectory.objects.get(task=task).steps.count() == 7


@pytest.mark.django_db
def test_a_refused_file_stores_nothing(tmp_path, actions_file):
    document = json.loads(actions_file.read_text(encoding="utf-8"))
    document[2]["website"] = ""
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps(document))
    with pytest.raises(CommandError):
        call_command("import_gold", str(broken), "--annotator", "mind2web", "--create-annotator")
    assert not Task.objects.filter(benchmark="mind2web").exists() and not GoldTrajectory.objects.exists()


@pytest.mark.django_db
def test_web_upload_and_api(client, reviewer, actions_file):
    client.force_login(reviewer)
    upload = SimpleUploadedFile(actions_file.name, actions_file.read_bytes())
    page = client.post(reverse("annotation:import"), {"file": upload, "status": "submitted", "benchmark": "webarena"})
    assert b"3 tasks" in page.content and b"37 steps (3 created" in page.content
    api = APIClient()
    api.force_authenticate(reviewer)
    body = api.post(reverse("api-gold-import"), {"file": actions_file.open("rb"), "status": "submitted"},
                    format="multipart").json()
    assert (body["benchmark"], body["unchanged"], body["defined_tasks"]["unchanged"]) == ("mind2web", 3, 3)
    bad = SimpleUploadedFile("bad.json", b'[{"website": "w", "task": "t", "actions": [["CLICK", "span", ""]]}]')
    refused = api.post(reverse("api-gold-import"), {"file": bad}, format="multipart")
    assert refused.status_code == 400 and "bad.json: entry 1: field 'actions[0][1]'" in refused.json()["detail"]


@pytest.mark.django_db
def test_api_gold_import_needs_the_reviewer_role(annotator, actions_file):
    api = APIClient()
    api.force_authenticate(annotator)
    assert api.post(reverse("api-gold-import"), {"file": actions_file.open("rb")}, format="multipart").status_code == 403
