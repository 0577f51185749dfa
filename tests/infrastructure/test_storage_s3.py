"""The S3 media store against a real S3-compatible server (moto's server mode, started here):
the web stores an upload, a worker in another working directory imports it, screenshots are
served from the bucket, and a screenshot gone from the bucket is a 404 that `check_media` finds."""

import socket
from io import StringIO

import boto3
import pytest
from django.core.management import call_command
from django.urls import reverse

from infrastructure.storage import storage_from_url
from tests.factories import AgentRunFactory, UserFactory
from trajectories.models import ImportJob, Screenshot, Step, Trajectory
from trajectories.services import screenshots
from trajectories.services.import_jobs import create_import_job, enqueue_import_job
from trajectories.services.tasks import import_task_file

CREDENTIALS = {"AWS_ACCESS_KEY_ID": "trajscope-test", "AWS_SECRET_ACCESS_KEY": "trajscope-test-secret",
               "AWS_DEFAULT_REGION": "us-east-1"}


@pytest.fixture
def s3_endpoint(monkeypatch):
    from moto.server import ThreadedMotoServer

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    for key, value in CREDENTIALS.items():
        monkeypatch.setenv(key, value)
    yield f"http://127.0.0.1:{port}"
    server.stop()


@pytest.fixture
def bucket(s3_endpoint, settings):
    client = boto3.client("s3", endpoint_url=s3_endpoint, region_name="us-east-1")
    client.create_bucket(Bucket="trajscope-media")
    url = f"s3://trajscope-media/media?endpoint_url={s3_endpoint}&region_name=us-east-1"
    settings.STORAGES = {**settings.STORAGES, "default": storage_from_url(url)}
    screenshots.forget_storage()
    yield url, client
    screenshots.forget_storage()


def _keys(client, prefix: str) -> list[str]:
    listed = client.list_objects_v2(Bucket="trajscope-media", Prefix=prefix)
    return [item["Key"] for item in listed.get("Contents", [])]


def test_upload_worker_import_and_screenshots_through_an_s3_store(bucket, celery_workers, shared_data, tmp_path,
                                                                  client):
    url, s3 = bucket
    import_task_file(shared_data / "webarena" / "test.raw.json")
    run = AgentRunFactory(name="in-the-bucket")
    with (shared_data / "trajectory-samples" / "llama3-8b_render_6.html").open("rb") as upload:
        job = create_import_job(run, [("llama3-8b_render_6.html", upload)])
    assert _keys(s3, f"media/uploads/import-jobs/{job.pk}/") == [f"media/{job.uploaded_files[0]}"]

    elsewhere = tmp_path / "worker-host"
    elsewhere.mkdir()
    celery_workers.env.update(CREDENTIALS, MEDIA_STORAGE_URL=url, MEDIA_ROOT=str(tmp_path / "no-local-media"))
    celery_workers.start(cwd=elsewhere)
    enqueue_import_job(job)
    celery_workers.wait_until(lambda: ImportJob.objects.get(pk=job.pk).status in ("done", "failed"), 120)
    job.refresh_from_db()
    assert job.status == "done", job.error
    assert job.report["counts"]["imported"] == 1, str(job.report)
    trajectory = Trajectory.objects.get(run=run)
    assert trajectory.task.task_id == "6"
    assert not _keys(s3, f"media/uploads/import-jobs/{job.pk}/")  # the upload is removed once imported
    assert not (tmp_path / "no-local-media").exists()  # nothing went to a local folder

    shots = Screenshot.objects.filter(steps__trajectory=trajectory).distinct()
    assert shots and sorted(_keys(s3, "media/screenshots/")) == sorted(f"media/{s.image.name}" for s in shots)
    client.force_login(UserFactory())
    shot = shots.first()
    response = client.get(reverse("trajectories:screenshot", args=[shot.sha256]))
    assert response.status_code == 200 and b"".join(response.streaming_content).startswith(b"\x89PNG\r\n\x1a\n")

    s3.delete_object(Bucket="trajscope-media", Key=f"media/{shot.image.name}")
    response = client.get(reverse("trajectories:screenshot", args=[shot.sha256]))
    assert response.status_code == 404 and b"Screenshot missing" in response.content
    out = StringIO()
    call_command("check_media", "--fix", stdout=out)
    assert f"screenshot #{shot.pk}: {shot.image.name} is missing" in out.getvalue()
    assert not Screenshot.objects.filter(pk=shot.pk).exists()
    assert Step.objects.filter(trajectory=trajectory, screenshot__isnull=True).exists()
