"""Import of agent trajectories into a run: the one write path behind the command line, the
upload page, the API and the demo data.

Files are parsed, and their screenshot files written, by a pool of worker processes (see
`reading`) and stored one at a time, each record (a trajectory) whole or not at all: memory does
not grow with the run, and a record that cannot be read or stored fails alone, named, while the
other records of its file (a JSONL line, an element of a list, an evaluator's record) are stored.
Consecutive trajectory files are committed in batches, each record of a file of many in a
savepoint of its own: a commit waits for the database's disk, once per batch rather than once
per file. The
plain case, a file of one new trajectory, takes no savepoint: its rows wait, and the batch's are
written in a few statements (screenshots, trajectories, one COPY of the steps); should one of
them fail, the batch's trajectories are written again one by one, so the one at fault fails
alone. A trajectory is identified by the
hash of its content (screenshots by the hash of their bytes): importing the same file again
changes nothing, and a different trajectory for a task the run already has is refused unless
the caller asks to replace it.
"""

import contextlib
import posixpath
import time
import zipfile
import zlib
from collections import Counter
from collections.abc import Callable, Collection
from concurrent.futures.process import BrokenProcessPool
from dataclasses import asdict, dataclass, field
from pathlib import Path

from django.conf import settings
from django.db import DataError, IntegrityError, connection, reset_queries, transaction

from trajectories.formats import mind2web_live, online_mind2web, webarena_verified
from trajectories.formats.browsergym_agentlab import companion_reason, is_study_results, parse_study_results
from trajectories.formats.canonical import (MAX_DEPTH, RunSummary, TaskRef, Trajectory as ParsedTrajectory,
                                            TrajectoryFormatError)
from trajectories.formats.format_traces import FORMAT as TRACE
from trajectories.formats.harness import parse_harness_config, parse_results
from trajectories.formats.readers import NOT_UTF8, Record
from trajectories.formats.text import decode_utf8
from trajectories.formats.screenshots import REFERENCE_PREFIX
from trajectories.formats.sources import (
    HARNESS_CONFIG,
    LOG_LIST,
    RESULTS,
    RUN_DESCRIPTION,
    SKIPPED,
    TRAJECTORIES,
    Catalogue,
    ImportRefused,
    Limits,
    Source,
)
from trajectories.formats.values import load_json
from trajectories.events import failure_labels_read
from trajectories.models import AgentRun, RunTally, Step, Task, TaskResult, Trajectory, Verdict, VerdictSource

from .reading import read_images_again, read_sources
from .runs import describe_run, parse_run_description, record_harness_config, run_changes
from .storable import storable_json, storable_text
from .tallies import refresh_tallies
from .screenshots import batch_screenshot_ids, discard_files, discard_written_ahead, screenshot_ids, take_files
from .harness_verdicts import record_verdicts, recorded_verdict, take_up
from .tasks import task_from_file

IMPORTED, UNCHANGED, REPLACED, FAILED, SKIPPED_STATUS = "imported", "unchanged", "replaced", "failed", "skipped"
STATUSES = (IMPORTED, UNCHANGED, REPLACED, FAILED, SKIPPED_STATUS)
_KINDS = {TRAJECTORIES: "trajectory", RESULTS: "results", LOG_LIST: "results", RUN_DESCRIPTION: "run_description",
          HARNESS_CONFIG: "harness_config", SKIPPED: "other"}
_LISTED_TASKS = 20
# Benchmarks whose tasks always come from their published task files (manage.py import_tasks). The
# tasks of any other benchmark are created from the trajectories that name them, until a task file
# of that benchmark is imported.
_TASK_FILE_BENCHMARKS = frozenset({webarena_verified.BASE_BENCHMARK, "webarena-lite", webarena_verified.BENCHMARK,
                                   mind2web_live.BENCHMARK})
TASKS_NAMED_BY_RESULTS = frozenset({online_mind2web.BENCHMARK})
# A batch of trajectory files is committed after this many files or seconds, whichever comes first:
# the rows it writes are locked, and the files it stored unseen, until it commits.
BATCH_FILES = 50
BATCH_SECONDS = 0.5


def has_task_list(benchmark: str) -> bool:
    """Whether the benchmark's tasks come from its task list, so that files naming others cannot create them."""
    return benchmark in _TASK_FILE_BENCHMARKS or Task.objects.filter(benchmark=benchmark, from_task_list=True).exists()


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
        # The record's place in its file (`[3]`), then the field, unless the error names both already.
        inner = "" if error.where == "(document)" else error.where
        self.where = (f"{self.where}.{inner}" if self.where and inner and not inner.startswith(self.where)
                      else inner or self.where)
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

    def failures_said(self, most: int = 10) -> str:
        """The failed records named (file, line or record, field), the first `most` of them."""
        named = "; ".join(entry.location for entry in self.failed[:most])
        return named + (f" and {len(self.failed) - most} more" if len(self.failed) > most else "")

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
            "run_removed": False,
            "failures": [{"record": entry.location, "task_id": entry.task_id, "reason": entry.reason}
                         for entry in self.failed],
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
    only: Collection[str] | None = None,
    refresh: bool = True,
) -> ImportReport:
    """Import files, folders and zip archives of trajectories (any mix of the supported formats),
    result logs, format traces and run descriptions into `run`; `progress(done, total)` is called
    whenever what is done is committed (after each batch of trajectory files, each other file).
    Each record is stored whole or not at all, and fails alone. `only`: the names of the sources to
    import (a part of the import, see `split_import`); `refresh` False leaves the run's tallies to
    whoever imports the last part."""
    report = ImportReport(run=run.name, run_id=run.pk)
    try:
        catalogue = Catalogue([Path(path) for path in paths], ingest_limits())
    except ImportRefused as error:
        report.refused = f"import refused, nothing was read: {error}"
        return report
    if only is not None:
        wanted = set(only)
        catalogue.sources = [source for source in catalogue.sources if source.name in wanted]
    run_import = _RunImport(run, replace, report, catalogue)
    with catalogue, contextlib.closing(
            read_sources(catalogue.sources, settings.INGEST_MAX_FILE_BYTES, run_import.will_store)) as contents, \
            run_import:
        total = len(catalogue)
        if progress:
            progress(0, total)
        for done, (source, content) in enumerate(contents, start=1):
            committed = run_import.add(source, content)
            if progress and committed and done < total:
                progress(done, total)
        run_import.finish()
        if refresh:
            refresh_tallies([run.pk])
        if progress:
            progress(total, total)
    return report


@dataclass
class ImportParts:
    """An import split into parts that keep its order: `first` (run descriptions, harness configs)
    before any trajectory, the `chunks` side by side, `last` (anything that may be a run summary,
    a format trace or a results log, and archives) once every chunk is stored."""

    first: list[str]
    chunks: list[list[str]]
    last: list[str]

    @property
    def count(self) -> int:
        return len(self.first) + sum(map(len, self.chunks)) + len(self.last)


def split_import(paths: list[Path], files_per_chunk: int) -> ImportParts | None:
    """The sources of an import in parts, or None when it does not split into two chunks at least (or
    is refused whole: `import_paths` says why). Only render files (HTML) go into chunks: a file that
    holds one trajectory and nothing a later file depends on."""
    try:
        catalogue = Catalogue([Path(path) for path in paths], ingest_limits())
    except ImportRefused:
        return None
    with catalogue:
        first = [source.name for source in catalogue if source.kind in (RUN_DESCRIPTION, HARNESS_CONFIG)]
        alone = [source.name for source in catalogue
                 if source.kind == TRAJECTORIES and not source.problem and source.suffix in (".html", ".htm")]
        taken = {*first, *alone}
        last = [source.name for source in catalogue if source.name not in taken]
    if len(alone) <= files_per_chunk:
        return None
    chunks = [alone[start:start + files_per_chunk] for start in range(0, len(alone), files_per_chunk)]
    return ImportParts(first=first, chunks=chunks, last=last)


def merged_report(run: AgentRun, parts: list[dict]) -> ImportReport:
    """One report of an import made in parts, from the parts' `ImportReport.to_dict()` in order."""
    return ImportReport(run=run.name, run_id=run.pk,
                        files=[FileReport(**entry) for part in parts for entry in part.get("files", [])])


class _Refused(Exception):
    """A trajectory that is valid but may not be stored as asked."""


class _Unchanged(Exception):
    def __init__(self, trajectory_id: int):
        self.trajectory_id = trajectory_id


class _RecordFailed(Exception):
    """A record of the file could not be stored: its savepoint is rolled back."""

    def __init__(self, entry: "FileReport"):
        self.entry = entry


@dataclass
class _Pending:
    """A trajectory checked, its screenshot files written, whose rows wait to be written with the
    rest of its batch."""

    entry: FileReport
    task: Task
    record: Record
    files: dict[str, str]


class _RunImport:
    """The import of the sources of one call into a run: each record of a trajectory file in a
    savepoint of its own, so that one bad trajectory (a JSONL line, an element of a list) fails alone,
    inside a transaction per batch of consecutive trajectory files (at most BATCH_FILES files
    or BATCH_SECONDS); other files each in their own transactions. The new trajectories of files
    of one trajectory that write nothing else wait, checked, and are written together when the
    batch commits: a few statements per batch rather than a few per file."""

    def __init__(self, run: AgentRun, replace: bool, report: ImportReport, catalogue: Catalogue):
        self.run, self.replace, self.report, self.catalogue = run, replace, report, catalogue
        self.tasks: dict[str, dict[str, Task]] = {}
        # Benchmarks with an imported task list: their tasks come from it, never from trajectories.
        self.max_bytes = settings.INGEST_MAX_FILE_BYTES
        self.traces: list[tuple[Source, Record]] = []
        self.summaries: list[tuple[Source, Record]] = []  # run summaries, read once every trajectory is stored
        # What the run holds, by task: (trajectory id, content hash). A first check only; the
        # transaction that stores a trajectory checks again.
        self.held: dict[int, tuple[int, str]] = {}
        # The same by benchmark and task id, for the readers to tell which trajectories will be
        # stored (their screenshot files are written where they are read).
        self.held_hashes: dict[tuple[str, str], str] = {}
        for pk, task, benchmark, task_id, digest in Trajectory.objects.filter(run=run).values_list(
                "id", "task_id", "task__benchmark", "task__task_id", "content_hash"):
            self.held[task] = (pk, digest)
            self.held_hashes[(benchmark, task_id)] = digest
        # Tasks (pks) with a kept harness verdict (an earlier upload, a results file), for trajectories to take up.
        self.verdict_tasks = set(TaskResult.objects.filter(run=run).values_list("task_id", flat=True))
        # Tasks (pks) stored by this import: (file, the run its file names), and those of the file being stored.
        self.given: dict[int, tuple[str, str]] = {}
        self.giving: dict[int, tuple[str, str]] = {}
        # Benchmarks whose task list is imported: a task id they do not hold is refused, not created.
        self.listed_benchmarks: dict[str, bool] = {}
        self.verdict_sources: dict[tuple[str, str, str], VerdictSource] = {}
        # The open batch: its transaction, files, start, and the screenshot files its files wrote.
        self.batch: transaction.Atomic | None = None
        self.batch_files, self.batch_started = 0, 0.0
        self.batch_written: list[str] = []
        self.pending: list[_Pending] = []

    def __enter__(self) -> "_RunImport":
        return self

    def __exit__(self, error_type, error, traceback) -> None:
        """Commit the open batch, or roll it back (with the screenshot files of its files) when the
        import stops with an error."""
        if error_type is None:
            try:
                self._commit()
            except BaseException as failure:
                self._roll_back(type(failure), failure, failure.__traceback__)
                raise
        else:
            self._roll_back(error_type, error, traceback)

    def _roll_back(self, error_type, error, traceback) -> None:
        self.pending = []
        if self.batch is not None:
            batch, self.batch = self.batch, None
            try:
                batch.__exit__(error_type, error, traceback)
            finally:
                discard_files(self.batch_written)
                self.batch_written = []

    def _begin_batch(self) -> None:
        if self.batch is not None:
            return
        self.batch = transaction.atomic()
        self.batch.__enter__()
        self.batch_files, self.batch_started = 0, time.monotonic()
        # As a single write's signal does: readers recount the run until the import refreshes its tallies.
        RunTally.objects.filter(run=self.run).delete()

    def _commit(self) -> None:
        if self.batch is None:
            return
        self._flush()
        batch, self.batch = self.batch, None
        try:
            batch.__exit__(None, None, None)
        except BaseException:
            discard_files(self.batch_written)
            raise
        finally:
            self.batch_written = []

    def will_store(self, record: Record) -> bool:
        """Whether a trajectory just read is likely to be stored: not what the run held when the
        import began, nor refused for replacing it. Runs where the file is read (a forked worker
        sees the import as it began); storing decides again."""
        held = self.held_hashes.get((record.trajectory.task.benchmark, record.trajectory.task.task_id))
        return held is None or (self.replace and held != record.content_hash)

    def add(self, source: Source, content) -> bool:
        """Import one source; `content` is what `read_sources` read of it. Returns whether all that
        is stored so far is committed (no batch left open)."""
        if source.kind == TRAJECTORIES:
            self._begin_batch()
        else:
            self._commit()
        self._add(source, content)
        if self.batch is not None:
            self.batch_files += 1
            if self.batch_files >= BATCH_FILES or time.monotonic() - self.batch_started >= BATCH_SECONDS:
                self._commit()
        return self.batch is None

    def _add(self, source: Source, content) -> None:
        kind = _KINDS[source.kind]
        if source.problem:
            self.report.files.append(FileReport(file=source.name, status=FAILED, kind=kind, reason=source.problem))
            return
        handler = {
            TRAJECTORIES: self._trajectories,
            RESULTS: self._results,
            LOG_LIST: self._log_list,
            RUN_DESCRIPTION: self._run_description,
            HARNESS_CONFIG: self._harness_config,
            SKIPPED: self._skipped,
        }[source.kind]
        try:
            if isinstance(content, BaseException):
                raise content
            handler(source, content)
        except TrajectoryFormatError as error:
            self.report.files.append(FileReport(file=source.name, status=FAILED, kind=kind).fail(error))
        except (OSError, EOFError, zipfile.BadZipFile, zlib.error, BrokenProcessPool) as error:
            self.report.files.append(
                FileReport(file=source.name, status=FAILED, kind=kind, reason=f"could not be read: {error}")
            )
        except RecursionError:
            self.report.files.append(FileReport(file=source.name, status=FAILED, kind=kind,
                                                reason=f"nested deeper than {MAX_DEPTH} levels"))
        finally:
            # With DEBUG on, Django keeps the SQL of every query, page text included: a run's
            # import must not grow with the run.
            reset_queries()

    def finish(self) -> None:
        """Apply the format traces and run summaries, once every trajectory they may belong to is stored."""
        self._commit()
        traces, self.traces = self.traces, []
        for source, record in traces:
            self.report.files.append(self._trace(source, record))
        summaries, self.summaries = self.summaries, []
        for source, record in summaries:
            self._run_summary(source, record.summary, record.notes)

    def _skipped(self, source: Source, content=None) -> None:
        reason = ("archives inside archives are not opened" if source.suffix == ".zip"
                  else companion_reason(source.name) or "not a trajectory, result log or run description file")
        self.report.files.append(FileReport(file=source.name, status=SKIPPED_STATUS, kind="other", reason=reason))

    def _trajectories(self, source: Source, records) -> None:
        entries: list[FileReport] = []
        written: list[str] = []
        stored: dict[int, tuple[int, str]] = {}
        # A file of one trajectory needs no savepoint: if storing it fails, so does the file.
        alone = isinstance(records, list) and len(records) == 1
        defer = alone and self._deferrable(records[0])
        if not defer:
            self._flush()  # what the file checks against, and writes after, is stored first
        try:
            # The file's own transaction is undone only when the file cannot be read to its end;
            # each of its records is stored or fails alone (`_record`).
            with contextlib.nullcontext() if defer else transaction.atomic():
                for record in records:
                    if record.format == TRACE:
                        self.traces.append((source, record))
                        return
                    if record.summary is not None:
                        self.summaries.append((source, record))
                        return
                    if record.skipped:
                        entry = FileReport(file=source.name, status=SKIPPED_STATUS, kind="other",
                                           format=record.format, reason=record.skipped, notes=list(record.notes))
                    else:
                        entry = self._record(source, record, written, stored, alone=alone, defer=defer)
                    entries.append(entry)
                if not entries:
                    raise TrajectoryFormatError("no trajectories in the file")
        except BaseException:
            # The file could not be read to its end (a JSONL file read as it is stored): nothing
            # of it was kept.
            self.run.refresh_from_db()
            self.tasks.clear()
            discard_files(written)
            for entry in entries:
                if entry.status in (IMPORTED, REPLACED):
                    entry.status, entry.trajectory_id = FAILED, None
                    entry.reason = "not stored: the file could not be read to its end"
            raise
        else:
            if alone and entries[0].status == FAILED and record.error is None:
                self._forget(record)  # the file's transaction undid what the record wrote
            self.held.update(stored)
            self.given.update(self.giving)
            self.batch_written.extend(written)
        finally:
            self.giving.clear()
            self.report.files.extend(entries)
            if isinstance(records, list):  # files written ahead for what was not stored after all
                discard_written_ahead(records)

    def _record(self, source: Source, record: Record, written: list[str], stored: dict, *, alone: bool,
                defer: bool) -> FileReport:
        """One record of a file, stored whole or not at all, whatever becomes of the file's others:
        in a savepoint of its own unless it is the file's only one (then the file's transaction is its)."""
        if record.error is not None or defer:
            return self._store(source, record, written, stored, defer=defer)
        try:
            with transaction.atomic(savepoint=not alone):
                entry = self._store(source, record, written, stored)
                if entry.status == FAILED:
                    raise _RecordFailed(entry)
            return entry
        except _RecordFailed as failed:
            entry = failed.entry
            entry.notes = list(record.notes)  # what storing it noted (a task made) was undone with it
        except (IntegrityError, DataError) as error:
            entry = self._entry(source, record)
            entry.reason = f"could not be stored: {error}"
        if not alone:
            self._forget(record)
        return entry

    def _forget(self, record: Record) -> None:
        """What the import holds in memory of the writes of a record that were undone: the run's
        description, and the tasks of its benchmark (an intent set on one)."""
        self.run.refresh_from_db()
        self.tasks.pop(record.trajectory.task.benchmark, None)

    def _entry(self, source: Source, record: Record) -> FileReport:
        return FileReport(file=source.name, status=FAILED, format=record.format, line=record.line,
                          where=record.key, notes=list(record.notes),
                          task_id=record.trajectory.task.task_id if record.trajectory else "")

    def _store(self, source: Source, record: Record, written: list[str], stored: dict, *,
               defer: bool = False) -> FileReport:
        """Check and store one trajectory of the file, inside the record's transaction; when `defer`,
        check it and leave its rows to the batch."""
        entry = self._entry(source, record)
        if record.error is not None:
            return entry.fail(record.error)
        parsed = record.trajectory
        task = self._task(parsed.task)
        if task is None:
            task = self._version_with_text(parsed.task)
            if task is not None:
                entry.notes.append(f"task {parsed.task.benchmark}/{parsed.task.task_id} is not imported: "
                                   f"stored as a trajectory of its version {task}, whose text the file has")
            else:
                task = self._task_from_file(parsed.task, entry)
        if task is not None and not task.intent and parsed.task.intent.strip():
            # A verdict without its episode (a study's results) named the task without its intent.
            task.intent = storable_text(parsed.task.intent).strip()
            task.save(update_fields=["intent", "updated_at"])
        if task is None:
            entry.reason = (f"task {parsed.task.benchmark}/{parsed.task.task_id} is not imported "
                            "(run manage.py import_tasks)")
            return entry
        if parsed.task.intent and " ".join(parsed.task.intent.split()) != " ".join(task.intent.split()):
            entry.notes.append(f"the file's intent differs from task {task}'s: {parsed.task.intent!r}")
            version = self._version_with_text(parsed.task)
            if version is not None:
                entry.notes.append(f"task {version}, another version of this task, has the file's text: "
                                   "the result may belong to that version")
        try:
            _check_lengths(parsed)
            _check_verdict_sources(parsed)
        except TrajectoryFormatError as error:
            return entry.fail(error)
        describe_run(self.run, parsed.run)
        if not (self.held or stored or self.verdict_tasks) and self.run.benchmark != task.benchmark:
            # A run holding nothing yet is a run on the benchmark of its first trajectory.
            self.run.benchmark = task.benchmark
            self.run.save(update_fields=["benchmark", "updated_at"])

        existing = stored.get(task.pk) or self.held.get(task.pk)
        if existing and existing[1] == record.content_hash:
            entry.status, entry.trajectory_id = UNCHANGED, existing[0]
            self.giving[task.pk] = (source.name, parsed.run.name)
            return entry
        given_by, given_run = self.given.get(task.pk, ("", ""))
        if existing and given_by and given_run != parsed.run.name:
            entry.status = SKIPPED_STATUS
            entry.reason = (f"a second trajectory of task {task}, from other results in this upload "
                            f"({parsed.run.name or 'unnamed'}): {given_by} gave run {self.run.name!r} its "
                            "trajectory of this task, and a run holds one per task; import these results as a "
                            "run of their own")
            return entry
        if existing and not self.replace:
            entry.reason = self._refusal(task)
            return entry
        try:
            read_images_again(source, record, self.max_bytes)
            files = take_files(record)
        except OSError as error:
            entry.reason = f"screenshots could not be stored: {error}"
            return entry
        if defer:
            self.pending.append(_Pending(entry, task, record, files))
            written.extend(files.values())
            entry.status = IMPORTED
            stored[task.pk] = (None, record.content_hash)  # its id once the batch writes it
            self.giving[task.pk] = (source.name, parsed.run.name)
            return entry
        try:
            with transaction.atomic(savepoint=False):  # the record's transaction is its
                row, replaced = self._rows(entry, task, record, files, held=existing is not None)
        except BaseException as error:
            discard_files(files.values())
            if isinstance(error, _Unchanged):
                entry.status, entry.trajectory_id = UNCHANGED, error.trajectory_id
                self.giving[task.pk] = (source.name, parsed.run.name)
                return entry
            if isinstance(error, (_Refused, IntegrityError, DataError)):
                entry.reason = str(error) if isinstance(error, _Refused) else f"could not be stored: {error}"
                return entry
            raise
        written.extend(files.values())
        entry.status = REPLACED if replaced else IMPORTED
        entry.trajectory_id = row.pk
        stored[task.pk] = (row.pk, record.content_hash)
        self.giving[task.pk] = (source.name, parsed.run.name)
        return entry

    def _rows(self, entry: FileReport, task: Task, record: Record, written: dict[str, str], *, held: bool):
        """The trajectory's rows. The check against what the run holds is repeated under a row lock
        when it holds the task's trajectory; a concurrent import of a task it did not hold meets
        the (run, task) unique constraint instead, so the run stays consistent either way."""
        parsed = record.trajectory
        current = Trajectory.objects.select_for_update().filter(run=self.run, task=task).first() if held else None
        if current is not None and current.content_hash == record.content_hash:
            raise _Unchanged(current.pk)
        if current is not None and not self.replace:
            raise _Refused(self._refusal(task))
        ids, unused = screenshot_ids(record.images, written)
        if current is not None:
            current.delete()
        kept = recorded_verdict(self.run, task) if task.pk in self.verdict_tasks else None
        success, success_source, outputs = take_up(kept, parsed, entry.file)
        # Created without the save signal, which would drop the run's tallies once per file: the batch did.
        [row] = Trajectory.objects.bulk_create([self._new_trajectory(entry, task, record, success, success_source)])
        outputs = outputs or [""] * len(parsed.steps)
        insert_steps([_step_values(row.pk, step, ids, output) for step, output in zip(parsed.steps, outputs)])
        self._store_verdicts(row, parsed, entry.file)
        if parsed.failure_labels:
            failure_labels_read.send(sender=Trajectory, trajectory=row, labels=parsed.failure_labels, file=entry.file)
        if unused:
            transaction.on_commit(lambda: discard_files(unused))
        return row, current is not None

    def _new_trajectory(self, entry: FileReport, task: Task, record: Record, success: bool | None,
                        success_source: str) -> Trajectory:
        parsed = record.trajectory
        return Trajectory(
            **_totals(parsed),
            success_by=storable_text(parsed.outcome.source) if parsed.outcome.success is not None else "",
            run=self.run,
            task=task,
            final_answer=storable_text(parsed.final_answer),
            outcome_status=parsed.outcome.status,
            outcome_reason=parsed.outcome.reason or "",
            outcome_message=storable_text(parsed.outcome.message),
            success=success,
            success_source=success_source[-500:],
            plan=[storable_text(item) for item in parsed.plan],
            step_count=len(parsed.steps),
            content_hash=record.content_hash,
            source_name=entry.file[-500:],
            source_format=entry.format,
        )

    def _deferrable(self, record: Record) -> bool:
        """Whether the file's one trajectory may wait for its batch: new to the run (and to the
        batch), of a task already held, taking up no kept verdict, bringing no verdicts or failure
        labels of its own, and changing nothing of the run, so that storing it later, with others,
        writes no less and no more than storing it now."""
        parsed = record.trajectory
        if (record.format == TRACE or record.summary is not None or record.skipped or record.error is not None
                or parsed.verdicts
                or parsed.failure_labels):
            return False
        task = self._task(parsed.task)
        if task is None or (not task.intent and parsed.task.intent.strip()):
            return False
        # What the run holds includes the trajectories waiting in the batch.
        if task.pk in self.held or task.pk in self.given or task.pk in self.verdict_tasks:
            return False
        if not (self.held or self.verdict_tasks) and self.run.benchmark != task.benchmark:
            return False
        return not run_changes(self.run, parsed.run)

    def _flush(self) -> None:
        """Write the rows of the trajectories waiting in the batch: their screenshot rows, trajectory
        rows and steps in one statement each. Should one of those fail (a row a concurrent import
        wrote, a value the database refuses), they are written again one by one, each in a
        savepoint, so that the trajectory at fault fails alone."""
        pending, self.pending = self.pending, []
        if not pending:
            return
        try:
            with transaction.atomic():
                ids, unused = batch_screenshot_ids([(item.record.images, item.files) for item in pending])
                rows = Trajectory.objects.bulk_create([
                    self._new_trajectory(item.entry, item.task, item.record, *take_up(None, item.record.trajectory,
                                                                                      item.entry.file)[:2])
                    for item in pending])
                insert_steps([_step_values(row.pk, step, ids, "")
                              for row, item in zip(rows, pending) for step in item.record.trajectory.steps])
        except (IntegrityError, DataError):
            for item in pending:
                self._store_waiting(item)
            return
        if unused:
            transaction.on_commit(lambda: discard_files(unused))
        for row, item in zip(rows, pending):
            item.entry.trajectory_id = row.pk
            self.held[item.task.pk] = (row.pk, item.record.content_hash)

    def _store_waiting(self, item: _Pending) -> None:
        """A waiting trajectory written alone, in a savepoint; if it fails, its file fails."""
        try:
            with transaction.atomic():
                row, _ = self._rows(item.entry, item.task, item.record, item.files, held=False)
        except (IntegrityError, DataError) as error:
            discard_files(item.files.values())
            gone = set(item.files.values())
            self.batch_written = [name for name in self.batch_written if name not in gone]
            self.held.pop(item.task.pk, None)
            self.given.pop(item.task.pk, None)
            item.entry.status, item.entry.trajectory_id = FAILED, None
            item.entry.reason = f"could not be stored: {error}"
            return
        item.entry.trajectory_id = row.pk
        self.held[item.task.pk] = (row.pk, item.record.content_hash)

    def _refusal(self, task: Task) -> str:
        return (f"run {self.run.name!r} already has a different trajectory for task {task}; "
                "import with replace (--replace) to replace it")

    def _version_with_text(self, ref: TaskRef) -> Task | None:
        """Where a benchmark keeps updated tasks under suffixed ids (Online-Mind2Web), another
        version of the file's task whose text is the file's."""
        if ref.benchmark != online_mind2web.BENCHMARK or not ref.intent.strip():
            return None
        original, text = online_mind2web.original_task_id(ref.task_id), " ".join(ref.intent.split())
        return next((task for task in self.tasks[ref.benchmark].values()
                     if task.task_id != ref.task_id and online_mind2web.original_task_id(task.task_id) == original
                     and " ".join(task.intent.split()) == text), None)

    def _task(self, ref: TaskRef) -> Task | None:
        """The task, from the benchmark's tasks read in one query the first time it is named."""
        if ref.benchmark not in self.tasks:
            self.tasks[ref.benchmark] = {
                task.task_id: task for task in
                Task.objects.filter(benchmark=ref.benchmark).only("id", "benchmark", "task_id", "intent")
            }
        return self.tasks[ref.benchmark].get(ref.task_id)

    def _task_from_file(self, ref: TaskRef, entry: FileReport | None = None) -> Task | None:
        """A task of a benchmark whose task list the platform does not hold (WorkArena, MiniWoB, a
        live-web benchmark), made from what the file says of it; None for a listed benchmark, except
        where the benchmark's list changes under its results (Online-Mind2Web's results name the
        version of the task they ran, with its text)."""
        if ref.benchmark not in self.listed_benchmarks:
            self.listed_benchmarks[ref.benchmark] = has_task_list(ref.benchmark)
        listed = self.listed_benchmarks[ref.benchmark]
        named = ref.benchmark in TASKS_NAMED_BY_RESULTS and bool(ref.intent.strip())
        if (listed and not named) or not (ref.task_id.isprintable() and ref.benchmark.isprintable()):
            return None
        task, created = task_from_file(ref.benchmark, ref.task_id, storable_text(ref.intent).strip(),
                                       storable_text(ref.reference_answer).strip())
        if created and entry is not None:
            held = "no task of this id" if listed else f"no task list of {ref.benchmark}"
            entry.notes.append(f"task {task} created from this file: the platform holds {held}")
        # Cached once the file's transaction commits: a rolled-back file leaves no task behind.
        transaction.on_commit(lambda: self.tasks[ref.benchmark].setdefault(task.task_id, task))
        return task

    def _store_verdicts(self, row: Trajectory, parsed: ParsedTrajectory, file: str) -> None:
        """The trajectory's verdicts from sources other than its harness, replacing the same
        sources' earlier verdicts on the task."""
        if not parsed.verdicts:
            return
        sources = [self._verdict_source(verdict) for verdict in parsed.verdicts]
        Verdict.objects.filter(run=self.run, task=row.task, source__in=sources).delete()
        Verdict.objects.bulk_create([
            Verdict(run=self.run, task=row.task, trajectory=row, source=source, success=verdict.success,
                    label=verdict.label, score=verdict.score, explanation=storable_text(verdict.explanation),
                    note=storable_text(verdict.note), labels=storable_json(verdict.labels), source_name=file[-500:])
            for verdict, source in zip(parsed.verdicts, sources)
        ])

    def _verdict_source(self, verdict) -> VerdictSource:
        key = (verdict.kind, verdict.name, verdict.model)
        source = self.verdict_sources.get(key)
        if source is None:
            source, _ = VerdictSource.objects.get_or_create(kind=verdict.kind, name=verdict.name, model=verdict.model,
                                                            screenshot_threshold=None,
                                                            defaults={"threshold": verdict.threshold})
            transaction.on_commit(lambda: self.verdict_sources.setdefault(key, source))
        return source

    def _trace(self, source: Source, record: Record) -> FileReport:
        """A format trace: the task's harness verdict, and its model outputs for the task's steps."""
        entry = FileReport(file=source.name, status=SKIPPED_STATUS, kind="harness_verdict", format=TRACE,
                           notes=list(record.notes))
        if record.error is not None:
            entry.reason = f"not a trajectory: prompt/response trace, not read: {record.error}"
            return entry
        trace = record.trace
        entry.task_id = trace.task_id
        verdict = {True: "PASS", False: "FAIL", None: "no verdict"}[trace.success]
        entry.notes.append(f"harness verdict {verdict}" + (f" ({trace.verdict_field})" if trace.verdict_field else "")
                           + f"; {len(trace.model_outputs)} model outputs")
        task = self._task(TaskRef(task_id=trace.task_id, benchmark=self.run.benchmark))
        if task is None:
            entry.reason = _unknown_tasks(self.run.benchmark, [trace.task_id])
            return entry
        applied = record_verdicts(self.run, {trace.task_id: trace.success}, source.name,
                                  {trace.task_id: trace.model_outputs})
        self.verdict_tasks |= applied.kept
        if trace.intent and " ".join(trace.intent.split()) != " ".join(task.intent.split()):
            entry.notes.append(f"the trace's intent differs from task {task}'s: {trace.intent!r}")
        for _, earlier, earlier_source in applied.overruled:
            entry.notes.append(f"replaces the verdict {'PASS' if earlier else 'FAIL'} from {earlier_source}")
        for _, steps in applied.attached:
            entry.notes.append(f"model outputs attached to the trajectory's {steps} steps, by order")
        for _, outputs, steps in applied.unaligned:
            entry.notes.append(f"{outputs} model outputs for {steps} steps: not attached to the steps")
        if applied.without_trajectory:
            entry.reason = ("verdict without trajectory: the run has no trajectory of this task; the verdict is "
                            "kept and shown on the run page" if trace.success is not None else
                            "not a trajectory: prompt/response trace, without a verdict or a trajectory of its task")
            return entry
        held = self.held.get(task.pk)
        entry.trajectory_id = held[0] if held else None
        entry.status = IMPORTED if applied.updated else UNCHANGED
        return entry

    def _results(self, source: Source, content=None) -> None:
        if is_study_results(source.name):
            self._study_results(source)
            return
        text, valid = decode_utf8(source.read())
        verdicts = parse_results(text)
        entry = FileReport(file=source.name, status=UNCHANGED, kind="results", format="webarena_results",
                           notes=[] if valid else [NOT_UTF8])
        if not verdicts:
            entry.status, entry.reason = SKIPPED_STATUS, "no [Result] PASS|FAIL lines"
            self.report.files.append(entry)
            return
        applied = record_verdicts(self.run, verdicts, source.name)
        self.verdict_tasks |= applied.kept
        # Verdicts on tasks the database does not hold get an entry of their own, skipped.
        unknown = [FileReport(file=source.name, status=SKIPPED_STATUS, kind="results", format="webarena_results",
                              reason=_unknown_tasks(self.run.benchmark, applied.unknown))] if applied.unknown else []
        for task_id in applied.unknown:
            del verdicts[task_id]
        if not verdicts:
            self.report.files.extend(unknown)
            return
        passed = sum(verdicts.values())
        entry.notes.append(f"{len(verdicts)} results ({passed} PASS, {len(verdicts) - passed} FAIL); "
                           f"{len(applied.updated)} trajectories updated")
        missing = sorted(applied.without_trajectory, key=_natural)
        if missing:
            listed = ", ".join(missing[:_LISTED_TASKS]) + (" ..." if len(missing) > _LISTED_TASKS else "")
            entry.notes.append(f"{len(missing)} verdicts without trajectory in this run, kept for the run page: "
                               f"{listed}")
        if applied.overruled:
            entry.notes.append(f"{len(applied.overruled)} verdicts differ from an earlier file's; this file's are kept")
        if applied.updated or applied.records_changed:
            entry.status = IMPORTED
        self.report.files.extend([entry, *unknown])

    def _study_results(self, source: Source) -> None:
        self._run_summary(source, parse_study_results(source.read(), source.name))

    def _run_summary(self, source: Source, summary: RunSummary, notes=()) -> None:
        """A harness's summary of the run (AgentLab's `result_df`, WebArena-Infinity's `results.json`), read once
        the trajectories of the import are stored. The verdicts of tasks whose folders are not in the import are
        kept as the run's task results; a trajectory read from its folder keeps its own verdict (the summary's is
        compared with it) or, having none, takes the summary's up."""
        present = {posixpath.basename(posixpath.dirname(other.name)) for other in self.catalogue
                   if posixpath.basename(other.name) in summary.folder_files}
        absent = [item for item in summary.entries if item.folder not in present]
        held = self._held_verdicts([item.task for item in summary.entries if item.folder in present])
        entry = FileReport(file=source.name, status=UNCHANGED, kind="results", format=summary.format, notes=[
            *notes, f"{len(summary.entries)} {summary.noun}, {len(summary.entries) - len(absent)} of them read from "
                    "their folders in this import", *summary.problems])
        unjudged = {key for key, (success, _) in held.items() if success is None}
        recorded = [item for item in summary.entries
                    if item.folder not in present or _task_key(item.task) in unjudged]
        unknown, updated, kept = [], 0, 0
        with transaction.atomic():
            if describe_run(self.run, summary.run):
                entry.status = IMPORTED
            if recorded and not (self.held or self.verdict_tasks) and self.run.benchmark != recorded[0].task.benchmark:
                # A run holding nothing yet is a run on the benchmark of its summary.
                self.run.benchmark = recorded[0].task.benchmark
                self.run.save(update_fields=["benchmark", "updated_at"])
            for benchmark in dict.fromkeys(item.task.benchmark for item in recorded):
                of_benchmark = [item for item in recorded if item.task.benchmark == benchmark]
                for item in of_benchmark:
                    if self._task(item.task) is None:
                        self._task_from_file(item.task)
                applied = record_verdicts(self.run, {item.task.task_id: item.success for item in of_benchmark},
                                          source.name, benchmark=benchmark)
                self.verdict_tasks |= applied.kept
                unknown += [f"{benchmark}/{task_id}" for task_id in applied.unknown]
                updated += len(applied.updated)
                kept += sum(item.success is not None and item.task.task_id not in applied.unknown
                            for item in of_benchmark if item.folder not in present)
                entry.status = IMPORTED if applied.updated or applied.records_changed else entry.status
        entry.notes.append(f"{kept} verdicts of {summary.noun} without their folder kept for the run page; "
                           f"{updated} trajectories updated")
        for item in summary.entries:
            own, own_source = held.get(_task_key(item.task), (None, ""))
            if None not in (own, item.success) and item.success != own and item.folder in present:
                place = item.line if isinstance(item.line, str) else f"line {item.line}"
                entry.notes.append(f"{place}: task {item.task.task_id}: the summary says "
                                   f"{'PASS' if item.success else 'FAIL'}, its trajectory {'PASS' if own else 'FAIL'} "
                                   f"({own_source}): the trajectory's verdict is kept")
        if unknown:
            listed = ", ".join(unknown[:_LISTED_TASKS]) + (" ..." if len(unknown) > _LISTED_TASKS else "")
            entry.notes.append(f"tasks not imported (run manage.py import_tasks), their verdicts not kept: {listed}")
        self.report.files.append(entry)

    def _held_verdicts(self, tasks: list[TaskRef]) -> dict[tuple[str, str], tuple[bool | None, str]]:
        """{(benchmark, task id): (its verdict, where that came from)} of the run's trajectories of these tasks."""
        found = {}
        for benchmark in dict.fromkeys(task.benchmark for task in tasks):
            ids = [task.task_id for task in tasks if task.benchmark == benchmark]
            found.update({(benchmark, task_id): (success, by or file) for task_id, success, by, file in
                          Trajectory.objects.filter(run=self.run, task__benchmark=benchmark, task__task_id__in=ids)
                          .values_list("task__task_id", "success", "success_by", "success_source")})
        return found

    def _log_list(self, source: Source, content=None) -> None:
        listed = [line.strip() for line in decode_utf8(source.read())[0].splitlines() if line.strip()]
        present = [name for name in listed if self.catalogue.holds(name)]
        if present:
            reason = (f"an index of harness logs: {len(present)} of the {len(listed)} it lists are in the upload "
                      "and are read on their own")
        else:
            reason = (f"log file not in the folder: none of the {len(listed)} harness logs it lists is in the "
                      "upload; add them to read their [Result] PASS|FAIL lines")
        self.report.files.append(FileReport(file=source.name, status=SKIPPED_STATUS, kind="results",
                                            format="webarena_log_list", reason=reason))

    def _run_description(self, source: Source, content=None) -> None:
        changed = describe_run(self.run, parse_run_description(source.read()))
        self.report.files.append(FileReport(file=source.name, status=IMPORTED if changed else UNCHANGED,
                                            kind="run_description", format="trajectory_v1_run"))

    def _harness_config(self, source: Source, content=None) -> None:
        config = parse_harness_config(load_json(decode_utf8(source.read())[0]))
        changed = record_harness_config(self.run, config)
        self.report.files.append(FileReport(file=source.name, status=IMPORTED if changed else UNCHANGED,
                                            kind="harness_config", format="webarena_config"))


def _task_key(task: TaskRef) -> tuple[str, str]:
    return task.benchmark, task.task_id


def _natural(task_id: str) -> tuple:
    return (0, int(task_id), "") if task_id.isdigit() else (1, 0, task_id)


def _unknown_tasks(benchmark: str, task_ids: list[str]) -> str:
    """Why harness verdicts on tasks the database does not hold were not kept."""
    ordered = sorted(task_ids, key=_natural)
    listed = ", ".join(f"{benchmark}/{task_id}" for task_id in ordered[:_LISTED_TASKS])
    listed += " ..." if len(ordered) > _LISTED_TASKS else ""
    if len(ordered) == 1:
        return (f"task {listed} is not imported (run manage.py import_tasks): its harness verdict is not kept; "
                "import this file again once the task is")
    return (f"{len(ordered)} tasks are not imported (run manage.py import_tasks): their harness verdicts are not "
            f"kept; import this file again once they are: {listed}")


_ACTION_TYPE_LIMIT = Step._meta.get_field("action_type").max_length
_AGENT_LIMIT = Step._meta.get_field("agent").max_length


def _check_lengths(parsed: ParsedTrajectory) -> None:
    """Every page, export and evaluation of a trajectory grows with its steps: INGEST_MAX_STEPS bounds them."""
    if len(parsed.steps) > settings.INGEST_MAX_STEPS:
        raise TrajectoryFormatError(f"{len(parsed.steps):,} steps, more than the limit of "
                                    f"{settings.INGEST_MAX_STEPS:,} (INGEST_MAX_STEPS)", where="steps")
    for position, step in enumerate(parsed.steps):
        if len(step.agent) > _AGENT_LIMIT:
            raise TrajectoryFormatError(f"longer than {_AGENT_LIMIT} characters", where=f"steps[{position}].agent")
        if len(step.action_parts.type) > _ACTION_TYPE_LIMIT:
            raise TrajectoryFormatError(f"longer than {_ACTION_TYPE_LIMIT} characters",
                                        where=f"steps[{position}].action_parts.type")


def _check_verdict_sources(parsed: ParsedTrajectory) -> None:
    """One verdict per source on a trajectory, as the platform keeps them."""
    seen = {}
    for position, verdict in enumerate(parsed.verdicts):
        key = (verdict.kind, verdict.name, verdict.model)
        if key in seen:
            raise TrajectoryFormatError(f"a second verdict of source {verdict.name!r} ({verdict.kind}"
                                        f"{', ' + verdict.model if verdict.model else ''}); verdicts[{seen[key]}] "
                                        "is the first", where=f"verdicts[{position}]")
        seen[key] = position


_USAGE = ("tokens_in", "tokens_out", "cost", "duration")


def _totals(parsed: ParsedTrajectory) -> dict:
    """A trajectory's tokens, cost and time: its file's totals, else the sums of its steps' where
    any step records them."""
    totals = {}
    for name in _USAGE:
        totals[name] = getattr(parsed, name)
        known = [value for step in parsed.steps if (value := getattr(step, name)) is not None]
        if totals[name] is None and known:
            totals[name] = sum(known)
    return totals


# The columns of an agent step row, in the order `_step_values` gives them.
_STEP_FIELDS = ("trajectory", "index", "url", "observation", "reasoning", "planned_action", "action", "action_type",
                "element_id", "element_label", "action_value", "press_enter", "element_selector", "point_x", "point_y",
                "delta_x", "delta_y", "prev_action", "model_output", "screenshot", *_USAGE, "agent")


def _step_values(trajectory_id: int, step, screenshot_ids: dict[str, int], model_output: str) -> tuple:
    """An agent step row as plain values: thousands of them are written per run, and building
    model instances for them cost more than writing them."""
    parts = step.action_parts
    screenshot = step.screenshot.removeprefix(REFERENCE_PREFIX) if step.screenshot else None
    return (
        trajectory_id,
        step.index,
        storable_text(step.url),
        storable_text(step.observation),
        storable_text(step.reasoning),
        storable_text(step.planned_action),
        storable_text(step.action),
        parts.type,
        storable_text(parts.element_id),
        storable_text(parts.element_label),
        storable_text(parts.value),
        parts.press_enter,
        storable_text(parts.selector),
        parts.x,
        parts.y,
        parts.delta_x,
        parts.delta_y,
        storable_text(step.prev_action),
        storable_text(model_output),
        screenshot_ids[screenshot] if screenshot else None,
        step.tokens_in,
        step.tokens_out,
        step.cost,
        step.duration,
        storable_text(step.agent),
    )


def insert_steps(rows: list[tuple]) -> None:
    """Insert agent step rows (`_STEP_FIELDS` order) in the caller's transaction: with COPY on
    PostgreSQL (one round trip and no SQL to build for page-sized text), else in one batch."""
    if not rows:
        return
    quote = connection.ops.quote_name
    table = quote(Step._meta.db_table)
    columns = ", ".join(quote(Step._meta.get_field(name).column) for name in _STEP_FIELDS)
    with connection.cursor() as cursor:
        if connection.vendor != "postgresql":
            cursor.executemany(f"INSERT INTO {table} ({columns}) VALUES ({', '.join(['%s'] * len(_STEP_FIELDS))})",
                               rows)
            return
        with cursor.copy(f"COPY {table} ({columns}) FROM STDIN") as copy:
            for row in rows:
                copy.write_row(row)
