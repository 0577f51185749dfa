"""One model for a run's harness verdict on a task: the verdicts kept from harness logs and format
traces (`HarnessVerdict`, keyed by a task id string) become task results (`TaskResult`, keyed by the
task), with the traces' model outputs.

A verdict whose task id is no task of its run's benchmark cannot be a task result: it is dropped,
and the number dropped is printed. Where a run already has a task result for the task, the newer
verdict is kept (as an import of the file it came from does) and the model outputs are added.
"""

import sys

from django.db import migrations, models

_BATCH = 500


def _dropped(verdicts) -> None:
    if not verdicts:
        return
    listed = ", ".join(f"{run}/{task_id}" for run, task_id in verdicts[:20]) + (" ..." if len(verdicts) > 20 else "")
    sys.stdout.write(f"\n  {len(verdicts)} harness verdicts dropped, their task is not imported: {listed}\n")


def harness_verdicts_into_task_results(apps, schema_editor):
    HarnessVerdict = apps.get_model("trajectories", "HarnessVerdict")
    TaskResult = apps.get_model("trajectories", "TaskResult")
    Task = apps.get_model("trajectories", "Task")
    verdicts = list(HarnessVerdict.objects.select_related("run").order_by("pk"))
    if not verdicts:
        return
    tasks = {}
    for benchmark in {verdict.run.benchmark for verdict in verdicts}:
        ids = {verdict.task_id for verdict in verdicts if verdict.run.benchmark == benchmark}
        for pk, task_id in Task.objects.filter(benchmark=benchmark, task_id__in=ids).values_list("pk", "task_id"):
            tasks[benchmark, task_id] = pk
    held = {(result.run_id, result.task_id): result for result in
            TaskResult.objects.filter(run_id__in={verdict.run_id for verdict in verdicts})}
    new, times, changed, dropped = [], [], [], []
    for verdict in verdicts:
        task_pk = tasks.get((verdict.run.benchmark, verdict.task_id))
        if task_pk is None:
            dropped.append((verdict.run.name, verdict.task_id))
            continue
        result = held.get((verdict.run_id, task_pk))
        if result is None:
            new.append(TaskResult(run_id=verdict.run_id, task_id=task_pk, success=verdict.success,
                                  source_name=verdict.source, origin="import", model_outputs=verdict.model_outputs))
            times.append(verdict.updated_at)
            continue
        if verdict.success is not None and (result.success is None or verdict.updated_at >= result.updated_at):
            result.success, result.source_name, result.origin = verdict.success, verdict.source, "import"
        if verdict.model_outputs:
            result.model_outputs = verdict.model_outputs
        result.updated_at = max(result.updated_at, verdict.updated_at)
        changed.append(result)
    created = TaskResult.objects.bulk_create(new, batch_size=_BATCH)
    # Creating sets both times to now; the verdict's own time is what it had.
    for result, updated_at in zip(created, times):
        result.created_at = result.updated_at = updated_at
    TaskResult.objects.bulk_update(created, ["created_at", "updated_at"], batch_size=_BATCH)
    TaskResult.objects.bulk_update(changed, ["success", "source_name", "origin", "model_outputs", "updated_at"],
                                   batch_size=_BATCH)
    _dropped(dropped)


def task_results_into_harness_verdicts(apps, schema_editor):
    """Back: every imported task result with a verdict or model outputs is a harness verdict again."""
    HarnessVerdict = apps.get_model("trajectories", "HarnessVerdict")
    TaskResult = apps.get_model("trajectories", "TaskResult")
    results = (TaskResult.objects.filter(origin="import").exclude(success__isnull=True, model_outputs=[])
               .select_related("task").order_by("pk"))
    HarnessVerdict.objects.bulk_create(
        [HarnessVerdict(run_id=result.run_id, task_id=result.task.task_id, success=result.success,
                        source=result.source_name, model_outputs=result.model_outputs) for result in results],
        batch_size=_BATCH,
    )


class Migration(migrations.Migration):

    dependencies = [
        ('trajectories', '0007_import_job_keeps_run_name'),
    ]

    operations = [
        migrations.AddField(
            model_name='taskresult',
            name='model_outputs',
            field=models.JSONField(blank=True, default=list, help_text='Raw model output per step (format trace).'),
        ),
        migrations.RunPython(harness_verdicts_into_task_results, task_results_into_harness_verdicts),
        migrations.DeleteModel(
            name='HarnessVerdict',
        ),
    ]
