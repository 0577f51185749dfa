"""Hostile uploads fail one file, never the request (and never leave files or empty runs behind)."""

import json
from pathlib import Path

import pytest
from django.conf import settings
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from rest_framework.test import APIClient

from accounts.services import create_api_token
from tests.factories import UserFactory
from trajectories.formats.canonical import TASK_ID_MAX_LENGTH
from trajectories.models import AgentRun, ImportJob, Trajectory

pytestmark = pytest.mark.django_db


@pytest.fixture
def api():
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {create_api_token(UserFactory())[1]}")
    return client


def test_too_many_files_in_one_api_request_answer_json(api, settings):
    settings.DATA_UPLOAD_MAX_NUMBER_FILES = 3
    files = [SimpleUploadedFile(f"render_{n}.html", b"<html></html>") for n in range(4)]
    response = api.post(reverse("api-run-import"), {"run": "many", "files": files}, format="multipart")
    assert response.status_code == 400
    assert response["Content-Type"] == "application/json"
    assert response.json()["code"] == "too_many_files" and "3" in response.json()["detail"]


def test_a_json_body_over_the_size_limit_answers_json(api, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 100
    response = api.post(reverse("api-run-import"), {"run": "big", "trajectories": [{"x": "y" * 200}]}, format="json")
    assert response.status_code == 413 and response.json()["code"] == "request_too_large"


def _document(task_id, **changes):
    document = {"schema": "trajectory/v1", "task": {"task_id": task_id},
                "steps": [{"index": 1, "action": "stop [N/A]"}], "final_answer": "N/A", "outcome": {"status": "na"}}
    return {**document, **changes}


def _deep(levels: int) -> dict:
    value: dict = {}
    for _ in range(levels):
        value = {"a": value}
    return value


def _upload(name: str, document) -> SimpleUploadedFile:
    text = document if isinstance(document, str) else json.dumps(document)
    return SimpleUploadedFile(name, text.encode(), content_type="application/json")


HOSTILE = {
    "deep.json": (_document("3", run={"meta": _deep(200)}), "run.meta", "nested deeper than 32 levels"),
    "deeper.json": ("[" * 100_000 + "]" * 100_000, "", "nested deeper than 32 levels"),
    "index.json": (_document("4", steps=[{"index": 2**31, "action": "stop [N/A]"}]), "steps[0].index",
                   "greater than the maximum of 2147483647"),
    "digits.json": ('{"schema": "trajectory/v1", "task": {"task_id": ' + "7" * 5000 + '}}', "",
                    "number too large"),
    "nan.json": ('{"schema": "trajectory/v1", "run": {"meta": {"x": NaN}}, "task": {"task_id": "5"}}', "",
                 "not a JSON number: NaN"),
    "infinite.json": ('{"schema": "trajectory/v1", "run": {"meta": {"x": 1e999}}, "task": {"task_id": "5"}}', "",
                      "number too large"),
}


def test_each_hostile_file_fails_alone_and_the_rest_imports(webarena_tasks, api):
    files = [_upload(name, document) for name, (document, _, _) in HOSTILE.items()]
    files.append(_upload("good.json", _document("6", run={"meta": {"harness": "v1", "depth": _deep(10)}})))

    response = api.post(reverse("api-run-import"), {"run": "hostile", "files": files}, format="multipart")

    assert response.status_code == 200 and response["Content-Type"] == "application/json"
    entries = {entry["file"]: entry for entry in response.json()["files"]}
    assert entries["good.json"]["status"] == "imported"
    for name, (_, where, message) in HOSTILE.items():
        assert entries[name]["status"] == "failed", name
        assert message in entries[name]["reason"], (name, entries[name]["reason"])
        assert entries[name]["where"] == where, name
    run = AgentRun.objects.get(name="hostile")
    assert list(run.trajectories.values_list("task__task_id", flat=True)) == ["6"]
    assert run.metadata["meta"]["harness"] == "v1"


def test_deep_trajectories_in_a_json_body_are_refused_in_json(webarena_tasks, api):
    # Deep enough to break the schema's limit, shallow enough for the JSON decoder under any middleware
    # stack; a body the decoder itself cannot nest is the second case below.
    response = api.post(reverse("api-run-import"), {"run": "deep-body", "trajectories": [
        _document("6"), _document("3", run={"meta": _deep(200)})]}, format="json")
    assert response.status_code == 400 and response["Content-Type"] == "application/json"
    assert response.json()["errors"] == {"trajectories[1]": "run.meta: nested deeper than 32 levels"}

    body = '{"run": "deeper-body", "trajectories": [' + "[" * 100_000 + "]" * 100_000 + "]}"
    response = api.post(reverse("api-run-import"), body, content_type="application/json")
    assert response.status_code == 400 and "nested too deeply" in response.json()["detail"]
    assert not Trajectory.objects.exists() and not AgentRun.objects.exists()


def _job_folders() -> list[Path]:
    root = Path(settings.MEDIA_ROOT) / "uploads" / "import-jobs"
    return sorted(root.iterdir()) if root.exists() else []


def test_a_failed_upload_leaves_no_empty_run_and_no_files(webarena_tasks, api):
    bad = _upload("render_3.html", "<html>not a render file</html>")
    response = api.post(reverse("api-run-import"), {"run": "nothing-stored", "files": [bad]}, format="multipart")
    body = response.json()
    assert response.status_code == 200 and body["counts"]["failed"] == 1
    assert body["run_removed"] is True and body["run_id"] is None
    assert not AgentRun.objects.filter(name="nothing-stored").exists()
    assert ImportJob.objects.get().run_name == "nothing-stored" and _job_folders() == []

    # The name is free again, for anyone.
    other = APIClient()
    other.credentials(HTTP_AUTHORIZATION=f"Token {create_api_token(UserFactory())[1]}")
    response = other.post(reverse("api-run-import"), {"run": "nothing-stored", "trajectories": [_document("6")]},
                          format="json")
    assert response.status_code == 200 and response.json()["counts"]["imported"] == 1


def test_an_existing_run_is_kept_when_an_upload_into_it_fails(webarena_tasks, api):
    api.post(reverse("api-run-import"), {"run": "mine", "trajectories": [_document("6")]}, format="json")
    response = api.post(reverse("api-run-import"), {"run": "mine", "trajectories": [{"schema": "x"}]},
                        format="json")
    assert response.json()["run_removed"] is False
    assert AgentRun.objects.get(name="mine").trajectories.count() == 1


def test_the_files_of_a_failed_job_are_removed(webarena_tasks, api, monkeypatch):
    def crash(*args, **kwargs):
        raise RuntimeError("disk on fire")

    monkeypatch.setattr("trajectories.services.import_jobs.import_paths", crash)
    response = api.post(reverse("api-run-import"), {"run": "crashed", "trajectories": [_document("6")]},
                        format="json")
    assert response.status_code == 500 and response.json()["detail"] == "RuntimeError: disk on fire"
    job = ImportJob.objects.get()
    assert job.status == "failed" and _job_folders() == []
    assert job.run is None and not AgentRun.objects.exists()


def test_the_job_page_says_when_the_new_run_was_removed(webarena_tasks, client, django_capture_on_commit_callbacks):
    client.force_login(UserFactory())
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(reverse("trajectories:upload"), {
            "run": "web-nothing", "paradigm": "step_by_step", "files": [_upload("x.json", {"schema": "x"})]})
    page = client.get(response["Location"]).content.decode()
    assert "Import #" in page and "web-nothing" in page and "was removed; its name is free again" in page
    assert "1 of 1 entries failed" in page
    assert not AgentRun.objects.exists()


def test_the_job_page_lists_the_failed_records_beside_the_imported(webarena_tasks, client,
                                                                  django_capture_on_commit_callbacks):
    client.force_login(UserFactory())
    bad = _document("7")
    del bad["outcome"]
    lines = "\n".join(json.dumps(document) for document in (_document("3"), bad, _document("6")))
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(reverse("trajectories:upload"), {
            "run": "web-some", "paradigm": "step_by_step",
            "files": [SimpleUploadedFile("run.jsonl", lines.encode())]})
    page = client.get(response["Location"]).content.decode()
    assert "2 trajectories imported" in page and "1 of 3 entries failed" in page
    failures = page[page.index('id="failed-records"'):]
    failures = failures[:failures.index("</div>")]
    assert "1 record failed, each alone; the others were read and stored" in failures
    assert "<code>run.jsonl, line 2</code>: &#x27;outcome&#x27; is a required property" in failures
    assert AgentRun.objects.get(name="web-some").trajectories.count() == 2


def test_nul_characters_in_run_fields_are_stored_replaced(webarena_tasks, api):
    document = _document("6", run={"agent": "a\x00b", "model": "m\x00", "meta": {"k\x00": ["v\x00"]}})
    response = api.post(reverse("api-run-import"), {"run": "nul", "files": [_upload("nul.json", document)]},
                        format="multipart")
    assert response.json()["counts"]["imported"] == 1
    run = AgentRun.objects.get(name="nul")
    assert (run.agent, run.model, run.metadata["meta"]) == ("a\ufffdb", "m\ufffd", {"k\ufffd": ["v\ufffd"]})


def test_task_ids_no_task_can_have_fail_or_skip_alone(webarena_tasks, api):
    long_id = "9" * (TASK_ID_MAX_LENGTH + 1)
    files = [
        _upload("nul-task.json", _document("3\x00")),
        # A trace named by no task id (a file system keeps no name long enough for a too-long one).
        _upload("no-task.json", [{"instruction": "", "input": "", "output": "x"}, {"result": "PASS"}]),
        _upload("results.log", f"[Result] (PASS) config_files/{long_id}.json\n[Result] (FAIL) config_files/6.json\n"),
        _upload("good.json", _document("6")),
    ]
    response = api.post(reverse("api-run-import"), {"run": "ids", "files": files}, format="multipart")
    entries = {entry["file"]: entry for entry in response.json()["files"]}
    assert entries["nul-task.json"]["status"] == "failed" and "is not imported" in entries["nul-task.json"]["reason"]
    assert entries["no-task.json"]["status"] == "skipped" and "no task id" in entries["no-task.json"]["reason"]
    assert entries["results.log"]["notes"][0].startswith("1 results (0 PASS, 1 FAIL)")
    assert Trajectory.objects.get(run__name="ids").success is False


def test_a_jsonl_file_cut_off_while_read_stores_nothing(webarena_tasks, tmp_path, monkeypatch):
    from trajectories.formats import readers
    from trajectories.services.ingest import import_paths

    lines = [json.dumps(_document(task_id)) for task_id in ("3", "6", "7")]
    (tmp_path / "run.jsonl").write_text("\n".join(lines))
    original = readers.read_records

    def cut_off(name, stream, max_bytes, *beside):
        for number, record in enumerate(original(name, stream, max_bytes, *beside), start=1):
            if number == 3:
                raise OSError("connection to the storage lost")
            yield record

    monkeypatch.setattr(readers, "read_records", cut_off)
    run = AgentRun.objects.create(name="cut")
    report = import_paths([tmp_path / "run.jsonl"], run)
    assert [(entry.line, entry.status) for entry in report.files] == [(1, "failed"), (2, "failed"), (None, "failed")]
    assert report.files[0].reason == "not stored: the file could not be read to its end"
    assert "connection to the storage lost" in report.files[2].reason
    assert not Trajectory.objects.exists()


@pytest.mark.parametrize("workers", [1, 2])
def test_a_recursion_error_in_a_parser_fails_its_file_only(webarena_tasks, shared_data, tmp_path, monkeypatch,
                                                          settings, workers):
    from trajectories.formats import webarena_render
    from trajectories.services.ingest import import_paths

    settings.INGEST_WORKERS = workers
    original = webarena_render.parse_render

    def parse(text, name, screenshots=None):
        if name.endswith("render_3.html"):
            raise RecursionError("maximum recursion depth exceeded")
        return original(text, name, screenshots)

    monkeypatch.setattr(webarena_render, "parse_render", parse)
    monkeypatch.setattr("trajectories.formats.readers.parse_render", parse)
    for task_id in ("3", "6"):
        (tmp_path / f"render_{task_id}.html").write_bytes(
            (shared_data / "results-sample" / f"render_{task_id}.html").read_bytes())
    run = AgentRun.objects.create(name=f"recursion-{workers}")
    report = import_paths([tmp_path], run)
    statuses = {entry.file.rsplit("/", 1)[-1]: (entry.status, entry.reason) for entry in report.files}
    assert statuses["render_3.html"] == ("failed", "nested deeper than 32 levels")
    assert statuses["render_6.html"][0] == "imported"


def test_a_trajectory_over_the_step_limit_fails_alone(webarena_tasks, api, settings):
    settings.INGEST_MAX_STEPS = 5
    steps = [{"index": n, "action": "scroll [down]"} for n in range(1, 7)]
    files = [_upload("long.json", _document("3", steps=steps)), _upload("good.json", _document("6"))]
    response = api.post(reverse("api-run-import"), {"run": "steps", "files": files}, format="multipart")
    entries = {entry["file"]: entry for entry in response.json()["files"]}
    assert entries["long.json"]["status"] == "failed"
    assert "6 steps, more than the limit of 5 (INGEST_MAX_STEPS)" in entries["long.json"]["reason"]
    assert entries["good.json"]["status"] == "imported"
    assert list(Trajectory.objects.filter(run__name="steps").values_list("task__task_id", flat=True)) == ["6"]
