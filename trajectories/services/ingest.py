"""Import of agent trajectories into a run: the one write path behind the command line, the
upload page, the API and the demo data.

Files are parsed, and their screenshot files written, by a pool of worker processes (see
`reading`) and stored one at a time, each record (a trajectory) whole or not at all: memory does
not grow with the run, and a record that cannot be read or stored fails alone, named, while the
other records of its file (a JSONL line, an element of a list, an evaluator's record) are stored.
Consecutive trajectory files are committed in batches (`import_batch`), each record of a file of
many in a savepoint of its own: a commit waits for the database's disk, once per batch rather
than once per file. The plain case, a file of one new trajectory, takes no savepoint: its rows
wait, and the batch's are written in a few statements (`trajectory_rows`: screenshots,
trajectories, one COPY of the steps); should one of them fail, the batch's trajectories are
written again one by one, so the one at fault fails alone. A trajectory is identified by the
hash of its content (screenshots by the hash of their bytes): importing the same file again
changes nothing, and a different trajectory for a task the run already has is refused unless
the caller asks to replace it (`store_decision`). The tasks the files name are found or made by
`tasks.RunTasks`; results logs, run summaries, traces and run descriptions are read by
`run_files`.
"""

import contextlib
import zipfile
import zlib
from collections.abc import Callable, Collection
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.db import DataError, IntegrityError, reset_queries, transaction

from trajectories.formats.canonical import MAX_DEPTH, Trajectory as ParsedTrajectory, TrajectoryFormatError
from trajectories.formats.format_traces import FORMAT as TRACE
from trajectories.formats.readers import Record
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
from trajectories.models import AgentRun, Step, Task, TaskResult, Trajectory

from .import_batch import ImportBatch
from .import_report import FAILED, IMPORTED, REPLACED, SKIPPED_STATUS, UNCHANGED, FileReport, ImportReport
from .reading import read_images_again, read_sources
from .run_files import RunFiles
from .runs import describe_run, run_changes
from .screenshots import discard_files, discard_written_ahead, take_files
from .store_decision import Given, Store, store_decision
from .tallies import refresh_tallies
from .tasks import RunTasks
from .trajectory_rows import Pending, TrajectoryRows

_KINDS = {TRAJECTORIES: "trajectory", RESULTS: "results", LOG_LIST: "results", RUN_DESCRIPTION: "run_description",
          HARNESS_CONFIG: "harness_config", SKIPPED: "other"}


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


class _RunImport:
    """The import of the sources of one call into a run: each record of a trajectory file in a
    savepoint of its own, so that one bad trajectory (a JSONL line, an element of a list) fails alone,
    inside a transaction per batch of consecutive trajectory files (`ImportBatch`); other files
    each in their own transactions (`RunFiles`). The new trajectories of files of one trajectory
    that write nothing else wait, checked, and are written together when the batch commits: a few
    statements per batch rather than a few per file (`TrajectoryRows`)."""

    def __init__(self, run: AgentRun, replace: bool, report: ImportReport, catalogue: Catalogue):
        self.run, self.replace, self.report = run, replace, report
        self.tasks = RunTasks()
        self.rows = TrajectoryRows(run)
        self.batch = ImportBatch(run, self._flush)
        # Trajectories checked, their screenshot files written, whose rows wait for the batch's commit.
        self.pending: list[Pending] = []
        # A file is read again, up to this size, for the screenshots its parsing worker left behind.
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
        self.files = RunFiles(run, report, catalogue, self.tasks, self.held, self.verdict_tasks)
        # Tasks (pks) stored by this import, with the file and the run it names; and those of the file being stored.
        self.given: dict[int, Given] = {}
        self.giving: dict[int, Given] = {}

    def __enter__(self) -> "_RunImport":
        return self

    def __exit__(self, error_type, error, traceback) -> None:
        """Commit the open batch, or roll it back (with the screenshot files of its files) when the
        import stops with an error."""
        if error_type is not None:
            self.pending = []
        self.batch.close(error_type, error, traceback)

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
            self.batch.begin()
        else:
            self.batch.commit()
        self._add(source, content)
        self.batch.file_done()
        return not self.batch.open

    def _add(self, source: Source, content) -> None:
        kind = _KINDS[source.kind]
        if source.problem:
            self.report.files.append(FileReport(file=source.name, status=FAILED, kind=kind, reason=source.problem))
            return
        handler = {
            TRAJECTORIES: self._trajectories,
            RESULTS: self.files.results,
            LOG_LIST: self.files.log_list,
            RUN_DESCRIPTION: self.files.run_description,
            HARNESS_CONFIG: self.files.harness_config,
            SKIPPED: self.files.skipped,
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
        self.batch.commit()
        traces, self.traces = self.traces, []
        for source, record in traces:
            self.report.files.append(self.files.trace(source, record))
        summaries, self.summaries = self.summaries, []
        for source, record in summaries:
            self.files.run_summary(source, record.summary, record.notes)

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
            self.tasks.forget()
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
            self.batch.written.extend(written)
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
        self.tasks.forget(record.trajectory.task.benchmark)

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
        task = self.tasks.of_file(parsed.task, entry.notes)
        if task is None:
            entry.reason = (f"task {parsed.task.benchmark}/{parsed.task.task_id} is not imported "
                            "(run manage.py import_tasks)")
            return entry
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
        given = self.given.get(task.pk)
        decision = store_decision(existing[1] if existing else None, record.content_hash, replace=self.replace,
                                  given=given, run=parsed.run.name)
        if decision is Store.UNCHANGED:
            entry.status, entry.trajectory_id = UNCHANGED, existing[0]
            self.giving[task.pk] = Given(source.name, parsed.run.name)
        elif decision is Store.SKIP:
            entry.status = SKIPPED_STATUS
            entry.reason = (f"a second trajectory of task {task}, from other results in this upload "
                            f"({parsed.run.name or 'unnamed'}): {given.file} gave run {self.run.name!r} its "
                            "trajectory of this task, and a run holds one per task; import these results as a "
                            "run of their own")
        elif decision is Store.REFUSE:
            entry.reason = self._refusal(task)
        else:
            self._write(source, record, entry, task, written, stored, held=existing is not None, defer=defer)
        return entry

    def _write(self, source: Source, record: Record, entry: FileReport, task: Task, written: list[str],
               stored: dict, *, held: bool, defer: bool) -> None:
        """The trajectory's screenshot files, then its rows: in the record's transaction, or with
        its batch when `defer`. Says in `entry` what became of it."""
        try:
            read_images_again(source, record, self.max_bytes)
            files = take_files(record)
        except OSError as error:
            entry.reason = f"screenshots could not be stored: {error}"
            return
        given = Given(source.name, record.trajectory.run.name)
        if defer:
            self.pending.append(Pending(entry, task, record, files))
            written.extend(files.values())
            entry.status = IMPORTED
            stored[task.pk] = (None, record.content_hash)  # its id once the batch writes it
            self.giving[task.pk] = given
            return
        try:
            with transaction.atomic(savepoint=False):  # the record's transaction is its
                row, replaced = self._rows(entry, task, record, files, held=held)
        except BaseException as error:
            discard_files(files.values())
            if isinstance(error, _Unchanged):
                entry.status, entry.trajectory_id = UNCHANGED, error.trajectory_id
                self.giving[task.pk] = given
                return
            if isinstance(error, (_Refused, IntegrityError, DataError)):
                entry.reason = str(error) if isinstance(error, _Refused) else f"could not be stored: {error}"
                return
            raise
        written.extend(files.values())
        entry.status = REPLACED if replaced else IMPORTED
        entry.trajectory_id = row.pk
        stored[task.pk] = (row.pk, record.content_hash)
        self.giving[task.pk] = given

    def _rows(self, entry: FileReport, task: Task, record: Record, files: dict[str, str], *, held: bool):
        """The trajectory's rows, and whether they replace the run's trajectory of the task. The
        decision is taken again under a row lock when the run holds the task's trajectory; a
        concurrent import of a task it did not hold meets the (run, task) unique constraint
        instead, so the run stays consistent either way."""
        current = Trajectory.objects.select_for_update().filter(run=self.run, task=task).first() if held else None
        decision = store_decision(current.content_hash if current else None, record.content_hash, replace=self.replace)
        if decision is Store.UNCHANGED:
            raise _Unchanged(current.pk)
        if decision is Store.REFUSE:
            raise _Refused(self._refusal(task))
        row = self.rows.write(task, record, files, entry.file, entry.format, current=current,
                              kept_verdict=task.pk in self.verdict_tasks)
        return row, current is not None

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
        task = self.tasks.get(parsed.task)
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
                rows = self.rows.write_batch(pending)
        except (IntegrityError, DataError):
            for item in pending:
                self._store_waiting(item)
            return
        for row, item in zip(rows, pending):
            item.entry.trajectory_id = row.pk
            self.held[item.task.pk] = (row.pk, item.record.content_hash)

    def _store_waiting(self, item: Pending) -> None:
        """A waiting trajectory written alone, in a savepoint; if it fails, its file fails."""
        try:
            with transaction.atomic():
                row, _ = self._rows(item.entry, item.task, item.record, item.files, held=False)
        except (IntegrityError, DataError) as error:
            discard_files(item.files.values())
            gone = set(item.files.values())
            self.batch.written = [name for name in self.batch.written if name not in gone]
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
