import io
import zipfile
from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.auth.models import Group
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from accounts.roles import ADMIN
from tests.factories import AgentRunFactory, UserFactory
from tests.trajectories.expectations import assert_samples_imported
from trajectories.models import AgentRun, ImportJob, Trajectory

pytestmark = pytest.mark.django_db


@pytest.fixture
def user(client):
    account = UserFactory(username="uploader")
    client.force_login(account)
    return account


def _upload(path: Path) -> SimpleUploadedFile:
    return SimpleUploadedFile(path.name, path.read_bytes(), content_type="text/html")


def _zip_of(paths, name="run.zip") -> SimpleUploadedFile:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in paths:
            archive.write(path, f"results/{path.name}")
        archive.writestr("results/render_9.html", "<html>broken</html>")
    return SimpleUploadedFile(name, buffer.getvalue(), content_type="application/zip")


def test_upload_page_runs_a_job_and_shows_its_report(webarena_tasks, samples, client, user,
                                                     django_capture_on_commit_callbacks):
    files = [_upload(samples / "gpt4turbo_render_0.html"), _zip_of(sorted(samples.glob("llama3-8b_*.html")))]
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(reverse("trajectories:upload"), {
            "run": "my-run", "agent": "cot", "model": "gpt-4", "paradigm": "step_by_step", "files": files})
    job = ImportJob.objects.get()
    assert response.status_code == 302 and response["Location"] == reverse("trajectories:import-job", args=[job.pk])
    assert (job.status, job.processed, job.total, job.created_by) == ("done", 4, 4, user)
    assert job.report["counts"] == {"imported": 3, "unchanged": 0, "replaced": 0, "failed": 1, "skipped": 0}
    run = AgentRun.objects.get(name="my-run")
    assert (run.agent, run.model, run.uploaded_by) == ("cot", "gpt-4", user)
    assert_samples_imported(run)
    # the uploaded files are removed once imported
    assert not (Path(settings.MEDIA_ROOT) / "uploads" / "import-jobs" / str(job.pk)).exists()

    page = client.get(response["Location"])
    content = page.content.decode()
    assert page.status_code == 200
    assert "run.zip/results/render_9.html" in content and "not a WebArena render file" in content
    assert reverse("metrics:trajectory-detail", args=[Trajectory.objects.get(task__task_id="6").pk]) in content

    progress = client.get(reverse("trajectories:import-job-progress", args=[job.pk])).json()
    assert progress == {"status": "done", "processed": 4, "total": 4}


def test_upload_into_someone_elses_run_is_refused(client, user, samples):
    AgentRunFactory(name="theirs", uploaded_by=UserFactory(username="owner"))
    response = client.post(reverse("trajectories:upload"),
                           {"run": "theirs", "paradigm": "step_by_step", "files": [_upload(samples / "SOURCES.md")]})
    assert response.status_code == 200
    assert "belongs to another account" in response.content.decode()
    assert not ImportJob.objects.exists()


def test_admins_may_upload_into_any_run(client, samples, django_capture_on_commit_callbacks, webarena_tasks):
    admin = UserFactory(username="boss")
    admin.groups.add(Group.objects.get_or_create(name=ADMIN)[0])
    client.force_login(admin)
    AgentRunFactory(name="cli-run")
    with django_capture_on_commit_callbacks(execute=True):
        client.post(reverse("trajectories:upload"), {"run": "cli-run", "paradigm": "step_by_step",
                                                     "files": [_upload(samples / "llama3-8b_render_6.html")]})
    assert AgentRun.objects.get(name="cli-run").trajectories.count() == 1


def test_upload_size_limit_and_required_files(client, user, samples, settings):
    settings.INGEST_MAX_UPLOAD_BYTES = 1000
    response = client.post(reverse("trajectories:upload"), {
        "run": "r", "paradigm": "step_by_step", "files": [_upload(samples / "gpt4turbo_render_0.html")]})
    assert "the limit is 1000" in response.content.decode()
    response = client.post(reverse("trajectories:upload"), {"run": "r", "paradigm": "step_by_step"})
    assert "This field is required." in response.content.decode()
    assert not ImportJob.objects.exists() and not AgentRun.objects.exists()


def test_a_running_job_shows_its_progress(client, user):
    job = ImportJob.objects.create(run=AgentRunFactory(name="r"), created_by=user, status="running", total=812,
                                   processed=100)
    content = client.get(reverse("trajectories:import-job", args=[job.pk])).content.decode()
    assert '<progress id="job-progress" max="812" value="100">' in content
    assert reverse("trajectories:import-job-progress", args=[job.pk]) in content


def test_jobs_are_private_to_their_creator(client, user):
    job = ImportJob.objects.create(run=AgentRunFactory(), created_by=UserFactory(username="someone"))
    assert client.get(reverse("trajectories:import-job", args=[job.pk])).status_code == 403
    assert client.get(reverse("trajectories:import-job-progress", args=[job.pk])).status_code == 403


def test_pages_need_a_login(client):
    for url in (reverse("trajectories:upload"), reverse("metrics:run-list")):
        response = client.get(url)
        assert response.status_code == 302 and response["Location"].startswith(reverse("login"))


def _empty_zip() -> SimpleUploadedFile:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w"):
        pass
    return SimpleUploadedFile("results.zip", buffer.getvalue(), content_type="application/zip")


@pytest.mark.parametrize("upload", [
    lambda: _empty_zip(),
    lambda: SimpleUploadedFile("screenshot.png", b"\x89PNG\r\n\x1a\n" + bytes(64), content_type="image/png"),
], ids=["empty-zip", "png"])
def test_an_upload_that_imports_nothing_says_so_and_keeps_no_empty_run(client, user, upload,
                                                                       django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(reverse("trajectories:upload"), {"run": "nothing-run", "paradigm": "step_by_step",
                                                                "files": [upload()]})
    job = ImportJob.objects.get()
    assert job.status == "done" and job.run is None
    assert job.report["run"] == "nothing-run" and job.report["run_removed"] is True
    assert job.report["nothing_imported"].startswith("Nothing was imported:")
    assert not AgentRun.objects.filter(name="nothing-run").exists()
    content = client.get(response["Location"]).content.decode()
    assert "Done, nothing imported" in content and "held no file to import" in content
    assert "was not kept" in content and "Go to the run" not in content
    assert "nothing-run" not in client.get(reverse("metrics:run-list")).content.decode()
    assert client.get(reverse("api-import-job", args=[job.pk])).json()["run"] == "nothing-run"  # the name outlives the run


def test_an_upload_that_imports_nothing_into_a_run_with_trajectories_keeps_the_run(
        client, user, django_capture_on_commit_callbacks):
    from tests.factories import TrajectoryFactory

    run = TrajectoryFactory(run__name="full-run", run__uploaded_by=user).run
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(reverse("trajectories:upload"), {"run": "full-run", "paradigm": "step_by_step",
                                                                "files": [_empty_zip()]})
    job = ImportJob.objects.get()
    assert job.run == run and job.report["run_removed"] is False
    content = client.get(response["Location"]).content.decode()
    assert "Nothing was imported" in content and "Go to the run" in content and "was not kept" not in content


def test_the_report_counts_trajectories_apart_from_tables(shared_data, client, user, django_capture_on_commit_callbacks):
    """An AgentLab study of two episode folders and its results table: two trajectories and one table, not "3 imported"."""
    study = shared_data / "agent-outputs" / "browsergym-agentlab"
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for path in sorted(study.rglob("*")):
            if path.is_file():
                archive.write(path, f"study/{path.relative_to(study)}")
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(reverse("trajectories:upload"), {
            "run": "agentlab", "paradigm": "step_by_step",
            "files": [SimpleUploadedFile("study.zip", buffer.getvalue(), content_type="application/zip")]})
    content = client.get(response["Location"]).content.decode()
    counts = content.split('id="report-counts">', 1)[1].split("</p>", 1)[0]
    assert ">2 trajectories imported<" in counts and ">1 results file imported<" in counts
    assert ">13 other files skipped<" in counts and ">0 failed<" in counts and "3 imported" not in counts
