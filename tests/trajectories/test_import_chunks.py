"""A worker's import split into chunks that any worker imports: one job, its run summaries and results
logs after every chunk, a chunk that fails retried alone and, failing for good, reported on its own."""

import io
import re
import zipfile
from pathlib import Path

import pytest
from django.core.files.base import ContentFile

from tests.factories import AgentRunFactory
from trajectories.models import ImportChunk, ImportJob, RunTally, Trajectory
from trajectories.services import import_jobs
from trajectories.services.import_jobs import create_import_job, enqueue_import_job
from trajectories.services.tasks import import_task_file
from trajectories.tasks import run_import_job_task

TASK_IDS = [str(number) for number in range(10, 17)]  # 7 render files
PASSED = {"10", "12", "14", "16"}
CHUNK_DONE = re.compile(r"run_import_chunk_task\[[0-9a-f-]+\] succeeded")


def _results_zip(samples) -> bytes:
    """Render files of 7 tasks (the real sample, renumbered) and a harness log with their verdicts."""
    render = (samples / "llama3-8b_render_6.html").read_text(encoding="utf-8")
    log = "".join(f"2024-05-04 17:09:40,001 - INFO - [Result] ({'PASS' if task in PASSED else 'FAIL'}) "
                  f"config_files/{task}.json\n" for task in TASK_IDS)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for task in TASK_IDS:
            archive.writestr(f"results/render_{task}.html", render.replace("task_id: 6\n", f"task_id: {task}\n"))
        archive.writestr("results/log_files/log_20240504170902_1491.log", log)
    return buffer.getvalue()


@pytest.fixture
def chunked(settings):
    settings.IMPORT_CHUNK_FILES = 2
    settings.IMPORT_CHUNK_RETRY_SECONDS = 0


def _job(samples) -> ImportJob:
    run = AgentRunFactory(name="chunked-run")
    return create_import_job(run, [("results.zip", ContentFile(_results_zip(samples)))], new_run=True)


@pytest.mark.django_db
def test_a_workers_import_goes_in_chunks_and_applies_the_results_log_after_them(webarena_tasks, samples, chunked):
    job = _job(samples)
    assert run_import_job_task.apply(args=[job.pk]).get() == "done"

    job.refresh_from_db()
    assert job.status == "done", job.error
    assert list(job.chunks.values_list("number", "status")) == [(0, "done"), (1, "done"), (2, "done"), (3, "done"),
                                                                   (4, "done")]
    assert [len(sources) for sources in job.chunks.values_list("sources", flat=True)] == [0, 2, 2, 2, 1]
    assert job.last_sources == ["results.zip/results/log_files/log_20240504170902_1491.log"]
    assert (job.processed, job.total) == (8, 8)
    assert job.report["counts"]["imported"] == 8 and job.report["ok"], job.report
    trajectories = {t.task.task_id: t for t in Trajectory.objects.filter(run=job.run).select_related("task")}
    assert sorted(trajectories) == sorted(TASK_IDS)
    for task_id, trajectory in trajectories.items():
        assert trajectory.success is (task_id in PASSED), task_id
        assert trajectory.success_source == "results.zip/results/log_files/log_20240504170902_1491.log"
    assert RunTally.objects.filter(run=job.run).exists()  # refreshed once, at the end
    assert not import_jobs._STORAGE.exists(import_jobs.job_folder(job))  # uploads removed once the job is done


@pytest.mark.django_db
def test_an_upload_answered_at_once_is_not_split(webarena_tasks, samples, chunked):
    job = import_jobs.run_import_job(_job(samples).pk)
    assert job.status == "done" and job.report["counts"]["imported"] == 8
    assert not job.chunks.exists()


@pytest.mark.django_db
def test_an_enqueued_job_runs_its_chunks_in_process_without_a_broker(webarena_tasks, samples, chunked,
                                                                     django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        job = _job(samples)
        enqueue_import_job(job)
    job.refresh_from_db()
    assert job.status == "done" and job.chunks.count() == 5
    assert Trajectory.objects.filter(run=job.run).count() == 7


def _failing_for(monkeypatch, source: str, times: int) -> list[int]:
    """import_paths raises for the chunk holding `source`, the first `times` times it imports it."""
    real, calls = import_jobs.import_paths, []

    def import_paths(paths, run, **options):
        if source in (options.get("only") or ()):
            calls.append(1)
            if len(calls) <= times:
                raise ConnectionError("the database went away")
        return real(paths, run, **options)

    monkeypatch.setattr(import_jobs, "import_paths", import_paths)
    return calls


@pytest.mark.django_db
def test_a_chunk_that_fails_is_retried_alone(webarena_tasks, samples, chunked, settings, monkeypatch):
    settings.IMPORT_CHUNK_RETRIES = 2
    calls = _failing_for(monkeypatch, "results.zip/results/render_12.html", times=2)
    job = _job(samples)
    run_import_job_task.apply(args=[job.pk])

    job.refresh_from_db()
    assert job.status == "done" and len(calls) == 3
    assert list(job.chunks.values_list("number", "attempts")) == [(0, 1), (1, 1), (2, 3), (3, 1), (4, 1)]
    assert job.report["counts"]["imported"] == 8 and job.report["ok"]


@pytest.mark.django_db
def test_a_chunk_that_keeps_failing_reports_its_files_failed_and_the_others_count(
        webarena_tasks, samples, chunked, settings, monkeypatch):
    settings.IMPORT_CHUNK_RETRIES = 1
    _failing_for(monkeypatch, "results.zip/results/render_12.html", times=10)
    job = _job(samples)
    run_import_job_task.apply(args=[job.pk])

    job.refresh_from_db()
    assert job.status == "done"
    failed = ImportChunk.objects.get(job=job, status="failed")
    assert failed.sources == ["results.zip/results/render_12.html", "results.zip/results/render_13.html"]
    assert failed.attempts == 2
    assert job.report["counts"] == {"imported": 6, "unchanged": 0, "replaced": 0, "failed": 2, "skipped": 0}
    assert {failure["record"] for failure in job.report["failures"]} == set(failed.sources)
    assert all("failed 2 times, last with ConnectionError: the database went away" in failure["reason"]
               for failure in job.report["failures"])
    assert sorted(Trajectory.objects.filter(run=job.run).values_list("task__task_id", flat=True)) == [
        "10", "11", "14", "15", "16"]
    assert (job.processed, job.total) == (8, 8)


@pytest.mark.django_db
def test_a_redelivered_job_sends_only_its_unfinished_chunks(webarena_tasks, samples, chunked, monkeypatch):
    job = _job(samples)
    sent = []
    monkeypatch.setattr(import_jobs.jobs, "send_task", lambda name, pk: sent.append(pk))
    run_import_job_task.apply(args=[job.pk])
    chunks = list(job.chunks.order_by("number"))
    assert sent == [chunk.pk for chunk in chunks[1:]]
    import_jobs.run_import_chunk(chunks[1].pk)

    sent.clear()
    run_import_job_task.apply(args=[job.pk])
    assert sent == [chunk.pk for chunk in chunks[2:]]
    assert ImportJob.objects.get(pk=job.pk).status == "running"


def test_the_chunks_of_one_job_run_on_two_real_workers_each_chunk_once(celery_workers, shared_data, settings):
    """Which worker takes which chunk is the broker's choice (both did, in the benchmark): each is run once."""
    import_task_file(shared_data / "webarena" / "test.raw.json")
    celery_workers.env.update(IMPORT_CHUNK_FILES="1")
    workers = [celery_workers.start(), celery_workers.start()]
    celery_workers.wait_until(lambda: all("ready." in _log(worker) for worker in workers), 90)
    job = _job(shared_data / "trajectory-samples")
    enqueue_import_job(job)

    celery_workers.wait_until(lambda: ImportJob.objects.get(pk=job.pk).status in ("done", "failed"), 180)
    job.refresh_from_db()
    assert job.status == "done", job.error
    assert job.chunks.count() == 8 and not job.chunks.exclude(status="done").exists()
    assert job.report["counts"]["imported"] == 8 and job.report["ok"], job.report
    assert Trajectory.objects.filter(run=job.run, success__isnull=False).count() == 7
    # The last chunk ends the job before its worker logs the chunk's success.
    celery_workers.wait_until(lambda: sum(len(CHUNK_DONE.findall(_log(worker))) for worker in workers) >= 7, 30)
    assert sum(len(CHUNK_DONE.findall(_log(worker))) for worker in workers) == 7, celery_workers.output()


def _log(worker) -> str:
    worker.log.seek(0)
    return worker.log.read()


def _faulty_workers(celery_workers, shared_data, tmp_path, retries: int, failures: int) -> Path:
    """Two real workers whose import of the chunk holding render_12.html fails its first `failures` times;
    returns the log of their chunk imports and tallies refreshes."""
    import_task_file(shared_data / "webarena" / "test.raw.json")
    log = tmp_path / "faulty-chunks.log"
    celery_workers.env.update(IMPORT_CHUNK_FILES="2", IMPORT_CHUNK_RETRIES=str(retries),
                              IMPORT_CHUNK_RETRY_SECONDS="0.5", FAULTY_CHUNK_LOG=str(log),
                              FAULTY_CHUNK_SOURCE="results.zip/results/render_12.html",
                              FAULTY_CHUNK_TIMES=str(failures))
    workers = [celery_workers.start(app="tests.trajectories.faulty_chunks") for _ in range(2)]
    celery_workers.wait_until(lambda: all("ready." in _log(worker) for worker in workers), 90)
    return log


def _ended(celery_workers, shared_data) -> ImportJob:
    job = _job(shared_data / "trajectory-samples")
    enqueue_import_job(job)
    celery_workers.wait_until(lambda: ImportJob.objects.get(pk=job.pk).status in ("done", "failed"), 180)
    job.refresh_from_db()
    return job


FAULTY_CHUNK = "import results.zip/results/render_12.html results.zip/results/render_13.html"
RENDER_CHUNKS = [FAULTY_CHUNK, "import results.zip/results/render_10.html results.zip/results/render_11.html",
                 "import results.zip/results/render_14.html results.zip/results/render_15.html",
                 "import results.zip/results/render_16.html"]


@pytest.mark.worker
def test_on_real_workers_a_failing_chunk_is_retried_alone_and_the_tallies_refreshed_once(
        celery_workers, shared_data, tmp_path):
    log = _faulty_workers(celery_workers, shared_data, tmp_path, retries=3, failures=2)
    job = _ended(celery_workers, shared_data)

    assert job.status == "done", job.error
    assert sorted(job.chunks.values_list("number", "attempts")) == [(0, 1), (1, 1), (2, 3), (3, 1), (4, 1)]
    lines = log.read_text().splitlines()
    assert sorted(line for line in lines if line in RENDER_CHUNKS) == sorted([*RENDER_CHUNKS, FAULTY_CHUNK,
                                                                             FAULTY_CHUNK]), lines
    assert lines.count(f"refresh [{job.run_id}]") == 1 and lines[-1] == f"refresh [{job.run_id}]", lines
    assert job.report["counts"]["imported"] == 8 and job.report["ok"], job.report
    assert Trajectory.objects.filter(run=job.run).count() == 7
    assert RunTally.objects.get(run=job.run).trajectories == 7


@pytest.mark.worker
def test_on_real_workers_a_chunk_that_keeps_failing_ends_the_job_with_its_reason(
        celery_workers, shared_data, tmp_path):
    log = _faulty_workers(celery_workers, shared_data, tmp_path, retries=1, failures=10)
    job = _ended(celery_workers, shared_data)

    assert job.status == "done", job.error
    assert job.chunks.get(status="failed").attempts == 2
    lines = log.read_text().splitlines()
    assert sorted(line for line in lines if line in RENDER_CHUNKS) == sorted([*RENDER_CHUNKS, FAULTY_CHUNK]), lines
    assert lines.count(f"refresh [{job.run_id}]") == 1, lines
    assert job.report["counts"]["imported"] == 6 and job.report["counts"]["failed"] == 2, job.report
    assert {failure["record"] for failure in job.report["failures"]} == {
        "results.zip/results/render_12.html", "results.zip/results/render_13.html"}
    assert all("failed 2 times, last with ConnectionError: the database went away" in failure["reason"]
               for failure in job.report["failures"])
    assert RunTally.objects.get(run=job.run).trajectories == 5
