"""browser-use and WebVoyager sample folders (shared/data/agent-outputs) imported whole, through the
command, the API and the upload page, and imported again without change."""

import io
import json
import zipfile

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.urls import reverse
from rest_framework.test import APIClient

from accounts.services import create_api_token
from tests.factories import UserFactory
from trajectories.models import AgentRun, Task, TaskResult, Trajectory, Verdict
from trajectories.selectors import verdict_counts
from trajectories.services.tasks import import_task_file
from trajectories.verdict_agreement import HARNESS

pytestmark = pytest.mark.django_db

SUMMARY = "browser-use/webarena-infinity-gmail/results.json"
CONVERSATIONS = ("browser-use/webarena-infinity-gmail/task_e1/conversations/"
                 "conversation_0699e89f-bb03-7e85-8000-42ec65cd011b")


@pytest.fixture
def outputs(shared_data):
    return shared_data / "agent-outputs"


def _import(capsys, *paths, run="browser-use-run") -> dict:
    call_command("import_trajectories", *map(str, paths), "--run", run, "--json", verbosity=0)
    return json.loads(capsys.readouterr().out)


def _entries(report: dict) -> dict[str, tuple[str, str, str]]:
    return {entry["file"]: (entry["status"], entry["format"], entry["reason"]) for entry in report["files"]}


def _harness_count(run: AgentRun) -> tuple[int, int]:
    """(passed, judged) by the harness over the run's tasks, as the leaderboard counts them."""
    counts = [(passed, total) for _, source, _, passed, total in verdict_counts([run.pk]) if source == HARNESS]
    return tuple(map(sum, zip(*counts)))


def test_the_browser_use_samples_import_with_exit_0_and_again_unchanged(outputs, capsys):
    report = _import(capsys, outputs / "browser-use")
    assert report["ok"] is True
    # The run's results.json is read as the harness's verdicts of its 30 tasks: a file imported.
    assert report["counts"] == {"imported": 3, "unchanged": 0, "replaced": 0, "failed": 0, "skipped": 3}
    entries = _entries(report)
    assert entries[SUMMARY] == ("imported", "webarena_infinity_summary", "")
    [summary] = [entry for entry in report["files"] if entry["file"] == SUMMARY]
    assert summary["notes"] == ["30 tasks, 1 of them read from their folders in this import",
                                "29 verdicts of tasks without their folder kept for the run page; "
                                "0 trajectories updated"]
    assert entries["browser-use/legacy-2024-11/AgentHistoryList.json"][:2] == ("imported", "browser_use_history")
    assert entries["browser-use/webarena-infinity-gmail/task_e1/history.json"][:2] == (
        "imported", "browser_use_history")
    assert entries["browser-use/webarena-infinity-gmail/task_e1/result.json"] == (
        "skipped", "webarena_infinity_result", "read with history.json")
    assert entries[f"{CONVERSATIONS}_1.txt"][0] == "skipped"

    run = AgentRun.objects.get(name="browser-use-run")
    assert run.agent == "browser-use"
    by_task = {(t.task.benchmark, t.task.task_id): t for t in Trajectory.objects.filter(run=run).select_related("task")}
    gmail = by_task[("webarena-infinity", "task_e1")]
    assert (gmail.step_count, gmail.success, gmail.outcome_status) == (3, True, "answered")
    assert gmail.final_answer == "Successfully starred the email from Sarah Chen with the subject " \
                                 "'Q1 Product Roadmap Review'."
    assert [s.screenshot_id is not None for s in gmail.steps.order_by("index")] == [False, True, True]
    legacy = by_task[("browser-use", "legacy-2024-11")]
    assert (legacy.step_count, legacy.success, legacy.outcome_status) == (4, None, "answered")
    assert [(s.action_type, s.element_id) for s in legacy.steps.order_by("index")] == [
        ("goto", ""), ("click", "40"), ("click", "97"), ("stop", "")]
    # Benchmarks without a task file get their tasks from the trajectories.
    assert Task.objects.get(benchmark="webarena-infinity", task_id="task_e1").intent == (
        "Star the email with the subject 'Q1 Product Roadmap Review' from Sarah Chen.")

    # As the harness says (results.json: 15 of 30 passed), not 1 of the 1 task whose folder is here; task_e1's
    # verdict is its trajectory's (result.json), not a second one of the summary's.
    assert _harness_count(run) == (15, 30)
    assert TaskResult.objects.filter(run=run).count() == 29
    assert not TaskResult.objects.filter(run=run, task__task_id="task_e1").exists()
    assert (run.model, Task.objects.get(benchmark="webarena-infinity", task_id="task_h1").intent) == (
        "gemini", json.loads((outputs / SUMMARY).read_text())["tasks"][10]["instruction"])

    again = _import(capsys, outputs / "browser-use")
    assert again["counts"] == {"imported": 0, "unchanged": 3, "replaced": 0, "failed": 0, "skipped": 3}
    assert Task.objects.filter(benchmark__in=("browser-use", "webarena-infinity")).count() == 31
    assert _harness_count(run) == (15, 30)


def test_the_webvoyager_sample_imports_with_exit_0_and_again_unchanged(outputs, capsys):
    report = _import(capsys, outputs / "webvoyager", run="webvoyager-run")
    assert report["ok"] is True
    assert report["counts"] == {"imported": 1, "unchanged": 0, "replaced": 0, "failed": 0, "skipped": 0}
    [trajectory] = Trajectory.objects.filter(run__name="webvoyager-run").select_related("task")
    assert (trajectory.task.benchmark, trajectory.task.task_id, trajectory.step_count) == ("webvoyager", "GitHub--0", 5)
    assert trajectory.final_answer == "resource-watch/resource-watch with 63 stars"
    assert trajectory.steps.filter(screenshot__isnull=False).count() == 5

    again = _import(capsys, outputs / "webvoyager", run="webvoyager-run")
    assert again["counts"] == {"imported": 0, "unchanged": 1, "replaced": 0, "failed": 0, "skipped": 0}


def _zipped(*folders) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for folder in folders:
            for path in sorted(folder.rglob("*")):
                if path.is_file():
                    archive.write(path, f"{folder.name}/{path.relative_to(folder).as_posix()}")
    return buffer.getvalue()


def test_a_zip_of_the_samples_through_the_api(outputs):
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {create_api_token(UserFactory())[1]}")
    upload = _zipped(outputs / "browser-use", outputs / "webvoyager")

    def post() -> dict:
        response = api.post(reverse("api-run-import"), {"run": "zipped", "files": [
            SimpleUploadedFile("runs.zip", upload, content_type="application/zip")]}, format="multipart")
        assert response.status_code == 200
        return response.json()

    body = post()
    assert body["ok"] is True
    assert body["counts"] == {"imported": 4, "unchanged": 0, "replaced": 0, "failed": 0, "skipped": 3}
    assert _entries(body)["runs.zip/browser-use/webarena-infinity-gmail/task_e1/result.json"][2] == \
        "read with history.json"
    trajectories = Trajectory.objects.filter(run__name="zipped")
    assert {t.task.task_id: t.steps.filter(screenshot__isnull=False).count() for t in trajectories} == {
        "legacy-2024-11": 4, "task_e1": 2, "GitHub--0": 5}
    assert post()["counts"] == {"imported": 0, "unchanged": 4, "replaced": 0, "failed": 0, "skipped": 3}
    assert _harness_count(AgentRun.objects.get(name="zipped")) == (15, 30)  # the other histories carry none


def test_a_zip_of_the_samples_through_the_upload_page(outputs, client, django_capture_on_commit_callbacks):
    client.force_login(UserFactory())
    with django_capture_on_commit_callbacks(execute=True):
        client.post(reverse("trajectories:upload"), {"run": "web", "paradigm": "step_by_step", "files": [
            SimpleUploadedFile("runs.zip", _zipped(outputs / "browser-use", outputs / "webvoyager"),
                               content_type="application/zip")]})
    job = AgentRun.objects.get(name="web").import_jobs.get()
    assert job.status == "done", job.error
    assert job.report["ok"] is True and job.report["counts"]["imported"] == 4, job.report["files"]
    page = client.get(reverse("trajectories:import-job", args=[job.pk])).content.decode()
    assert '<span id="job-failures">nothing failed</span>' in page and "read with history.json" in page


def test_a_history_whose_screenshots_are_missing_imports_with_a_note(outputs, tmp_path, capsys):
    folder = tmp_path / "run" / "task_e1"
    folder.mkdir(parents=True)
    for name in ("history.json", "result.json"):
        sample = outputs / "browser-use" / "webarena-infinity-gmail" / "task_e1" / name
        (folder / name).write_bytes(sample.read_bytes())
    report = _import(capsys, tmp_path / "run", run="no-screenshots")
    assert report["ok"] is True and report["counts"]["imported"] == 1
    [history] = [entry for entry in report["files"] if entry["file"].endswith("history.json")]
    assert [note for note in history["notes"] if "is not in the upload" in note] == [
        "history[1]: screenshot 'step_1.png' is not in the upload (looked for beside the history and in its "
        "screenshots folder)",
        "history[2]: screenshot 'step_2.png' is not in the upload (looked for beside the history and in its "
        "screenshots folder)"]


def test_the_trajectory_pages_show_the_steps_escaped(outputs, capsys, client):
    _import(capsys, outputs / "browser-use", outputs / "webvoyager", run="pages")
    client.force_login(UserFactory())
    pages = {t.task.task_id: client.get(reverse("metrics:trajectory-detail", args=[t.pk]))
             for t in Trajectory.objects.filter(run__name="pages").select_related("task")}
    assert {task_id: page.status_code for task_id, page in pages.items()} == {
        "legacy-2024-11": 200, "task_e1": 200, "GitHub--0": 200}
    legacy = pages["legacy-2024-11"].content.decode()
    # The clicked element's label is the page's own HTML: shown as text, never as markup.
    assert "&lt;button id=&quot;L2AGLb&quot;" in legacy
    assert '<button id="L2AGLb"' not in legacy
    assert "resource-watch/resource-watch with 63 stars" in pages["GitHub--0"].content.decode()


def test_a_verifier_result_without_its_history_is_a_results_only_trajectory(outputs, tmp_path, capsys):
    folder = tmp_path / "run" / "task_e1"
    folder.mkdir(parents=True)
    sample = outputs / "browser-use" / "webarena-infinity-gmail" / "task_e1" / "result.json"
    (folder / "result.json").write_bytes(sample.read_bytes())
    report = _import(capsys, tmp_path / "run", run="results-only")
    assert report["ok"] is True and report["counts"]["imported"] == 1
    [trajectory] = Trajectory.objects.filter(run__name="results-only")
    assert (trajectory.step_count, trajectory.success, trajectory.outcome_status) == (0, True, "answered")
    assert trajectory.final_answer.startswith("Successfully starred the email")


def test_tasks_are_not_made_up_for_a_benchmark_whose_task_file_is_imported(outputs, tmp_path, capsys):
    """Once a benchmark's tasks come from its task file, a trajectory of a task it does not list
    fails with the reason instead of adding a task of its own."""

    tasks = tmp_path / "webvoyager-tasks.json"
    template = json.loads((outputs.parent / "webarena" / "test.raw.json").read_text())[0]
    tasks.write_text(json.dumps([{**template, "task_id": 1, "intent": "Another task"}]))
    import_task_file(tasks, benchmark="webvoyager")
    with pytest.raises(CommandError):
        _import(capsys, outputs / "webvoyager", run="listed")
    [entry] = json.loads(capsys.readouterr().out)["files"]
    assert entry["status"] == "failed" and "task webvoyager/GitHub--0 is not imported" in entry["reason"]
    assert not Task.objects.filter(benchmark="webvoyager", task_id="GitHub--0").exists()


def _infinity_run(outputs, tmp_path, edit=None):
    """The WebArena-Infinity sample folder, its results.json changed by `edit(document)`."""
    folder = tmp_path / "gmail"
    sample = outputs / "browser-use" / "webarena-infinity-gmail"
    for path in sample.rglob("*"):
        if path.is_file():
            (folder / path.relative_to(sample)).parent.mkdir(parents=True, exist_ok=True)
            (folder / path.relative_to(sample)).write_bytes(path.read_bytes())
    if edit is not None:
        document = json.loads((folder / "results.json").read_text())
        edit(document)
        (folder / "results.json").write_text(json.dumps(document))
    return folder


def test_a_summary_that_contradicts_a_task_folder_leaves_the_folders_verdict_and_says_so(outputs, tmp_path, capsys):
    def fail_e1(document):
        document["tasks"][0]["passed"] = False

    report = _import(capsys, _infinity_run(outputs, tmp_path, fail_e1), run="contradicted")
    assert report["ok"] is True
    [summary] = [entry for entry in report["files"] if entry["format"] == "webarena_infinity_summary"]
    assert summary["notes"][-1] == ("tasks[0]: task task_e1: the summary says FAIL, its trajectory PASS "
                                    "(WebArena-Infinity verifier): the trajectory's verdict is kept")
    run = AgentRun.objects.get(name="contradicted")
    assert Trajectory.objects.get(run=run).success is True
    assert _harness_count(run) == (15, 30)


def test_an_unreadable_task_of_the_summary_is_named_and_the_others_are_kept(outputs, tmp_path, capsys):
    def spoil(document):
        document["tasks"][3]["passed"] = "yes"
        document["tasks"][4] = ["not", "a", "task"]
        document["tasks"][5]["task_id"] = "t" * 300

    report = _import(capsys, _infinity_run(outputs, tmp_path, spoil), run="spoilt")
    assert report["ok"] is True
    [summary] = [entry for entry in report["files"] if entry["format"] == "webarena_infinity_summary"]
    assert summary["status"] == "imported"
    assert summary["notes"][:4] == [
        "27 tasks, 1 of them read from their folders in this import",
        "tasks[3].passed: expected true or false, got 'yes'",
        'tasks[4]: expected a task object, got ["not", "a", "task"]',
        f"tasks[5].task_id: task id longer than 255 characters: {'t' * 40}..."]
    assert TaskResult.objects.filter(run__name="spoilt").count() == 26


def test_the_summary_alone_is_a_results_only_run_of_its_benchmark(outputs, capsys):
    report = _import(capsys, outputs / SUMMARY, run="summary-only")
    assert report["ok"] is True and report["counts"]["imported"] == 1
    run = AgentRun.objects.get(name="summary-only")
    assert (run.benchmark, run.agent, run.model) == ("webarena-infinity", "browser-use", "gemini")
    assert _harness_count(run) == (15, 30)
    assert not Trajectory.objects.filter(run=run).exists()


def test_the_judges_failure_reason_and_flags_are_kept_shown_escaped_and_served(outputs, tmp_path, capsys, client):
    """browser-use's judgement: its failure reason as the note of its verdict, `impossible_task` as not
    executable, `reached_captcha`; on the trajectory page (escaped) and in the API."""
    folder = _infinity_run(outputs, tmp_path)
    history = json.loads((folder / "task_e1" / "history.json").read_text())
    judgement = history["history"][-1]["result"][0]["judgement"]
    judgement.update(verdict=False, failure_reason="Blocked by <b>a CAPTCHA</b> & a login wall.",
                     impossible_task=True, reached_captcha=True)
    (folder / "task_e1" / "history.json").write_text(json.dumps(history))
    _import(capsys, folder, run="judged")
    run = AgentRun.objects.get(name="judged")
    [verdict] = Verdict.objects.filter(run=run, source__name="browser-use judge")
    assert (verdict.success, verdict.note, verdict.labels) == (
        False, "Blocked by <b>a CAPTCHA</b> & a login wall.", {"not_executable": "yes", "reached_captcha": "yes"})
    assert verdict.explanation.startswith("The agent successfully navigated")

    user = UserFactory()
    client.force_login(user)
    page = client.get(reverse("metrics:trajectory-detail", args=[verdict.trajectory_id])).content.decode()
    assert "Blocked by &lt;b&gt;a CAPTCHA&lt;/b&gt; &amp; a login wall." in page and "<b>a CAPTCHA" not in page
    assert '<span data-label="not executable">not executable: yes</span>' in page
    assert '<span data-label="reached a CAPTCHA">reached a CAPTCHA: yes</span>' in page

    api = APIClient()
    api.force_authenticate(user)
    detail = api.get(reverse("api-trajectory-detail", args=[verdict.trajectory_id])).json()
    [judge] = [item for item in detail["verdicts"] if item["name"] == "browser-use judge"]
    assert (judge["note"], judge["labels"]) == (verdict.note, verdict.labels)
    tasks = api.get(reverse("api-run-verdicts", args=[run.pk])).json()["tasks"]
    [named] = [source for task in tasks if task["task_id"] == "task_e1" for source in task["sources"]
               if source["name"] == "browser-use judge"]
    assert (named["success"], named["note"], named["labels"]["not_executable"]) == (False, verdict.note, "yes")
