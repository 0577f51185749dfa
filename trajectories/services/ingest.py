"""Import of agent trajectories into a run: the one write path behind the command line, the
upload page, the API and the demo data.

Files are read one at a time and each trajectory is stored in its own transaction, so memory
does not grow with the run and a bad file costs only itself. A trajectory is identified by the
hash of its content (screenshots by the hash of their bytes): importing the same file again
changes nothing, and a different trajectory for a task the run already has is refused unless
the caller asks to replace it.
"""

import contextlib
import zipfile
import zlib
from collections import Counter
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path

from django.conf import settings
from django.db import IntegrityError, reset_queries, transaction
from django.utils import timezone

from trajectories.formats.canonical import TaskRef, Trajectory as ParsedTrajectory, TrajectoryFormatError
from trajectories.formats.harness import parse_harness_config, parse_results
from trajectories.formats.readers import NOT_UTF8, Record, decode, load_json, read_records
from trajectories.formats.screenshots import REFERENCE_PREFIX, Image, take_images
from trajectories.formats.sources import (
    HARNESS_CONFIG,
    RESULTS,
    RUN_DESCRIPTION,
    SKIPPED,
    TRAJECTORIES,
    Catalogue,
    ImportRefused,
    Limits,
    Source,
)
from trajectories.models import AgentRun, Step, Task, Trajectory

from .runs import describe_run, parse_run_description, record_harness_config
from .screenshots import discard_files, screenshot_ids, unstored, write_files

IMPORTED, UNCHANGED, REPLACED, FAILED, SKIPPED_STATUS = "imported", "unchanged", "replaced", "failed", "skipped"
STATUSES = (IMPORTED, UNCHANGED, REPLACED, FAILED, SKIPPED_STATUS)
_KINDS = {TRAJECTORIES: "trajectory", RESULTS: "results", RUN_DESCRIPTION: "run_description",
          HARNESS_CONFIG: "harness_config", SKIPPED: "other"}
_LISTED_TASKS = 20


@dataclass
class FileReport:
    """What became of one trajectory (or one results log, run description, other file) of the import."""

    file: str
    status: str
    kind: str = "trajectory"
    format: str = ""
    task_id: str = ""
    line: int | None = None
    where: str = ""
    reason: str = ""
    trajectory_id: int | None = None
    notes: list[str] = field(default_factory=list)

    def fail(self, error: TrajectoryFormatError) -> "FileReport":
        self.status, self.reason = FAILED, error.message
        self.where = error.where or self.where
        self.line = error.line or self.line
        return self

    @property
    def location(self) -> str:
        """File, line and field, as a person would look them up."""
        return ", ".join(part for part in (self.file, f"line {self.line}" if self.line else "", self.where) if part)


@dataclass
class ImportReport:
    run: str
    run_id: int | None = None
    files: list[FileReport] = field(default_factory=list)
    refused: str = ""

    def counts(self) -> dict[str, int]:
        found = Counter(entry.status for entry in self.files)
        return {status: found[status] for status in STATUSES}

    @property
    def failed(self) -> list[FileReport]:
        return [entry for entry in self.files if entry.status == FAILED]

    @property
    def ok(self) -> bool:
        return not self.refused and not self.failed

    def summary(self) -> str:
        if self.refused:
            return self.refused
        return ", ".join(f"{count} {status}" for status, count in self.counts().items())

    def to_dict(self) -> dict:
        return {
            "run": self.run,
            "run_id": self.run_id,
            "ok": self.ok,
            "refused": self.refused,
            "counts": self.counts(),
            "files": [asdict(entry) for entry in self.files],
        }


def ingest_limits() -> Limits:
    return Limits(
        max_files=settings.INGEST_MAX_FILES,
        max_total_bytes=settings.INGEST_MAX_UNCOMPRESSED_BYTES,
        max_file_bytes=settings.INGEST_MAX_FILE_BYTES,
        max_compression_ratio=settings.INGEST_MAX_COMPRESSION_RATIO,
    )


def import_paths(
    paths: list[Path],
    run: AgentRun,
    *,
    replace: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> ImportReport:
    """Import files, folders and zip archives of trajectories (any mix of the supported formats),
    result logs and run descriptions into `run`; `progress(done, total)` is called per file."""
    report = ImportReport(run=run.name, run_id=run.pk)
    try:
        catalogue = Catalogue([Path(path) for path in paths], ingest_limits())
    except ImportRefused as error:
        report.refused = f"import refused, nothing was read: {error}"
        return report
    with catalogue, _RunImport(run, replace, report) as run_import:
        total = len(catalogue)
        if progress:
            progress(0, total)
        for done, source in enumerate(catalogue, start=1):
            run_import.add(source)
            if done == total:
                run_import.finish()
            if progress:
                progress(done, total)
    return report


class _Refused(Exception):
    """A trajectory that is valid but may not be stored as asked."""


class _Unchanged(Exception):
    def __init__(self, trajectory_id: int):
        self.trajectory_id = trajectory_id


@dataclass
class _Pending:
    """A trajectory whose screenshot files are being written while the next one is read."""

    entry: FileReport
    task: Task
    parsed: ParsedTrajectory
    images: dict[str, Image]
    content_hash: str
    files: Future


class _RunImport:
    """The import of one batch of sources into a run.

    Writing a trajectory's screenshot files (disk-bound) overlaps with reading and parsing the
    next one (CPU-bound): the files go to a writer thread, and the trajectory's rows are stored
    once its files are written, while the following trajectory's files are being written.
    """

    def __init__(self, run: AgentRun, replace: bool, report: ImportReport):
        self.run, self.replace, self.report = run, replace, report
        self.tasks: dict[tuple[str, str], Task | None] = {}
        self.max_bytes = settings.INGEST_MAX_FILE_BYTES
        self.writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="screenshot-files")
        self.pending: _Pending | None = None
        # What the run holds, by task: (trajectory id, content hash). A first check only; the
        # transaction that stores a trajectory checks again.
        self.held = {task: (pk, digest) for pk, task, digest in
                     Trajectory.objects.filter(run=run).values_list("id", "task_id", "content_hash")}

    def __enter__(self) -> "_RunImport":
        return self

    def __exit__(self, exc_type, *exc) -> None:
        try:
            if exc_type is None:
                self.finish()
            elif self.pending is not None:
                with contextlib.suppress(Exception):
                    discard_files(self.pending.files.result().values())
        finally:
            self.writer.shutdown(wait=True)

    def add(self, source: Source) -> None:
        kind = _KINDS[source.kind]
        if source.kind != TRAJECTORIES:
            self.finish()  # results and run descriptions apply to what is stored
        if source.problem:
            self.report.files.append(FileReport(file=source.name, status=FAILED, kind=kind, reason=source.problem))
            return
        handler = {
            TRAJECTORIES: self._trajectories,
            RESULTS: self._results,
            RUN_DESCRIPTION: self._run_description,
            HARNESS_CONFIG: self._harness_config,
            SKIPPED: self._skipped,
        }[source.kind]
        try:
            handler(source)
        except TrajectoryFormatError as error:
            self.report.files.append(FileReport(file=source.name, status=FAILED, kind=kind).fail(error))
        except (OSError, EOFError, zipfile.BadZipFile, zlib.error) as error:
            self.report.files.append(
                FileReport(file=source.name, status=FAILED, kind=kind, reason=f"could not be read: {error}")
            )

    def finish(self) -> None:
        """Store the trajectory still waiting for its files."""
        if self.pending is not None:
            pending, self.pending = self.pending, None
            self._store(pending)
            # With DEBUG on, Django keeps the SQL of every query, page text included: a run's
            # import must not grow with the run.
            reset_queries()

    def _skipped(self, source: Source) -> None:
        reason = ("archives inside archives are not opened" if source.suffix == ".zip"
                  else "not a trajectory, result log or run description file")
        self.report.files.append(FileReport(file=source.name, status=SKIPPED_STATUS, kind="other", reason=reason))

    def _trajectories(self, source: Source) -> None:
        found = False
        with source.open() as stream:
            for record in read_records(source.name, stream, self.max_bytes):
                found = True
                self.report.files.append(self._import_record(source, record))
        if not found:
            raise TrajectoryFormatError("no trajectories in the file")

    def _import_record(self, source: Source, record: Record) -> FileReport:
        """Check and prepare one trajectory; its rows are stored by `_store`, after its files."""
        entry = FileReport(file=source.name, status=FAILED, format=record.format, line=record.line,
                           where=record.key, notes=list(record.notes))
        if record.error is not None:
            return entry.fail(record.error)
        parsed = record.trajectory
        entry.task_id = parsed.task.task_id
        task = self._task(parsed.task)
        if task is None:
            entry.reason = (f"task {parsed.task.benchmark}/{parsed.task.task_id} is not imported "
                            "(run manage.py import_tasks)")
            return entry
        if parsed.task.intent and " ".join(parsed.task.intent.split()) != " ".join(task.intent.split()):
            entry.notes.append(f"the file's intent differs from task {task}'s: {parsed.task.intent!r}")
        try:
            images = take_images(parsed, source.read_sibling)
            _check_lengths(parsed)
        except TrajectoryFormatError as error:
            return entry.fail(error)
        describe_run(self.run, parsed.run)

        content_hash = parsed.content_hash()
        existing = self.held.get(task.pk)
        if existing and existing[1] == content_hash:
            entry.status, entry.trajectory_id = UNCHANGED, existing[0]
            return entry
        if existing and not self.replace:
            entry.reason = self._refusal(task)
            return entry
        files = self.writer.submit(write_files, unstored(images))
        pending = _Pending(entry=entry, task=task, parsed=parsed, images=images, content_hash=content_hash,
                           files=files)
        self.finish()
        self.pending = pending
        return entry

    def _refusal(self, task: Task) -> str:
        return (f"run {self.run.name!r} already has a different trajectory for task {task}; "
                "import with replace (--replace) to replace it")

    def _task(self, ref: TaskRef) -> Task | None:
        key = (ref.benchmark, ref.task_id)
        if key not in self.tasks:
            self.tasks[key] = (
                Task.objects.filter(benchmark=ref.benchmark, task_id=ref.task_id)
                .only("id", "benchmark", "task_id", "intent")
                .first()
            )
        return self.tasks[key]

    def _store(self, pending: _Pending) -> None:
        """One transaction per trajectory; the check against what the run holds is repeated inside
        it, so two files for the same task in one upload, or two concurrent uploads, stay consistent."""
        entry, parsed, task = pending.entry, pending.parsed, pending.task
        try:
            written = pending.files.result()
        except OSError as error:
            entry.reason = f"screenshots could not be stored: {error}"
            return
        try:
            with transaction.atomic():
                current = Trajectory.objects.select_for_update().filter(run=self.run, task=task).first()
                if current is not None and current.content_hash == pending.content_hash:
                    raise _Unchanged(current.pk)
                if current is not None and not self.replace:
                    raise _Refused(self._refusal(task))
                ids, unused = screenshot_ids(pending.images, written)
                if current is not None:
                    current.delete()
                row = Trajectory.objects.create(
                    run=self.run,
                    task=task,
                    final_answer=_text(parsed.final_answer),
                    outcome_status=parsed.outcome.status,
                    outcome_reason=parsed.outcome.reason or "",
                    outcome_message=_text(parsed.outcome.message),
                    success=parsed.outcome.success,
                    plan=[_text(item) for item in parsed.plan],
                    step_count=len(parsed.steps),
                    content_hash=pending.content_hash,
                    source_name=entry.file[-500:],
                    source_format=entry.format,
                )
                Step.objects.bulk_create([_step_row(row, step, ids) for step in parsed.steps], batch_size=50)
        except _Unchanged as unchanged:
            discard_files(written.values())
            entry.status, entry.trajectory_id = UNCHANGED, unchanged.trajectory_id
            return
        except (_Refused, IntegrityError) as error:
            discard_files(written.values())
            entry.reason = str(error) if isinstance(error, _Refused) else f"could not be stored: {error}"
            return
        except BaseException:
            discard_files(written.values())
            raise
        discard_files(unused)
        entry.status = REPLACED if current is not None else IMPORTED
        entry.trajectory_id = row.pk
        self.held[task.pk] = (row.pk, pending.content_hash)

    def _results(self, source: Source) -> None:
        text, valid = decode(source.read())
        verdicts = parse_results(text)
        entry = FileReport(file=source.name, status=UNCHANGED, kind="results", format="webarena_results",
                           notes=[] if valid else [NOT_UTF8])
        if not verdicts:
            entry.status, entry.reason = SKIPPED_STATUS, "no [Result] PASS|FAIL lines"
            self.report.files.append(entry)
            return
        with transaction.atomic():
            rows = list(
                Trajectory.objects.select_for_update()
                .filter(run=self.run, task__benchmark=self.run.benchmark, task__task_id__in=list(verdicts))
                .select_related("task")
            )
            changed = [row for row in rows if row.success != verdicts[row.task.task_id]]
            now = timezone.now()
            for row in changed:
                row.success, row.updated_at = verdicts[row.task.task_id], now
            Trajectory.objects.bulk_update(changed, ["success", "updated_at"], batch_size=500)
        passed = sum(verdicts.values())
        entry.notes.append(f"{len(verdicts)} results ({passed} PASS, {len(verdicts) - passed} FAIL); "
                           f"{len(changed)} trajectories updated")
        missing = sorted(set(verdicts) - {row.task.task_id for row in rows}, key=_natural)
        if missing:
            listed = ", ".join(missing[:_LISTED_TASKS]) + (" ..." if len(missing) > _LISTED_TASKS else "")
            entry.notes.append(f"{len(missing)} results for tasks without a trajectory in this run: {listed}")
        if changed:
            entry.status = IMPORTED
        self.report.files.append(entry)

    def _run_description(self, source: Source) -> None:
        changed = describe_run(self.run, parse_run_description(source.read()))
        self.report.files.append(FileReport(file=source.name, status=IMPORTED if changed else UNCHANGED,
                                            kind="run_description", format="trajectory_v1_run"))

    def _harness_config(self, source: Source) -> None:
        config = parse_harness_config(load_json(decode(source.read())[0]))
        changed = record_harness_config(self.run, config)
        self.report.files.append(FileReport(file=source.name, status=IMPORTED if changed else UNCHANGED,
                                            kind="harness_config", format="webarena_config"))


def _natural(task_id: str) -> tuple:
    return (0, int(task_id), "") if task_id.isdigit() else (1, 0, task_id)


def _text(value: str | None) -> str | None:
    """PostgreSQL text cannot hold NUL characters; page text occasionally does."""
    return value.replace("\x00", "\ufffd") if value and "\x00" in value else value


_STEP_LIMITS = {name: Step._meta.get_field(name).max_length for name in ("action_type", "element_id")}


def _check_lengths(parsed: ParsedTrajectory) -> None:
    for position, step in enumerate(parsed.steps):
        parts = step.action_parts
        for name, value in (("action_type", parts.type), ("element_id", parts.element_id)):
            if len(value) > _STEP_LIMITS[name]:
                raise TrajectoryFormatError(
                    f"longer than {_STEP_LIMITS[name]} characters",
                    where=f"steps[{position}].action_parts.{'type' if name == 'action_type' else name}",
                )


def _step_row(trajectory: Trajectory, step, screenshot_ids: dict[str, int]) -> Step:
    parts = step.action_parts
    screenshot = step.screenshot.removeprefix(REFERENCE_PREFIX) if step.screenshot else None
    return Step(
        trajectory=trajectory,
        index=step.index,
        url=_text(step.url),
        observation=_text(step.observation),
        reasoning=_text(step.reasoning),
        planned_action=_text(step.planned_action),
        action=_text(step.action),
        action_type=parts.type,
        element_id=_text(parts.element_id),
        element_label=_text(parts.element_label),
        action_value=_text(parts.value),
        press_enter=parts.press_enter,
        prev_action=_text(step.prev_action),
        screenshot_id=screenshot_ids[screenshot] if screenshot else None,
    )
