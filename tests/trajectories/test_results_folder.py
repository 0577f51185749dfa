"""A whole WebArena results folder (shared/data/results-sample, FORMATS.md section 4), read completely."""

import io
import json
import shutil
import zipfile
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.urls import reverse
from rest_framework.test import APIClient

from accounts.services import create_api_token
from tests.factories import UserFactory
from trajectories.models import AgentRun, Screenshot, TaskResult, Trajectory
from trajectories.services.ingest import import_paths

pytestmark = pytest.mark.django_db


@pytest.fixture
def results(shared_data):
    return shared_data / "results-sample"


def _trace(results, task_id: str) -> list:
    return json.loads((results / "format_traces" / f"task_{task_id}" / f"{task_id}.json").read_text())


def _by_task(run) -> dict[str, Trajectory]:
    return {t.task.task_id: t for t in Trajectory.objects.filter(run=run).select_related("task")}


def _entries(report: dict) -> dict[str, tuple[str, str]]:
    return {entry["file"]: (entry["status"], entry["reason"]) for entry in report["files"]}


def test_the_whole_results_sample_imports_with_exit_0(webarena_tasks, results, capsys):
    call_command("import_trajectories", str(results), "--run", "llama-results", "--json", verbosity=0)
    report = json.loads(capsys.readouterr().out)

    assert report["ok"] is True
    assert report["counts"] == {"imported": 5, "unchanged": 0, "replaced": 0, "failed": 0, "skipped": 2}
    entries = _entries(report)
    assert set(entries) == {"results-sample/config.json", "results-sample/render_3.html",
                            "results-sample/render_6.html", "results-sample/format_traces/task_3/3.json",
                            "results-sample/format_traces/task_6/6.json", "results-sample/log_files.txt",
                            "results-sample/SOURCES.md"}
    status, reason = entries["results-sample/log_files.txt"]
    assert status == "skipped" and reason.startswith("log file not in the folder: none of the 64 harness logs")
    assert entries["results-sample/format_traces/task_3/3.json"][0] == "imported"

    run = AgentRun.objects.get(name="llama-results")
    assert run.model == "llama3:8b" and run.metadata["harness_config"]["max_steps"] == 30
    trajectories = _by_task(run)
    for task_id in ("3", "6"):
        assert trajectories[task_id].success is False
        assert trajectories[task_id].success_source == f"results-sample/format_traces/task_{task_id}/{task_id}.json"
    # The trace's outputs belong to the steps by order; the harness's own stop record is not a step.
    outputs = [step.model_output for step in trajectories["3"].steps.order_by("index")]
    assert outputs == [record["output"] for record in _trace(results, "3")[:8]]
    assert [s.model_output for s in trajectories["6"].steps.order_by("index")][-1] == "stop ['N/A']"

    call_command("import_trajectories", str(results), "--run", "llama-results", "--json", verbosity=0)
    again = json.loads(capsys.readouterr().out)
    assert again["counts"] == {"imported": 0, "unchanged": 5, "replaced": 0, "failed": 0, "skipped": 2}


def _folder(tmp_path, results, traces: dict[str, list], renders=("3",)):
    """A results folder in the top-level `format_traces/N.json` layout, built from the sample's records."""
    folder = tmp_path / "results"
    (folder / "format_traces").mkdir(parents=True)
    for task_id in renders:
        shutil.copy(results / f"render_{task_id}.html", folder)
    for task_id, records in traces.items():
        (folder / "format_traces" / f"{task_id}.json").write_text(json.dumps(records))
    return folder


def test_top_level_traces_a_pass_and_a_verdict_without_trajectory(webarena_tasks, run, results, tmp_path, client):
    passed = [*_trace(results, "3")[:-1], {"result": "PASS"}]
    folder = _folder(tmp_path, results, {"3": passed, "6": _trace(results, "6")})

    report = import_paths([folder], run)

    entries = {entry.file: entry for entry in report.files}
    assert report.ok and report.counts()["failed"] == 0
    trace_3, trace_6 = entries["results/format_traces/3.json"], entries["results/format_traces/6.json"]
    assert (trace_3.status, trace_3.task_id) == ("imported", "3")
    assert trace_3.notes[0] == "harness verdict PASS (result); 9 model outputs"
    assert trace_6.status == "skipped" and trace_6.reason.startswith("verdict without trajectory")
    three = _by_task(run)["3"]
    assert (three.success, three.success_source) == (True, "results/format_traces/3.json")
    kept = TaskResult.objects.get(run=run, task__benchmark="webarena", task__task_id="6")
    assert (kept.success, kept.source_name, len(kept.model_outputs)) == (False, "results/format_traces/6.json", 3)

    client.force_login(UserFactory())
    page = client.get(reverse("metrics:run-detail", args=[run.pk])).content.decode()
    without = page.split('id="task-results"', 1)[1]
    assert "Tasks without a trajectory" in without and "webarena/6" in without
    assert "<code>results/format_traces/6.json</code>" in without
    # The verdict without trajectory counts in the run's harness success.
    assert 'data-source="harness">harness <b>0.500</b> <span class="muted">(1 of 2)</span>' in page

    # The render file that comes later takes the kept verdict and model outputs up.
    report = import_paths([results / "render_6.html"], run)
    assert report.counts()["imported"] == 1
    six = _by_task(run)["6"]
    assert (six.success, six.success_source) == (False, "results/format_traces/6.json")
    assert [step.model_output for step in six.steps.order_by("index")] == [
        record["output"] for record in _trace(results, "6")[:-1]]
    page = client.get(reverse("metrics:run-detail", args=[run.pk])).content.decode()
    assert "Tasks without a trajectory" not in page


def test_harness_logs_in_the_folder_are_read_and_the_index_says_so(webarena_tasks, run, results, tmp_path):
    folder = _folder(tmp_path, results, {}, renders=("3", "6"))
    shutil.copy(results / "log_files.txt", folder)
    (folder / "log_files").mkdir()
    (folder / "log_files" / "log_20240504170902_1491.log").write_text(
        "2024-05-04 17:09:40,001 - INFO - [Result] (PASS) config_files/3.json\n"
        "2024-05-04 17:10:40,001 - INFO - [Result] (FAIL) config_files/6.json\n")

    report = import_paths([folder], run)

    entries = {entry.file: entry for entry in report.files}
    index = entries["results/log_files.txt"]
    assert index.status == "skipped" and index.reason.startswith("an index of harness logs: 1 of the 64")
    assert entries["results/log_files/log_20240504170902_1491.log"].status == "imported"
    trajectories = _by_task(run)
    assert (trajectories["3"].success, trajectories["6"].success) == (True, False)
    assert trajectories["3"].success_source == "results/log_files/log_20240504170902_1491.log"


def test_an_unreadable_trace_is_skipped_with_its_reason_not_failed(webarena_tasks, run, results, tmp_path):
    folder = _folder(tmp_path, results, {"3": [*_trace(results, "3")[:-1], {"result": "MAYBE"}]})
    report = import_paths([folder], run)
    [trace] = [entry for entry in report.files if entry.kind == "harness_verdict"]
    assert trace.status == "skipped" and "not a trajectory: prompt/response trace" in trace.reason
    assert "[9].result" in trace.reason and report.ok


def test_model_output_is_shown_escaped_on_the_trajectory_page(webarena_tasks, run, results, tmp_path, client):
    records = _trace(results, "6")
    records[0]["output"] = "<script>alert(1)</script> click [20]"
    import_paths([_folder(tmp_path, results, {"6": records}, renders=("6",))], run)
    client.force_login(UserFactory())
    page = client.get(reverse("metrics:trajectory-detail", args=[_by_task(run)["6"].pk])).content.decode()
    assert "Model output" in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt; click [20]" in page and "<script>alert(1)" not in page
    assert "harness verdict from <code>results/format_traces/6.json</code>" in page


def _zipped(results) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(results.rglob("*")):
            if path.is_file():
                archive.write(path, f"results/{path.relative_to(results).as_posix()}")
    return buffer.getvalue()


def test_a_zip_of_the_folder_through_the_api(webarena_tasks, results):
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {create_api_token(UserFactory())[1]}")
    response = api.post(reverse("api-run-import"), {"run": "zipped", "files": [
        SimpleUploadedFile("results.zip", _zipped(results), content_type="application/zip")]}, format="multipart")
    body = response.json()
    assert response.status_code == 200 and body["ok"] is True
    assert body["counts"] == {"imported": 5, "unchanged": 0, "replaced": 0, "failed": 0, "skipped": 2}
    assert _entries(body)["results.zip/results/log_files.txt"][0] == "skipped"
    assert {t.success for t in _by_task(AgentRun.objects.get(name="zipped")).values()} == {False}


def test_a_zip_of_the_folder_through_the_upload_page(webarena_tasks, results, client,
                                                    django_capture_on_commit_callbacks):
    client.force_login(UserFactory())
    with django_capture_on_commit_callbacks(execute=True):
        client.post(reverse("trajectories:upload"), {"run": "web", "paradigm": "step_by_step", "files": [
            SimpleUploadedFile("results.zip", _zipped(results), content_type="application/zip")]})
    run = AgentRun.objects.get(name="web")
    job = run.import_jobs.get()
    assert job.status == "done", job.error
    assert job.report["ok"] is True, job.report["files"]
    assert job.report["counts"]["skipped"] == 2
    page = client.get(reverse("trajectories:import-job", args=[job.pk])).content.decode()
    assert '<span id="job-failures">nothing failed</span>' in page and "log file not in the folder" in page
    assert {t.success_source for t in _by_task(run).values()} == {
        "results.zip/results/format_traces/task_3/3.json", "results.zip/results/format_traces/task_6/6.json"}


@pytest.mark.parametrize("workers", [1, 2])
def test_one_parsing_process_or_a_pool_import_the_same(webarena_tasks, results, settings, workers, tmp_path):
    """The pool (forked parsers, screenshots written ahead) and in-process parsing agree, zipped too."""
    settings.INGEST_WORKERS = workers
    archive = tmp_path / "results.zip"
    archive.write_bytes(_zipped(results))
    run = AgentRun.objects.create(name=f"workers-{workers}")
    report = import_paths([archive, results.parent / "trajectory-samples"], run)
    # The sample folder holds the same render files of tasks 3 and 6 as the results folder.
    assert report.counts() == {"imported": 6, "unchanged": 2, "replaced": 0, "failed": 0, "skipped": 3}
    assert sorted(t.task.task_id for t in Trajectory.objects.filter(run=run)) == ["0", "3", "6"]
    # The screenshots written ahead for the two copies found unchanged were removed again.
    stored = sorted(path.relative_to(settings.MEDIA_ROOT).as_posix()
                    for path in Path(settings.MEDIA_ROOT).rglob("*") if path.is_file())
    assert stored == sorted(Screenshot.objects.values_list("image", flat=True))


def test_files_are_read_ahead_up_to_eight_per_reader_while_under_the_byte_budget():
    """Enough files ahead that the readers need not wait while the importing process commits,
    but never more than the budget holds, and never fewer than two per reader."""
    from collections import deque

    from trajectories.formats.sources import TRAJECTORIES, Source
    from trajectories.services.reading import _room_ahead

    def ahead(count, size):
        return deque((Source(name=f"render_{number}.html", kind=TRAJECTORIES, size=size), None)
                     for number in range(count))

    assert _room_ahead(ahead(15, 1_000_000), readers=2)
    assert not _room_ahead(ahead(16, 1_000_000), readers=2)
    assert not _room_ahead(ahead(5, 16 * 1024**2), readers=2)
    assert _room_ahead(ahead(3, 64 * 1024**2), readers=2)
    assert not _room_ahead(ahead(4, 64 * 1024**2), readers=2)


def test_a_daemonic_process_parses_in_process(settings, monkeypatch):
    """Celery's prefork children are daemonic and may not start a pool of their own."""
    import multiprocessing

    from trajectories.services.reading import ingest_workers

    settings.INGEST_WORKERS = 2
    assert ingest_workers() == 2
    monkeypatch.setitem(multiprocessing.current_process()._config, "daemon", True)
    assert ingest_workers() == 1


def test_a_killed_parsing_process_fails_the_files_it_held_and_the_rest_import(webarena_tasks, results, settings,
                                                                              tmp_path, monkeypatch):
    import os

    from trajectories.formats import readers
    from trajectories.services import reading

    settings.INGEST_WORKERS = 2
    monkeypatch.setattr(reading, "_AHEAD_PER_READER", 2)
    original = readers.prepared_records

    def prepared_records(source, max_bytes):
        if source.name.endswith("render_3.html"):
            os._exit(9)  # as the kernel's out-of-memory killer would end it
        return original(source, max_bytes)

    # Seen by the forked workers' `read_file` only: after the break, files are read in process.
    monkeypatch.setattr(readers, "prepared_records", prepared_records)
    folder = tmp_path / "results"
    folder.mkdir()
    for task_id in ("3", "6"):
        shutil.copy(results / f"render_{task_id}.html", folder)
    for sample in sorted((results.parent / "trajectory-samples").glob("*.html")):
        shutil.copy(sample, folder / f"z_{sample.name}")
    run = AgentRun.objects.create(name="killed")

    report = import_paths([folder], run)

    # The four files read ahead (two per worker here) were with the pool when it broke; the fifth
    # is read in the importing process.
    assert [(entry.file.rsplit("/", 1)[-1], entry.status) for entry in report.files] == [
        ("render_3.html", "failed"), ("render_6.html", "failed"), ("z_gpt4turbo_render_0.html", "failed"),
        ("z_llama3-8b_render_3.html", "failed"), ("z_llama3-8b_render_6.html", "imported")]
    assert "a parsing process ended abruptly" in report.files[0].reason
    assert list(Trajectory.objects.filter(run=run).values_list("task__task_id", flat=True)) == ["6"]


def test_verdicts_on_tasks_not_imported_are_skipped_with_the_reason(webarena_tasks, run, results, tmp_path):
    folder = _folder(tmp_path, results, {"9999": _trace(results, "6")})
    (folder / "log_files").mkdir()
    (folder / "log_files" / "run.log").write_text(
        "2024-05-04 17:09:40,001 - INFO - [Result] (PASS) config_files/3.json\n"
        "2024-05-04 17:10:40,001 - INFO - [Result] (FAIL) config_files/9999.json\n"
        "2024-05-04 17:11:40,001 - INFO - [Result] (PASS) config_files/9998.json\n")

    report = import_paths([folder], run)

    assert report.ok
    [trace] = [entry for entry in report.files if entry.file == "results/format_traces/9999.json"]
    assert (trace.status, trace.task_id) == ("skipped", "9999")
    assert trace.reason == ("task webarena/9999 is not imported (run manage.py import_tasks): its harness verdict "
                            "is not kept; import this file again once the task is")
    # The log's known verdict is kept; the others get an entry of their own, skipped, naming them.
    log, unknown = [entry for entry in report.files if entry.file == "results/log_files/run.log"]
    assert log.status == "imported" and log.notes[0] == "1 results (1 PASS, 0 FAIL); 1 trajectories updated"
    assert unknown.status == "skipped" and unknown.reason == (
        "2 tasks are not imported (run manage.py import_tasks): their harness verdicts are not kept; import this "
        "file again once they are: webarena/9998, webarena/9999")
    assert list(TaskResult.objects.filter(run=run).values_list("task__task_id", "success")) == [("3", True)]
    assert _by_task(run)["3"].success is True


def test_a_log_of_unknown_tasks_only_is_one_skipped_entry(webarena_tasks, run, tmp_path):
    log = tmp_path / "log_files" / "run.log"
    log.parent.mkdir()
    log.write_text("2024-05-04 17:10:40,001 - INFO - [Result] (FAIL) config_files/9999.json\n")
    report = import_paths([log.parent], run)
    assert [(entry.status, entry.reason.split(":")[0]) for entry in report.files] == [
        ("skipped", "task webarena/9999 is not imported (run manage.py import_tasks)")]
    assert report.ok and not TaskResult.objects.filter(run=run).exists()


def test_a_published_verdict_is_taken_up_by_a_trajectory_and_replaced_by_the_harness_trace(webarena_tasks, results):
    """A per-task results file, the harness's traces and the trajectories keep one verdict per task."""
    from trajectories.services.outcomes_and_grades import import_outcomes

    import_outcomes("published.csv", b"run,task_id,success\nlater,6,1\n")
    run = AgentRun.objects.get(name="later")

    assert import_paths([results / "render_6.html"], run).counts()["imported"] == 1
    six = _by_task(run)["6"]
    assert (six.success, six.success_source) == (True, "published.csv")

    report = import_paths([results / "format_traces"], run)
    trace = next(entry for entry in report.files if entry.file == "format_traces/task_6/6.json")
    assert trace.status == "imported" and "replaces the verdict PASS from published.csv" in trace.notes
    [result] = TaskResult.objects.filter(run=run, task__task_id="6")
    assert (result.success, result.source_name, result.origin, len(result.model_outputs)) == (
        False, "format_traces/task_6/6.json", "import", 3)
    six.refresh_from_db()
    assert (six.success, six.success_source) == (False, "format_traces/task_6/6.json")
