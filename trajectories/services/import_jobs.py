"""Imports of uploaded files, recorded as ImportJob rows so that large uploads can run on a worker
while the uploader watches their progress.

The uploaded files are kept in storage under the job's own folder until the job has finished.
A worker reads them in place when the storage is a local folder and copies them to a temporary
folder first when it is not (an S3-compatible store), so web and workers may run on different
machines as long as they share the media storage (as they do for the screenshots).
"""

import contextlib
import logging
import shutil
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path

from django.conf import settings
from django.core.files import File
from django.db import transaction
from django.db.models import F
from kombu.exceptions import KombuError
from django.utils import timezone

from infrastructure import jobs
from infrastructure.storage import describe_storage
from trajectories.models import AgentRun, ImportChunk, ImportJob

from .ingest import FAILED, ImportParts, import_paths, merged_report, split_import
from .storable import storable_json, storable_text
from .tallies import refresh_tallies, remove_run

logger = logging.getLogger(__name__)
_STORAGE = ImportJob._meta.get_field("upload").storage
_PROGRESS_INTERVAL = 0.5  # seconds between progress writes
CHUNK_TASK = "trajectories.tasks.run_import_chunk_task"


def job_folder(job: ImportJob) -> str:
    return f"uploads/import-jobs/{job.pk}"


@transaction.atomic
def create_import_job(run: AgentRun, files: Iterable[tuple[str, File]], *, replace: bool = False,
                      user=None, new_run: bool = False) -> ImportJob:
    """Store the uploaded files for a new job; `files` are (file name, content) pairs. `new_run`:
    the run was created for this upload, and is removed again if the upload stores nothing."""
    jobs.check_job_limit(ImportJob, user)
    job = ImportJob.objects.create(run=run, run_name=run.name, new_run=new_run, replace=replace, created_by=user)
    folder = job_folder(job)
    saved = []
    try:
        for name, content in files:
            saved.append(_STORAGE.save(f"{folder}/{Path(name).name}", content))
    except BaseException:
        for name in saved:
            _STORAGE.delete(name)
        raise
    job.uploaded_files = saved
    job.save(update_fields=["uploaded_files"])
    return job


def enqueue_import_job(job: ImportJob) -> None:
    """Run the job on a worker once the upload is committed (in-process when no broker is set)."""
    jobs.enqueue(job)


class UploadsUnreadable(Exception):
    """The worker's media store does not hold the job's uploads: another store, or files removed."""

    def __init__(self, missing: list[str]):
        self.missing = missing
        super().__init__(
            f"the media store {describe_storage(_STORAGE)} does not hold {', '.join(missing)}. "
            "Check that this worker's MEDIA_STORAGE_URL (or MEDIA_ROOT) is the web's, then retry; "
            "the run and the uploads are kept.")


def _uploaded_names(job: ImportJob) -> list[str]:
    """The job's uploads, all present in the store, or UploadsUnreadable naming those that are not."""
    names = job.uploaded_files
    if not names:  # a job stored before its file names were recorded: whatever its folder holds
        with contextlib.suppress(FileNotFoundError):
            names = [f"{job_folder(job)}/{name}" for name in sorted(_STORAGE.listdir(job_folder(job))[1])]
        job.uploaded_files = names
    missing = [name for name in names if not _STORAGE.exists(name)]
    if missing:
        raise UploadsUnreadable(missing)
    return names


def _discard_uploads(job: ImportJob) -> None:
    for name in job.uploaded_files:
        with contextlib.suppress(OSError):
            _STORAGE.delete(name)
    with contextlib.suppress(OSError, NotImplementedError):
        Path(_STORAGE.path(job_folder(job))).rmdir()


@contextlib.contextmanager
def _local_copies(names: list[str]):
    """Local paths of stored files: in place for a folder storage, else copies that are removed afterwards."""
    try:
        in_place = [Path(_STORAGE.path(name)) for name in names]
    except NotImplementedError:  # a remote store: no local path at all
        in_place = []
    if all(path.is_file() for path in in_place) and len(in_place) == len(names):
        yield in_place
        return
    with tempfile.TemporaryDirectory(prefix="import-") as folder:
        paths = []
        for name in names:
            path = Path(folder) / Path(name).name
            with _STORAGE.open(name, "rb") as stored, path.open("wb") as local:
                shutil.copyfileobj(stored, local, length=1024 * 1024)
            paths.append(path)
        yield paths


def run_import_job(job_id: int, *, in_chunks: bool = False) -> ImportJob:
    """Import a job's files into its run, writing progress as it goes; the files are removed once
    the job is done. A job that is already done is left alone, so a redelivered task is harmless.

    `in_chunks` (a worker's job): an upload of more than IMPORT_CHUNK_FILES render files is split
    into chunks sent to the workers as tasks of their own (`run_import_chunk`); the job ends when
    its last chunk does. A job already split sends its unfinished chunks again."""
    job = ImportJob.objects.select_related("run").get(pk=job_id)
    if job.status == ImportJob.Status.DONE:
        return job
    if job.chunks.exists():
        _resume_chunks(job)
        job.refresh_from_db()
        return job
    job.started_at = timezone.now()
    ImportJob.objects.filter(pk=job.pk).update(status=ImportJob.Status.RUNNING, started_at=job.started_at,
                                               heartbeat_at=job.started_at)
    progress = _progress_writer(job)

    def work() -> dict | None:
        names = _uploaded_names(job)
        with _local_copies(names) as paths:
            parts = split_import(paths, settings.IMPORT_CHUNK_FILES) if in_chunks else None
            if parts is None:
                return import_paths(paths, job.run, replace=job.replace, progress=progress).to_dict()
            first = import_paths(paths, job.run, replace=job.replace, only=parts.first, refresh=False)
        _create_chunks(job, parts, first.to_dict())
        return None

    if _conclude(job, work) is None:
        _resume_chunks(job)
        job.refresh_from_db()
    return job


def _progress_writer(job: ImportJob):
    last_write = 0.0

    def progress(done: int, total: int) -> None:
        nonlocal last_write
        now = time.monotonic()
        if done in (0, total) or now - last_write >= _PROGRESS_INTERVAL:
            last_write = now
            ImportJob.objects.filter(pk=job.pk).update(processed=done, total=total, heartbeat_at=timezone.now())

    return progress


def _conclude(job: ImportJob, work) -> dict | None:
    """Run `work` (the import's report, or None when it goes on in chunks) and, unless it goes on,
    end the job: done with its report, or failed with the reason."""
    job.uploads_kept = False
    try:
        if job.run is None:
            raise LookupError(f"run {job.run_name!r} was deleted before the import started")
        report = work()
        if report is None:
            return None
    except UploadsUnreadable as error:
        logger.error("import job %s cannot read its uploads: %s", job.pk, error)
        job.status, job.error = ImportJob.Status.FAILED, storable_text(f"The uploads cannot be read: {error}")
        job.uploads_kept = True
    except Exception as error:  # noqa: BLE001 - the job records any failure instead of losing it
        logger.exception("import job %s failed", job.pk)
        job.status, job.error = ImportJob.Status.FAILED, storable_text(f"{type(error).__name__}: {error}")
    else:
        job.status, job.report = ImportJob.Status.DONE, storable_json(report)
        if imported_nothing(job.report):
            job.report["nothing_imported"] = nothing_imported_reason(
                job.report, [Path(name).name for name in job.uploaded_files])
    if not job.uploads_kept:  # nothing re-reads the files of a finished job, failed or not
        _discard_uploads(job)
    job.finished_at = timezone.now()
    job.save(update_fields=["status", "report", "error", "finished_at", "uploads_kept"])
    if not job.uploads_kept:
        _remove_empty_new_run(job)
    job.refresh_from_db()
    jobs.record_finished(job)
    return job.report


# Imports in chunks ---------------------------------------------------------------------------

_UNFINISHED = (ImportJob.Status.PENDING, ImportJob.Status.RUNNING)


@transaction.atomic
def _create_chunks(job: ImportJob, parts: ImportParts, first: dict) -> None:
    ImportChunk.objects.create(job=job, number=0, sources=parts.first, status=ImportJob.Status.DONE, attempts=1,
                               report=storable_json(first), finished_at=timezone.now())
    ImportChunk.objects.bulk_create(ImportChunk(job=job, number=number, sources=sources)
                                    for number, sources in enumerate(parts.chunks, start=1))
    job.last_sources, job.total, job.processed = parts.last, parts.count, len(parts.first)
    job.save(update_fields=["last_sources", "total", "processed"])


def _resume_chunks(job: ImportJob) -> None:
    """Send the job's unfinished chunks to the workers, or end the job when none is left."""
    unfinished = list(job.chunks.filter(status__in=_UNFINISHED).values_list("pk", flat=True))
    if not unfinished:
        _finish_chunked(job.pk)
        return
    for chunk_id in unfinished:
        try:
            jobs.send_task(CHUNK_TASK, chunk_id)
        except KombuError as error:  # the sweeper sends the job again, and the job its chunks
            logger.warning("could not send chunk %s of import job %s: %s", chunk_id, job.pk, error)
            return


def run_import_chunk(chunk_id: int) -> None:
    """Import one chunk of a job; raises on a failure of the chunk as a whole (the task retries it, then
    calls `fail_import_chunk`). A chunk already finished is left alone."""
    chunk = ImportChunk.objects.select_related("job__run").get(pk=chunk_id)
    if chunk.status not in _UNFINISHED:
        return
    job = chunk.job
    ImportChunk.objects.filter(pk=chunk.pk).update(status=ImportJob.Status.RUNNING, attempts=F("attempts") + 1)
    if job.run is None:
        raise LookupError(f"run {job.run_name!r} was deleted during the import")
    with _local_copies(_uploaded_names(job)) as paths:
        report = import_paths(paths, job.run, replace=job.replace, only=chunk.sources, refresh=False,
                              progress=lambda done, total: jobs.heartbeat(ImportJob, job.pk))
    _chunk_finished(chunk, ImportJob.Status.DONE, storable_json(report.to_dict()))


def fail_import_chunk(chunk_id: int, error: Exception) -> None:
    """A chunk that failed its last attempt: its files are reported failed, the others of the job count."""
    chunk = ImportChunk.objects.get(pk=chunk_id)
    reason = storable_text(f"not imported: its part of the upload failed {chunk.attempts} times, last with "
                           f"{type(error).__name__}: {error}")
    files = [{"file": name, "status": FAILED, "kind": "trajectory", "reason": reason} for name in chunk.sources]
    logger.error("chunk %s of import job %s failed: %s", chunk.pk, chunk.job_id, error)
    _chunk_finished(chunk, ImportJob.Status.FAILED, {"files": files}, error=reason)


def _chunk_finished(chunk: ImportChunk, status: str, report: dict, error: str = "") -> None:
    """Record a chunk's end; the job's row is locked, so exactly one chunk sees that none is left and
    ends the job."""
    with transaction.atomic():
        ImportJob.objects.select_for_update().filter(pk=chunk.job_id).values_list("pk").get()
        ended = ImportChunk.objects.filter(pk=chunk.pk, status__in=_UNFINISHED).update(
            status=status, report=report, error=error, finished_at=timezone.now())
        if not ended:
            return
        ImportJob.objects.filter(pk=chunk.job_id).update(processed=F("processed") + len(chunk.sources),
                                                         heartbeat_at=timezone.now())
        last = not ImportChunk.objects.filter(job_id=chunk.job_id, status__in=_UNFINISHED).exists()
    if last:
        _finish_chunked(chunk.job_id)


def _finish_chunked(job_id: int) -> None:
    """Import the files kept for last (run summaries apply to every trajectory stored by then), refresh the
    run's tallies once, and end the job with the chunks' reports merged."""
    job = ImportJob.objects.select_related("run").get(pk=job_id)
    if job.status not in _UNFINISHED:
        return

    def work() -> dict:
        parts = list(job.chunks.order_by("number").values_list("report", flat=True))
        if job.last_sources:
            with _local_copies(_uploaded_names(job)) as paths:
                parts.append(import_paths(paths, job.run, replace=job.replace, only=job.last_sources,
                                          refresh=False).to_dict())
        refresh_tallies([job.run.pk])
        ImportJob.objects.filter(pk=job.pk).update(processed=F("total"), heartbeat_at=timezone.now())
        return merged_report(job.run, parts).to_dict()

    _conclude(job, work)


def retry_import_job(job: ImportJob) -> None:
    """Send a stalled job, or one that could not read its kept uploads, to the workers again."""
    if job.status == ImportJob.Status.FAILED:
        job.status, job.error, job.finished_at = ImportJob.Status.PENDING, "", None
        job.save(update_fields=["status", "error", "finished_at"])
    jobs.retry(job)


# Uploads that import nothing -----------------------------------------------------------------

_STORED = ("imported", "unchanged", "replaced")
READABLE_FILES = ("render_<id>.html, trajectory/v1 JSON or JSONL, html2json output, harness logs "
                  "with [Result] lines, config.json or run.json")


def imported_nothing(report: dict) -> bool:
    """No trajectory, results log or run description of the upload was stored (or already there)."""
    return not any(report["counts"].get(status) for status in _STORED)


def nothing_imported_reason(report: dict, uploaded: list[str]) -> str:
    """What the uploader reads instead of a bare \"Done\": why nothing came of their files."""
    if report.get("refused"):
        return f"Nothing was imported: {report['refused']}"
    if report["files"]:
        return "Nothing was imported: every file failed or was skipped, for the reasons listed below."
    names = ", ".join(uploaded) if uploaded else "the upload"
    return (f"Nothing was imported: {names} held no file to import (an empty zip or folder, or files of "
            f"another kind, such as images on their own). Upload {READABLE_FILES}; zip a results folder whole.")


def _remove_empty_new_run(job: ImportJob) -> None:
    """A run created for an upload that stored nothing is removed, so that no empty run sits on the
    run list and the leaderboard to be \"evaluated\" 0 of 0, and its name stays free; the job keeps
    the name and says why the run is gone."""
    run = job.run
    if not job.new_run or run is None:
        return
    stored = any(entry["status"] in _STORED for entry in job.report.get("files", []))
    with transaction.atomic():
        if stored or run.trajectories.exists() or run.task_results.exists() or run.import_jobs.exclude(
                pk=job.pk).exists():
            return
        if job.report:
            job.report = {**job.report, "run_id": None, "run_removed": True}
        job.run = None
        job.save(update_fields=["run", "report"])
        remove_run(run)
