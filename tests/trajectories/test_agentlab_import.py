"""An AgentLab study folder (shared/data/agent-outputs/browsergym-agentlab) through every way in."""

import csv
import gzip
import io
import json
import shutil
import zipfile

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.urls import reverse
from rest_framework.test import APIClient

from accounts.services import create_api_token
from tests.factories import UserFactory
from trajectories.models import AgentRun, Task, TaskResult, Trajectory

pytestmark = pytest.mark.django_db

DIALOG = "2025-01-22_11-03-29_GenericAgent-gpt-4o-mini_on_miniwob.click-dialog_28"
CHECKBOXES = "2025-01-22_11-03-29_GenericAgent-gpt-4o-mini_on_miniwob.click-checkboxes_7"
COUNTS = {"imported": 3, "unchanged": 0, "replaced": 0, "failed": 0, "skipped": 13}
EPISODE_FILE = "part of a BrowserGym episode folder: read with its summary_info.json"


@pytest.fixture
def study(shared_data):
    return shared_data / "agent-outputs" / "browsergym-agentlab"


def _entries(report: dict) -> dict[str, tuple[str, str]]:
    return {entry["file"]: (entry["status"], entry["reason"]) for entry in report["files"]}


def _zipped(folder, extra: dict[str, bytes] | None = None) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                archive.write(path, f"study/{path.relative_to(folder).as_posix()}")
        for name, data in (extra or {}).items():
            archive.writestr(f"study/{name}", data)
    return buffer.getvalue()


def _assert_study_stored(run: AgentRun):
    trajectories = {t.task.task_id: t for t in Trajectory.objects.filter(run=run).select_related("task")}
    assert set(trajectories) == {"click-dialog_28", "click-checkboxes_7"}
    dialog, checkboxes = trajectories["click-dialog_28"], trajectories["click-checkboxes_7"]
    assert {t.task.benchmark for t in trajectories.values()} == {"miniwob"}
    assert dialog.task.intent == 'Close the dialog box by clicking the "x".'
    assert checkboxes.task.intent == "Select Neb and click Submit."
    # cum_reward 1.0 in both summary_info.json files; no send_msg_to_user, so no final answer.
    assert [(t.success, t.final_answer, t.outcome_status) for t in (dialog, checkboxes)] == [
        (True, None, "no_stop"), (True, None, "no_stop")]
    assert [(s.index, s.action, s.action_type, s.element_id, s.element_label)
            for s in checkboxes.steps.order_by("index")] == [
        (1, "click('27')", "click", "27", "checkbox 'Neb', clickable, visible, checked='false'"),
        (2, "click('33')", "click", "33", "button 'Submit', clickable, visible")]
    # result_df_trial_1_of_3.csv: four episodes, all with cum_reward 1.0; the two whose folders are not
    # in the study excerpt (seeds 20 and 14) are kept as verdicts without trajectory.
    assert sorted(TaskResult.objects.filter(run=run).values_list("task__task_id", "success")) == [
        ("click-checkboxes_20", True), ("click-dialog_14", True)]
    [step] = dialog.steps.all()
    assert step.reasoning.startswith('The dialog box is currently open, and the "Close" button is focused.')
    assert step.observation.startswith("RootWebArea 'Click Dialog Task'")
    assert (run.agent, run.model) == ("GenericAgent-gpt-4o-mini", "gpt-4o-mini")


def test_the_study_folder_imports_through_the_command_then_changes_nothing(study, capsys):
    call_command("import_trajectories", str(study), "--run", "agentlab", "--json", verbosity=0)
    report = json.loads(capsys.readouterr().out)
    assert report["ok"] is True and report["counts"] == COUNTS
    entries = _entries(report)
    assert entries[f"browsergym-agentlab/{DIALOG}/summary_info.json"] == ("imported", "")
    for name in ("exp_args.pkl", "goal_object.pkl.gz", "step_0.pkl.gz", "step_1.pkl.gz", "package_versions.txt"):
        assert entries[f"browsergym-agentlab/{DIALOG}/{name}"] == ("skipped", EPISODE_FILE)
    assert entries[f"browsergym-agentlab/{CHECKBOXES}/step_2.pkl.gz"] == ("skipped", EPISODE_FILE)
    assert entries["browsergym-agentlab/summary_df_trial_1_of_3.csv"][1].startswith("an AgentLab study's summary")
    assert entries["browsergym-agentlab/error_report_trial_1_of_3.md"] == (
        "skipped", "an AgentLab study's error report: not read")
    notes = {entry["file"].rsplit("/", 1)[-1] if entry["format"] == "agentlab_study_results" else entry["task_id"]:
             entry["notes"] for entry in report["files"] if entry["format"]}
    assert notes["click-dialog_28"] == ["task miniwob/click-dialog_28 created from this file: the platform holds no task list of miniwob"]
    assert notes["result_df_trial_1_of_3.csv"] == [
        "4 episodes, 2 of them read from their folders in this import",
        "2 verdicts of episodes without their folder kept for the run page; 0 trajectories updated"]
    _assert_study_stored(AgentRun.objects.get(name="agentlab"))

    call_command("import_trajectories", str(study), "--run", "agentlab", "--json", verbosity=0)
    again = json.loads(capsys.readouterr().out)
    assert again["counts"] == {**COUNTS, "imported": 0, "unchanged": 3}
    assert Task.objects.filter(benchmark="miniwob").count() == 4


def test_the_study_results_alone_keep_every_episodes_verdict_then_an_episode_names_its_task(study, capsys):
    call_command("import_trajectories", str(study / "result_df_trial_1_of_3.csv"), "--run", "results-only",
                 "--json", verbosity=0)
    report = json.loads(capsys.readouterr().out)
    assert report["counts"] == {"imported": 1, "unchanged": 0, "replaced": 0, "failed": 0, "skipped": 0}
    run = AgentRun.objects.get(name="results-only")
    assert sorted(TaskResult.objects.filter(run=run).values_list("task__task_id", "success")) == [
        ("click-checkboxes_20", True), ("click-checkboxes_7", True), ("click-dialog_14", True),
        ("click-dialog_28", True)]
    # The result_df does not say what the task asks; the episode's folder does, once imported.
    assert Task.objects.get(task_id="click-dialog_28").intent == ""
    call_command("import_trajectories", str(study / DIALOG), "--run", "results-only", "--json", verbosity=0)
    capsys.readouterr()
    assert Task.objects.get(task_id="click-dialog_28").intent == 'Close the dialog box by clicking the "x".'
    assert Trajectory.objects.get(run=run).success is True


def test_a_second_run_attaches_to_the_tasks_the_first_created(study, capsys):
    for name in ("first", "second"):
        call_command("import_trajectories", str(study), "--run", name, "--json", verbosity=0)
        assert json.loads(capsys.readouterr().out)["counts"] == COUNTS
    assert Task.objects.filter(benchmark="miniwob").count() == 4
    assert Trajectory.objects.filter(task__benchmark="miniwob").count() == 4


def test_the_study_zipped_through_the_api(study):
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {create_api_token(UserFactory())[1]}")

    def post():
        response = api.post(reverse("api-run-import"), {"run": "zipped", "files": [
            SimpleUploadedFile("study.zip", _zipped(study), content_type="application/zip")]}, format="multipart")
        assert response.status_code == 200
        return response.json()

    body = post()
    assert body["ok"] is True and body["counts"] == COUNTS
    assert _entries(body)[f"study.zip/study/{DIALOG}/exp_args.pkl"] == ("skipped", EPISODE_FILE)
    _assert_study_stored(AgentRun.objects.get(name="zipped"))
    assert post()["counts"] == {**COUNTS, "imported": 0, "unchanged": 3}


def test_the_study_through_the_upload_page(study, client, django_capture_on_commit_callbacks):
    client.force_login(UserFactory())
    with django_capture_on_commit_callbacks(execute=True):
        client.post(reverse("trajectories:upload"), {"run": "web", "paradigm": "step_by_step", "files": [
            SimpleUploadedFile("study.zip", _zipped(study), content_type="application/zip")]})
    job = AgentRun.objects.get(name="web").import_jobs.get()
    assert job.status == "done", job.error
    assert job.report["ok"] is True and job.report["counts"] == COUNTS
    _assert_study_stored(AgentRun.objects.get(name="web"))


# The dialog episode's first step, or its goal object (whose goal the first step already states, so its content
# is not needed), replaced by a pickle that would run a shell command.
@pytest.mark.parametrize("pickle_name", ["step_0.pkl.gz", "goal_object.pkl.gz"])
def test_a_hostile_pickle_in_a_zipped_episode_fails_its_episode_and_runs_nothing(study, tmp_path, capsys,
                                                                                 pickle_name):
    marker = tmp_path / "ran"
    payload = (b"\x80\x04\x8c\x02os\x8c\x06system\x93\x8c" + bytes([len(f"touch {marker}")])
               + f"touch {marker}".encode() + b"\x85R.")
    archive = tmp_path / "study.zip"
    with zipfile.ZipFile(io.BytesIO(_zipped(study))) as original, zipfile.ZipFile(archive, "w") as hostile:
        for info in original.infolist():
            data = original.read(info)
            if info.filename == f"study/{DIALOG}/{pickle_name}":
                data = gzip.compress(payload)
            hostile.writestr(info, data)

    with pytest.raises(CommandError, match="1 of 16 entries failed"):
        call_command("import_trajectories", str(archive), "--run", "hostile", "--json", verbosity=0)
    report = json.loads(capsys.readouterr().out)
    failed = [entry for entry in report["files"] if entry["status"] == "failed"]
    assert [(entry["file"], entry["reason"]) for entry in failed] == [
        (f"study.zip/study/{DIALOG}/summary_info.json",
         f"{pickle_name}: refused: the pickle calls os.system, which is not a BrowserGym / AgentLab class")]
    assert not marker.exists()
    run = AgentRun.objects.get(name="hostile")
    assert list(Trajectory.objects.filter(run=run).values_list("task__task_id", flat=True)) == ["click-checkboxes_7"]
    # The failed episode's task was created inside its file's transaction: rolled back with it.
    assert not Task.objects.filter(task_id="click-dialog_28").exists()


def test_a_result_df_contradicting_an_episode_folder_is_named_and_the_folders_verdict_kept(study, tmp_path, capsys):
    copy = tmp_path / "study"
    shutil.copytree(study, copy)
    results = copy / "result_df_trial_1_of_3.csv"
    with results.open(newline="") as handle:
        reader = csv.DictReader(handle)
        columns, rows = reader.fieldnames, list(reader)
    rows[2]["cum_reward"] = "0.0"  # click-dialog_28, whose folder says 1.0
    with results.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, columns)
        writer.writeheader()
        writer.writerows(rows)
    call_command("import_trajectories", str(copy), "--run", "contradicted", "--json", verbosity=0)
    report = json.loads(capsys.readouterr().out)
    [entry] = [item for item in report["files"] if item["format"] == "agentlab_study_results"]
    assert entry["notes"][-1] == ("line 4: task click-dialog_28: the summary says FAIL, its trajectory PASS "
                                  "(BrowserGym reward): the trajectory's verdict is kept")
    run = AgentRun.objects.get(name="contradicted")
    assert Trajectory.objects.get(run=run, task__task_id="click-dialog_28").success is True
    assert not TaskResult.objects.filter(run=run, task__task_id="click-dialog_28").exists()


def test_an_episode_without_a_reward_takes_up_the_result_dfs_verdict(study, tmp_path, capsys):
    copy = tmp_path / "study"
    shutil.copytree(study, copy)
    summary = copy / DIALOG / "summary_info.json"
    document = json.loads(summary.read_text())
    summary.write_text(json.dumps({**document, "cum_reward": None}))
    call_command("import_trajectories", str(copy), "--run", "unrewarded", "--json", verbosity=0)
    report = json.loads(capsys.readouterr().out)
    [entry] = [item for item in report["files"] if item["format"] == "agentlab_study_results"]
    assert entry["notes"][-1] == "2 verdicts of episodes without their folder kept for the run page; " \
                                 "1 trajectories updated"
    dialog = Trajectory.objects.get(run__name="unrewarded", task__task_id="click-dialog_28")
    assert (dialog.success, dialog.success_source) == (True, "study/result_df_trial_1_of_3.csv")
