"""Online-Mind2Web result folders and Agent-E records imported whole, through the command and the API."""

import io
import json
import zipfile
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.urls import reverse
from rest_framework.test import APIClient

from accounts.services import create_api_token
from tests.factories import UserFactory
from tests.trajectories.renders import png
from trajectories.models import AgentRun, Task, Trajectory
from trajectories.services.ingest import import_paths
from trajectories.services.tasks import import_task_file

pytestmark = pytest.mark.django_db

NOTHING = {"imported": 0, "unchanged": 0, "replaced": 0, "failed": 0, "skipped": 0}
QATAR = "005be9dd91c95669d6ddde9ae667125c"
ADOPTAPET = "0a54069a0ef542e571d1fee7f39c93d5"
UPDATED = "0a0fa834ce41b5297c6474293383759d_110325"
OFFICIAL = "fb7b4f784cfde003e2548fdf4e8d6b4f"
TRADER_JOES = "b7258ee05d75e6c50673a59914db412e"


@pytest.fixture
def om2w(shared_data):
    return shared_data / "agent-outputs" / "online-mind2web"


@pytest.fixture
def task_list(om2w):
    import_task_file(om2w / "Online_Mind2Web.excerpt.json")


def _import(path: Path, run: str, capsys) -> dict:
    call_command("import_trajectories", str(path), "--run", run, "--json", verbosity=0)
    return json.loads(capsys.readouterr().out)


def _counts(**counts) -> dict:
    return {**NOTHING, **counts}


def _by_task(run_name: str) -> dict[str, Trajectory]:
    return {t.task.task_id: t for t in Trajectory.objects.filter(run__name=run_name).select_related("task")}


def test_the_task_list_imports_through_import_tasks(om2w, capsys):
    call_command("import_tasks", str(om2w / "Online_Mind2Web.excerpt.json"))
    assert "30 online-mind2web tasks (30 created, 0 updated, 0 unchanged" in capsys.readouterr().out
    tasks = Task.objects.filter(benchmark="online-mind2web")
    assert tasks.count() == 30
    updated = tasks.get(task_id="b7258ee05d75e6c50673a59914db412e_110325")
    assert updated.start_url == "https://www.traderjoes.com/" and updated.reference_length == 6


def test_an_abp_run_folder_imports_and_reimports_unchanged(task_list, om2w, capsys):
    report = _import(om2w / "abp_run", "abp", capsys)
    assert report["ok"] is True and report["counts"] == _counts(imported=15)
    created = [entry for entry in report["files"] if any("created from this file" in note for note in entry["notes"])]
    # 3 of the 15 tasks are in the excerpt of the task list; the others come with their text.
    assert len(created) == 12
    trajectories = _by_task("abp")
    qatar = trajectories[QATAR]
    assert (qatar.step_count, qatar.outcome_status, qatar.success) == (10, "answered", None)
    assert qatar.final_answer.startswith("Based on the Qatar Airways baggage allowance page")
    steps = list(qatar.steps.order_by("index"))
    assert (steps[3].action, steps[3].action_type, steps[3].action_value) == ('Type "baggage allowance"', "type",
                                                                               "baggage allowance")
    assert steps[1].reasoning.startswith("The Qatar Airways homepage has loaded.")
    # What each step did, stored in its parts: the point clicked, the scroll's amount.
    click, scroll = steps[1], steps[7]
    assert (click.action, click.action_type, click.point_x, click.point_y, click.element_label) == (
        "Click at (963, 72)", "click", 963.0, 72.0, "")
    assert (scroll.action, scroll.action_value, scroll.delta_x, scroll.delta_y) == (
        "Scroll (delta_x=0, delta_y=550)", "down", 0.0, 550.0)
    assert trajectories["0b2623e9fa5cea997f76490bcbc5220f"].outcome_status == "early_stop"
    assert sum(t.step_count for t in trajectories.values()) == 304
    assert Task.objects.get(benchmark="online-mind2web", task_id=UPDATED).intent == (
        "What are the onboard activities of the cheapest cruise, departing from Los Angeles that lasts at least "
        "8 days?")

    again = _import(om2w / "abp_run", "abp", capsys)
    assert again["counts"] == _counts(unchanged=15)


def test_a_browser_use_cloud_folder_is_answers_with_judge_verdicts(om2w, capsys):
    report = _import(om2w / "browser_use_cloud", "browser-use-cloud", capsys)
    assert report["ok"] is True and report["counts"] == _counts(imported=15)
    trajectories = _by_task("browser-use-cloud")
    assert {t.step_count for t in trajectories.values()} == {0}
    assert trajectories[ADOPTAPET].final_answer.startswith("Successfully navigated to https://www.adoptapet.com/")
    assert _import(om2w / "browser_use_cloud", "browser-use-cloud", capsys)["counts"] == _counts(unchanged=15)


def test_a_result_whose_text_differs_from_the_stored_task_says_so(om2w, tmp_path, capsys, task_list):
    folder = tmp_path / "run" / QATAR
    folder.mkdir(parents=True)
    document = json.loads((om2w / "abp_run" / QATAR / "result.json").read_text())
    document["task"] = "Find the baggage allowance for business class on Qatar Airways."
    (folder / "result.json").write_text(json.dumps(document))
    report = _import(tmp_path / "run", "changed", capsys)
    [entry] = report["files"]
    assert entry["status"] == "imported"
    assert entry["notes"] == [f"the file's intent differs from task online-mind2web/{QATAR}'s: "
                              "'Find the baggage allowance for business class on Qatar Airways.'"]


def test_the_whole_folder_into_one_run_accounts_for_every_file(task_list, om2w, capsys):
    report = _import(om2w, "om2w", capsys)
    assert report["ok"] is True
    assert report["counts"] == _counts(imported=16, skipped=18)
    entries = {entry["file"]: entry for entry in report["files"]}
    assert len(entries) == 34
    labels = entries["online-mind2web/human_label.excerpt.json"]
    assert labels["status"] == "skipped" and "import_verdicts" in labels["reason"]
    assert entries["online-mind2web/Online_Mind2Web.excerpt.json"]["reason"].endswith(
        "import it with manage.py import_tasks")
    judge = next(entry for name, entry in entries.items() if "WebJudge" in name)
    assert judge["status"] == "skipped" and judge["reason"].startswith("Online-Mind2Web WebJudge results")
    cloud = entries[f"online-mind2web/browser_use_cloud/{QATAR}/result.json"]
    assert cloud["status"] == "skipped"
    assert cloud["reason"] == (
        f"a second trajectory of task online-mind2web/{QATAR}, from other results in this upload "
        f"(browser_use_cloud): online-mind2web/abp_run/{QATAR}/result.json gave run 'om2w' its trajectory of "
        "this task, and a run holds one per task; import these results as a run of their own")
    assert entries["online-mind2web/official-example/fb7b4f784cfde003e2548fdf4e8d6b4f/result.json"]["status"] == (
        "imported")
    assert {t.source_name.split("/")[1] for t in _by_task("om2w").values()} == {"abp_run", "official-example"}

    again = _import(om2w, "om2w", capsys)
    assert again["ok"] is True and again["counts"] == _counts(unchanged=16, skipped=18)


def _zipped(folder: Path) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                archive.write(path, f"{folder.name}/{path.relative_to(folder).as_posix()}")
    return buffer.getvalue()


def test_zipped_folders_through_the_api(om2w, shared_data):
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {create_api_token(UserFactory())[1]}")

    def post(run: str, folder: Path) -> dict:
        response = api.post(reverse("api-run-import"), {"run": run, "files": [
            SimpleUploadedFile(f"{folder.name}.zip", _zipped(folder), content_type="application/zip")]},
            format="multipart")
        assert response.status_code == 200
        return response.json()

    body = post("api-abp", om2w / "abp_run")
    assert body["ok"] is True and body["counts"] == _counts(imported=15)
    assert post("api-abp", om2w / "abp_run")["counts"] == _counts(unchanged=15)
    body = post("api-agent-e", shared_data / "agent-outputs" / "agent-e")
    # The 15 records the two files' judges did not evaluate are the same trajectory in both.
    assert body["ok"] is True and body["counts"] == _counts(imported=30, unchanged=15, skipped=15)
    assert AgentRun.objects.get(name="api-agent-e").agent == "Agent-E"


@pytest.mark.parametrize("workers", [1, 2])
def test_screenshots_beside_a_result_are_stored_with_their_steps(om2w, tmp_path, capsys, settings, workers):
    """Read where the file is read: in this process, or in a worker of the parsing pool."""
    settings.INGEST_WORKERS = workers
    folder = tmp_path / "run" / QATAR
    (folder / "trajectory").mkdir(parents=True)
    (folder / "result.json").write_bytes((om2w / "abp_run" / QATAR / "result.json").read_bytes())
    (folder / "trajectory" / "0_full_screenshot.png").write_bytes(png())
    report = _import(tmp_path / "run", "shots", capsys)
    assert report["counts"] == _counts(imported=1)
    steps = list(_by_task("shots")[QATAR].steps.order_by("index"))
    assert steps[0].screenshot is not None and all(step.screenshot is None for step in steps[1:])


def test_agent_e_records_are_a_results_only_run_with_two_verdicts_each(shared_data, capsys):
    folder = shared_data / "agent-outputs" / "agent-e"
    report = _import(folder / "text_main_chat_eval_gpt4o.excerpt.json", "agent-e", capsys)
    assert report["ok"] is True and report["counts"] == _counts(imported=30)
    trajectories = _by_task("agent-e")
    first = trajectories["Allrecipes--0"]
    assert (first.task.benchmark, first.step_count, first.outcome_status, first.success) == (
        "webvoyager", 0, "answered", None)
    assert first.final_answer.startswith("Here is a recipe for Vegetarian Four Cheese Lasagna")
    assert first.task.intent.startswith("Provide a recipe for vegetarian lasagna with more than 100 reviews")
    assert AgentRun.objects.get(name="agent-e").agent == "Agent-E"
    assert _import(folder / "text_main_chat_eval_gpt4o.excerpt.json", "agent-e", capsys)["counts"] == (
        _counts(unchanged=30))

    # The folder holds the same run judged twice: where the second judge gave a verdict, its record is
    # not a second trajectory of the task; where neither judge did, the two records are the same trajectory.
    whole = _import(folder, "agent-e", capsys)
    assert whole["ok"] is True and whole["counts"] == _counts(unchanged=45, skipped=15)
    skipped = [entry for entry in whole["files"] if entry["status"] == "skipped"]
    assert {entry["file"] for entry in skipped} == {"agent-e/vision_final_eval_gpt4o.excerpt.json"}
    assert "from other results in this upload (vision_final_eval_gpt4o)" in skipped[0]["reason"]


def _result_folder(tmp_path, om2w, task_id: str, text: str) -> Path:
    folder = tmp_path / f"run-{len(list(tmp_path.iterdir()))}"
    (folder / task_id).mkdir(parents=True)
    document = {**json.loads((om2w / "official-example" / OFFICIAL / "result.json").read_text()),
                "task_id": task_id, "task": text}
    (folder / task_id / "result.json").write_text(json.dumps(document))
    return folder


def test_a_result_under_the_original_id_with_the_updated_text_is_the_updated_tasks(task_list, om2w, tmp_path,
                                                                                     capsys):
    updated = Task.objects.get(benchmark="online-mind2web", task_id=f"{TRADER_JOES}_110325")
    report = _import(_result_folder(tmp_path, om2w, TRADER_JOES, updated.intent), "versions", capsys)
    [entry] = report["files"]
    assert entry["status"] == "imported" and entry["notes"] == [
        f"task online-mind2web/{TRADER_JOES} is not imported: stored as a trajectory of its version "
        f"online-mind2web/{TRADER_JOES}_110325, whose text the file has"]
    assert not Task.objects.filter(benchmark="online-mind2web", task_id=TRADER_JOES).exists()

    # Once the original version is stored (here from a result with its own text), a result under its id
    # with the updated text is the original's, and the report names the version that has the text.
    original = ("Find the store location and hours of the closest Gamestop to zip code 90028 and set it as the home "
                "store on Gamestop.")
    _import(_result_folder(tmp_path, om2w, TRADER_JOES, original), "originals", capsys)
    report = _import(_result_folder(tmp_path, om2w, TRADER_JOES, updated.intent), "mixed", capsys)
    [entry] = report["files"]
    assert entry["task_id"] == TRADER_JOES and entry["notes"] == [
        f"the file's intent differs from task online-mind2web/{TRADER_JOES}'s: {updated.intent!r}",
        f"task online-mind2web/{TRADER_JOES}_110325, another version of this task, has the file's text: the "
        "result may belong to that version"]


def test_the_official_example_imports_as_a_run_of_one_task(task_list, om2w, capsys):
    report = _import(om2w / "official-example", "example", capsys)
    assert report["ok"] is True and report["counts"] == _counts(imported=1)
    [entry] = report["files"]
    assert (entry["task_id"], entry["notes"]) == (OFFICIAL, [])
    example = _by_task("example")[OFFICIAL]
    assert (example.step_count, example.outcome_status) == (4, "answered")
    assert [step.element_label for step in example.steps.order_by("index")][:2] == ['<div role="button">',
                                                                                     "<button>"]
