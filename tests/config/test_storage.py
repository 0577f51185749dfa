"""Media storage from one URL, and imports that work when the storage is not a local folder."""

import time

import pytest

from config.storage import StorageURLError, storage_from_url
from tests.factories import AgentRunFactory
from trajectories.models import Trajectory
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
