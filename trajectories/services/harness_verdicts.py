"""Harness verdicts (PASS / FAIL from the harness's logs and format traces) and the model outputs
that come with the traces.

Every verdict is kept as the run's task result (`TaskResult`), whether or not the run holds the
task's trajectory, and mirrored into `Trajectory.success` with the file it came from, so that a
trajectory imported after its verdict takes the verdict up. A verdict on a task id that is no
imported task of the run's benchmark has nothing to be kept against: it is returned as unknown
for the import to report.
"""

from dataclasses import dataclass, field

from django.db import transaction
from django.utils import timezone

from trajectories.formats.format_traces import align_outputs
from trajectories.models import AgentRun, ResultOrigin, Step, Task, TaskResult, Trajectory

from .storable import storable_json
from .tallies import refresh_tallies


@dataclass
class VerdictsApplied:
    """What recording a file's verdicts changed, by task id."""

    updated: list[str] = field(default_factory=list)  # trajectories whose verdict or model outputs changed
    without_trajectory: list[str] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)  # no imported task of the run's benchmark: not kept
    kept: set[int] = field(default_factory=set)  # tasks (pks) with a kept verdict or model outputs
    # (task id, earlier verdict, its file) where another file had said otherwise
    overruled: list[tuple[str, bool, str]] = field(default_factory=list)
    unaligned: list[tuple[str, int, int]] = field(default_factory=list)  # (task id, outputs, steps)
    attached: list[tuple[str, int]] = field(default_factory=list)  # (task id, steps given their model output)
    records_changed: bool = False


def _outputs_for(row: Trajectory, outputs: list[str]) -> list[str] | None:
    return align_outputs(outputs, row.step_count, row.outcome_message)


def _set_model_outputs(row: Trajectory, outputs: list[str]) -> bool:
    steps = list(row.steps.order_by("index").only("id", "index", "model_output"))
    changed = [step for step, output in zip(steps, outputs) if step.model_output != output]
    for step, output in zip(steps, outputs):
        step.model_output = output
    Step.objects.bulk_update(changed, ["model_output"], batch_size=200)
    return bool(changed)


@transaction.atomic
def record_verdicts(run: AgentRun, verdicts: dict[str, bool | None], source: str,
                    model_outputs: dict[str, list[str]] | None = None, *,
                    benchmark: str | None = None) -> VerdictsApplied:
    """Keep the verdicts of the file `source` for the run's tasks (None: the file has none) as the
    run's task results and set them on the run's trajectories of those tasks, with the model outputs
    by step where they align. Task ids of no imported task of `benchmark` (by default the run's)
    are left out."""
    model_outputs = {task_id: storable_json(outputs) for task_id, outputs in (model_outputs or {}).items()}
    applied = VerdictsApplied()
    source = source[-500:]
    tasks = {task.task_id: task for task in Task.objects.filter(
        benchmark=benchmark or run.benchmark, task_id__in=list(verdicts)).only("id", "task_id")}
    applied.unknown = [task_id for task_id in verdicts if task_id not in tasks]
    verdicts = {task_id: success for task_id, success in verdicts.items() if task_id in tasks}
    now = timezone.now()
    _keep_task_results(run, tasks, verdicts, source, model_outputs, now, applied)
    _set_on_trajectories(run, tasks, verdicts, source, model_outputs, now, applied)
    refresh_tallies([run.pk])
    return applied


def _keep_task_results(run: AgentRun, tasks: dict[str, Task], verdicts: dict[str, bool | None], source: str,
                       model_outputs: dict[str, list[str]], now, applied: VerdictsApplied) -> None:
    """The verdicts and model outputs as the run's task results: new ones made, held ones changed where the
    file says something else (a verdict another file gave otherwise is reported as overruled)."""
    held = {row.task_id: row for row in
            TaskResult.objects.select_for_update().filter(run=run, task__in=list(tasks.values()))}
    new, changed = [], []
    for task_id, success in verdicts.items():
        task = tasks[task_id]
        record = held.get(task.pk)
        outputs = model_outputs.get(task_id)
        if record is None:
            if success is not None or outputs:
                new.append(TaskResult(run=run, task=task, success=success, source_name=source,
                                      origin=ResultOrigin.IMPORT, model_outputs=outputs or []))
                applied.kept.add(task.pk)
            continue
        applied.kept.add(task.pk)
        if None not in (success, record.success) and record.success != success and record.source_name != source:
            applied.overruled.append((task_id, record.success, record.source_name))
        before = (record.success, record.source_name, record.origin, record.model_outputs)
        if success is not None:
            record.success, record.source_name, record.origin = success, source, ResultOrigin.IMPORT
        if outputs is not None:
            record.model_outputs = outputs
        if (record.success, record.source_name, record.origin, record.model_outputs) != before:
            record.updated_at = now
            changed.append(record)
    TaskResult.objects.bulk_create(new, batch_size=500)
    TaskResult.objects.bulk_update(changed, ["success", "source_name", "origin", "model_outputs", "updated_at"],
                                   batch_size=500)
    applied.records_changed = bool(new or changed)


def _set_on_trajectories(run: AgentRun, tasks: dict[str, Task], verdicts: dict[str, bool | None], source: str,
                         model_outputs: dict[str, list[str]], now, applied: VerdictsApplied) -> None:
    """The verdicts mirrored into the run's trajectories of those tasks, and the model outputs given to
    their steps where they align."""
    trajectories = Trajectory.objects.select_for_update(of=("self",)).select_related("task").filter(
        run=run, task__in=list(tasks.values()))
    rows = {row.task.task_id: row for row in trajectories}
    applied.without_trajectory = [task_id for task_id in verdicts if task_id not in rows]
    updated_rows = []
    for task_id, row in rows.items():
        success, touched = verdicts[task_id], False
        if success is not None and (row.success, row.success_source, row.success_by) != (success, source, ""):
            row.success, row.success_source, row.success_by, row.updated_at = success, source, "", now
            updated_rows.append(row)
            touched = True
        if task_id in model_outputs:
            aligned = _outputs_for(row, model_outputs[task_id])
            if aligned is None:
                applied.unaligned.append((task_id, len(model_outputs[task_id]), row.step_count))
            else:
                applied.attached.append((task_id, len(aligned)))
                touched = _set_model_outputs(row, aligned) or touched
        if touched:
            applied.updated.append(task_id)
    Trajectory.objects.bulk_update(updated_rows, ["success", "success_source", "success_by", "updated_at"],
                                   batch_size=500)


def recorded_verdict(run: AgentRun, task: Task) -> TaskResult | None:
    """The harness verdict kept for a task of the run, for a trajectory being imported."""
    return TaskResult.objects.filter(run=run, task=task).first()


def take_up(record: TaskResult | None, trajectory, own_source: str) -> tuple[bool | None, str, list[str] | None]:
    """(success, the file it came from, model output by step) of a parsed trajectory being stored:
    its own file's verdict when it states one, else the verdict kept for its task."""
    outcome = trajectory.outcome
    outputs = None
    if record is not None and record.model_outputs:
        outputs = align_outputs(record.model_outputs, len(trajectory.steps), outcome.message)
    if outcome.success is not None:
        return outcome.success, own_source, outputs
    if record is not None and record.success is not None:
        return record.success, record.source_name, outputs
    return None, "", outputs
