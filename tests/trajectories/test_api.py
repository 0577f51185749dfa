import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from rest_framework.test import APIClient

from accounts.services import create_api_token
from tests.factories import AgentRunFactory, UserFactory
from tests.trajectories.expectations import assert_samples_imported
from trajectories.models import AgentRun, ImportJob, Trajectory

pytestmark = pytest.mark.django_db


@pytest.fixture
def user():
    return UserFactory(username="agent-dev")


@pytest.fixture
def api(user):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {create_api_token(user)[1]}")
    return client


def _document(task_id):
    return {"schema": "trajectory/v1", "task": {"task_id": task_id},
            "steps": [{"index": 1, "action": "stop [N/A]", "reasoning": "```stop [N/A]```"}],
            "final_answer": "N/A", "outcome": {"status": "na"}}


def test_multipart_files_return_the_report(webarena_tasks, api, samples):
    files = [SimpleUploadedFile(path.name, path.read_bytes()) for path in sorted(samples.glob("*.html"))]
    response = api.post(reverse("api-run-import"), {"run": "api-run", "model": "llama", "files": files},
                        format="multipart")
    assert response.status_code == 200
    body = response.json()
    assert body["run"] == "api-run" and body["ok"] is True
    assert body["counts"] == {"imported": 3, "unchanged": 0, "replaced": 0, "failed": 0, "skipped": 0}
    assert sorted(entry["task_id"] for entry in body["files"]) == ["0", "3", "6"]
    assert_samples_imported(AgentRun.objects.get(name="api-run"))

    again = api.post(reverse("api-run-import"), {"run": "api-run", "files": [
        SimpleUploadedFile(path.name, path.read_bytes()) for path in sorted(samples.glob("*.html"))]},
        format="multipart")
    assert again.json()["counts"]["unchanged"] == 3


def test_a_json_body_with_one_bad_trajectory_stores_the_others(webarena_tasks, api):
    bad = _document("4")
    del bad["outcome"]
    response = api.post(reverse("api-run-import"),
                        {"run": "json-run", "trajectories": [_document("3"), bad, _document("6")]}, format="json")
    body = response.json()
    assert response.status_code == 200 and body["ok"] is False
    assert [(e["file"], e["line"], e["status"]) for e in body["files"]] == [
        ("request.jsonl", 1, "imported"), ("request.jsonl", 2, "failed"), ("request.jsonl", 3, "imported")]
    assert body["files"][1]["reason"] == "'outcome' is a required property"
    assert body["counts"]["imported"] == 2 and body["failures"] == [
        {"record": "request.jsonl, line 2", "task_id": "", "reason": "'outcome' is a required property"}]
    assert sorted(Trajectory.objects.values_list("task__task_id", flat=True)) == ["3", "6"]


def test_background_imports_answer_with_the_job(webarena_tasks, api, user, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        response = api.post(reverse("api-run-import"),
                            {"run": "bg", "background": True, "trajectories": [_document("3")]}, format="json")
    assert response.status_code == 202
    job_url = response.json()["url"]
    job = api.get(job_url).json()
    assert (job["status"], job["processed"], job["total"], job["run"]) == ("done", 1, 1, "bg")
    assert job["report"]["counts"]["imported"] == 1
    assert ImportJob.objects.get().created_by == user


def test_file_is_taken_as_the_verdict_import_names_it(webarena_tasks, api, samples):
    files = [SimpleUploadedFile(path.name, path.read_bytes()) for path in sorted(samples.glob("*.html"))]
    response = api.post(reverse("api-run-import"), {"run": "named-file", "file": files}, format="multipart")
    assert response.status_code == 200 and response.json()["counts"]["imported"] == 3


def test_bad_requests(api):
    assert api.post(reverse("api-run-import"), {"run": "x"}, format="json").status_code == 400
    empty = api.post(reverse("api-run-import"), {"run": "x", "trajectories": []}, format="json")
    assert empty.status_code == 400 and "multipart fields `files` (or `file`)" in empty.json()["detail"]
    both = api.post(reverse("api-run-import"), {"run": "x", "trajectories": [_document("3")],
                                                "files": [SimpleUploadedFile("a.json", b"{}")]}, format="multipart")
    assert both.status_code == 400 and "not both" in both.json()["detail"]
    AgentRunFactory(name="theirs", uploaded_by=UserFactory(username="owner"))
    refused = api.post(reverse("api-run-import"), {"run": "theirs", "trajectories": [_document("3")]}, format="json")
    assert refused.status_code == 403 and "belongs to another account" in refused.json()["detail"]


def test_limits_refuse_the_upload(api, settings):
    settings.INGEST_MAX_FILES = 0
    response = api.post(reverse("api-run-import"), {"run": "x", "trajectories": [_document("3")]}, format="json")
    assert response.status_code == 400
    assert response.json()["refused"].startswith("import refused, nothing was read: more than 0 files")


def test_an_upload_that_imports_nothing_says_so_and_leaves_no_run(api):
    image = SimpleUploadedFile("screenshot.png", b"\x89PNG\r\n\x1a\n" + bytes(64), content_type="image/png")
    response = api.post(reverse("api-run-import"), {"run": "nothing", "files": [image]}, format="multipart")
    body = response.json()
    assert response.status_code == 200 and body["run_removed"] is True
    assert body["nothing_imported"].startswith("Nothing was imported: screenshot.png held no file to import")
    assert not AgentRun.objects.filter(name="nothing").exists()
    job = api.get(reverse("api-import-job", args=[ImportJob.objects.get().pk])).json()
    assert job["run"] == "nothing" and job["report"]["run_removed"] is True  # the name outlives the run


def test_authentication_is_required_and_jobs_are_private(api):
    anonymous = APIClient()
    assert anonymous.post(reverse("api-run-import"), {}, format="json").status_code == 401
    job = ImportJob.objects.create(run=AgentRunFactory(), created_by=UserFactory(username="other"))
    assert api.get(reverse("api-import-job", args=[job.pk])).status_code == 403
    assert anonymous.get(reverse("api-import-job", args=[job.pk])).status_code == 401
