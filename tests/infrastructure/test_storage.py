"""Media storage from one URL, and imports that work when the storage is not a local folder."""

import time

import pytest
from django.conf import settings
from django.urls import reverse

from infrastructure.storage import StorageURLError, storage_from_url
from tests.factories import AgentRunFactory, UserFactory
from trajectories.models import AgentRun, ImportJob, Trajectory
from trajectories.services.import_jobs import create_import_job, enqueue_import_job, run_import_job
from trajectories.services.tasks import import_task_file


def test_empty_url_is_the_media_root_folder():
    assert storage_from_url("") == {"BACKEND": "django.core.files.storage.FileSystemStorage"}


def test_a_shared_folder():
    assert storage_from_url("file:///srv/trajscope/media") == {
        "BACKEND": "django.core.files.storage.FileSystemStorage", "OPTIONS": {"location": "/srv/trajscope/media"}}


def test_an_s3_compatible_bucket():
    entry = storage_from_url("s3://runs/trajscope/media?endpoint_url=http://minio:9000&region_name=us-east-1")
    assert entry["BACKEND"] == "storages.backends.s3.S3Storage"
    assert entry["OPTIONS"] == {
        "bucket_name": "runs", "location": "trajscope/media", "endpoint_url": "http://minio:9000",
        "region_name": "us-east-1", "default_acl": None, "querystring_auth": True, "file_overwrite": False}


@pytest.mark.parametrize(("url", "message"), [
    ("file://relative/path", "file:///absolute/path"),
    ("s3:///prefix", "name the bucket"),
    ("s3://bucket?acl=public-read", "unknown option(s) acl"),
    ("ftp://host/media", "expected file:///path or s3://bucket/prefix"),
])
def test_bad_urls_say_what_is_expected(url, message):
    with pytest.raises(StorageURLError, match=message.replace("(", r"\(").replace(")", r"\)")):
        storage_from_url(url)


@pytest.mark.django_db
def test_an_import_job_reads_uploads_from_a_storage_without_local_paths(settings, shared_data):
    settings.STORAGES = {**settings.STORAGES, "default": {"BACKEND": "django.core.files.storage.InMemoryStorage"}}
    import_task_file(shared_data / "webarena" / "test.raw.json")
    run = AgentRunFactory(name="remote-store")
    with (shared_data / "trajectory-samples" / "llama3-8b_render_6.html").open("rb") as upload:
        job = create_import_job(run, [("llama3-8b_render_6.html", upload)])
    job = run_import_job(job.pk)
    assert job.status == "done", job.error
    assert job.report["counts"]["imported"] == 1, str(job.report)
    assert Trajectory.objects.get(run=run).task.task_id == "6"


def test_a_worker_elsewhere_imports_from_the_shared_media_store(celery_workers, shared_data, tmp_path):
    """As on another machine: another working directory, the same media store (MEDIA_ROOT)."""
    import_task_file(shared_data / "webarena" / "test.raw.json")
    run = AgentRunFactory(name="elsewhere")
    with (shared_data / "trajectory-samples" / "llama3-8b_render_6.html").open("rb") as upload:
        job = create_import_job(run, [("llama3-8b_render_6.html", upload)])
    elsewhere = tmp_path / "other-machine"
    elsewhere.mkdir()
    celery_workers.start(cwd=elsewhere)
    enqueue_import_job(job)
    deadline = time.monotonic() + 90
    while job.status != "done" and time.monotonic() < deadline:
        time.sleep(0.3)
        job.refresh_from_db()
    assert job.status == "done", celery_workers.output()
    assert Trajectory.objects.get(run=run).task.task_id == "6"
    assert not any((tmp_path / "media" / "uploads" / "import-jobs").rglob("*.html"))  # uploads removed after


def _upload_job(shared_data, run_name: str, user=None):
    import_task_file(shared_data / "webarena" / "test.raw.json")
    run = AgentRunFactory(name=run_name, uploaded_by=user)
    with (shared_data / "trajectory-samples" / "llama3-8b_render_6.html").open("rb") as upload:
        return create_import_job(run, [("llama3-8b_render_6.html", upload)], user=user, new_run=True)


@pytest.mark.django_db
def test_a_worker_on_another_store_fails_the_job_and_keeps_run_and_upload_for_a_retry(
        settings, shared_data, tmp_path, client, django_capture_on_commit_callbacks):
    web_store, worker_store = tmp_path / "web-media", tmp_path / "worker-media"
    settings.MEDIA_ROOT = web_store
    user = UserFactory(username="uploader")
    job = _upload_job(shared_data, "split-store", user)
    uploaded = web_store / job.uploaded_files[0]
    assert uploaded.is_file()

    settings.MEDIA_ROOT = worker_store
    job = run_import_job(job.pk)
    assert job.status == "failed" and job.uploads_kept
    assert f"the folder {worker_store}" in job.error and "uploads/import-jobs/" in job.error
    assert "llama3-8b_render_6.html" in job.error and "MEDIA_STORAGE_URL" in job.error
    assert AgentRun.objects.filter(name="split-store").exists() and uploaded.is_file()

    client.force_login(user)
    page = client.get(job.get_absolute_url()).content.decode()
    assert "does not hold" in page and "Retry the import" in page

    settings.MEDIA_ROOT = web_store  # the worker's store set right
    with django_capture_on_commit_callbacks(execute=True):
        client.post(reverse("trajectories:import-job-retry", args=[job.pk]))
    job.refresh_from_db()
    assert (job.status, job.error, job.uploads_kept) == ("done", "", False), job.error
    assert Trajectory.objects.get(run__name="split-store").task.task_id == "6"
    assert not uploaded.exists()


@pytest.mark.django_db
def test_a_job_whose_upload_is_gone_names_the_missing_file(settings, shared_data, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    job = _upload_job(shared_data, "gone")
    (tmp_path / "media" / job.uploaded_files[0]).unlink()
    job = run_import_job(job.pk)
    assert job.status == "failed" and job.uploads_kept and job.uploaded_files[0] in job.error
    assert job.run is not None and job.report == {}


def test_a_worker_process_with_another_media_root_does_not_report_done(celery_workers, shared_data, tmp_path):
    job = _upload_job(shared_data, "other-root")
    celery_workers.env["MEDIA_ROOT"] = str(tmp_path / "not-the-web-store")
    celery_workers.start(cwd=tmp_path)
    enqueue_import_job(job)
    celery_workers.wait_until(lambda: ImportJob.objects.get(pk=job.pk).status == "failed", 90)
    job.refresh_from_db()
    assert "not-the-web-store" in job.error and job.uploads_kept
    assert AgentRun.objects.filter(name="other-root").exists()
    assert (settings.MEDIA_ROOT / job.uploaded_files[0]).is_file()
