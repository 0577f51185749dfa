"""The rows of an imported trajectory: the trajectory, its agent steps (COPY on PostgreSQL), its
screenshots and its verdicts, written in the caller's transaction, one trajectory at a time or a
batch of new ones together. What to write (new, unchanged, replaced, refused) is decided before
(`store_decision`); this module writes.
"""

from dataclasses import dataclass

from django.db import connection, transaction

from trajectories.events import failure_labels_read
from trajectories.formats.canonical import Trajectory as ParsedTrajectory
from trajectories.formats.readers import Record
from trajectories.formats.screenshots import REFERENCE_PREFIX
from trajectories.models import AgentRun, Step, Task, Trajectory, Verdict, VerdictSource

from .harness_verdicts import recorded_verdict, take_up
from .import_report import FileReport
from .screenshots import batch_screenshot_ids, discard_files, screenshot_ids
from .storable import storable_json, storable_text


@dataclass
class Pending:
    """A trajectory checked, its screenshot files written, whose rows wait to be written with the
    rest of its batch."""

    entry: FileReport
    task: Task
    record: Record
    files: dict[str, str]


class TrajectoryRows:
    """The writes of one import into `run`; keeps the verdict sources it found, for the next trajectories."""

    def __init__(self, run: AgentRun):
        self.run = run
        self.verdict_sources: dict[tuple[str, str, str], VerdictSource] = {}

    def write(self, task: Task, record: Record, files: dict[str, str], file: str, format: str, *,
              current: Trajectory | None, kept_verdict: bool) -> Trajectory:
        """The trajectory's rows, replacing `current` (the run's trajectory of the task, locked) if
        given; `kept_verdict`: the run keeps a harness verdict of the task for it to take up."""
        parsed = record.trajectory
        ids, unused = screenshot_ids(record.images, files)
        if current is not None:
            current.delete()
        kept = recorded_verdict(self.run, task) if kept_verdict else None
        success, success_source, outputs = take_up(kept, parsed, file)
        # Created without the save signal, which would drop the run's tallies once per file: the batch did.
        [row] = Trajectory.objects.bulk_create([self._trajectory(task, record, file, format, success, success_source)])
        outputs = outputs or [""] * len(parsed.steps)
        insert_steps([_step_values(row.pk, step, ids, output) for step, output in zip(parsed.steps, outputs)])
        self._verdicts(row, parsed, file)
        if parsed.failure_labels:
            failure_labels_read.send(sender=Trajectory, trajectory=row, labels=parsed.failure_labels, file=file)
        if unused:
            transaction.on_commit(lambda: discard_files(unused))
        return row

    def write_batch(self, pending: list[Pending]) -> list[Trajectory]:
        """The rows of new trajectories that take up no kept verdict and bring no verdicts or failure
        labels: screenshot rows, trajectory rows and steps in one statement each."""
        ids, unused = batch_screenshot_ids([(item.record.images, item.files) for item in pending])
        rows = Trajectory.objects.bulk_create([
            self._trajectory(item.task, item.record, item.entry.file, item.entry.format,
                             *take_up(None, item.record.trajectory, item.entry.file)[:2])
            for item in pending])
        insert_steps([_step_values(row.pk, step, ids, "")
                      for row, item in zip(rows, pending) for step in item.record.trajectory.steps])
        if unused:
            transaction.on_commit(lambda: discard_files(unused))
        return rows

    def _trajectory(self, task: Task, record: Record, file: str, format: str, success: bool | None,
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
            source_name=file[-500:],
            source_format=format,
        )

    def _verdicts(self, row: Trajectory, parsed: ParsedTrajectory, file: str) -> None:
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
            # Cached once the transaction commits: a rolled-back file leaves no source behind.
            transaction.on_commit(lambda: self.verdict_sources.setdefault(key, source))
        return source


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
STEP_FIELDS = ("trajectory", "index", "url", "observation", "reasoning", "planned_action", "action", "action_type",
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
    """Insert agent step rows (`STEP_FIELDS` order) in the caller's transaction: with COPY on
    PostgreSQL (one round trip and no SQL to build for page-sized text), else in one batch."""
    if not rows:
        return
    quote = connection.ops.quote_name
    table = quote(Step._meta.db_table)
    columns = ", ".join(quote(Step._meta.get_field(name).column) for name in STEP_FIELDS)
    with connection.cursor() as cursor:
        if connection.vendor != "postgresql":
            cursor.executemany(f"INSERT INTO {table} ({columns}) VALUES ({', '.join(['%s'] * len(STEP_FIELDS))})",
                               rows)
            return
        with cursor.copy(f"COPY {table} ({columns}) FROM STDIN") as copy:
            for row in rows:
                copy.write_row(row)
