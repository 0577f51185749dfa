"""Harness verdicts kept before there was one model for a run's verdict on a task become task results."""

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

BEFORE = [("trajectories", "0007_import_job_keeps_run_name")]
AFTER = [("trajectories", "0008_harness_verdicts_into_task_results")]


def _migrate(targets):
    """The database migrated to `targets`, and the models as they were there."""
    executor = MigrationExecutor(connection)
    executor.migrate(targets)
    executor.loader.build_graph()
    return executor.loader.project_state(targets).apps


@pytest.fixture
def migrate():
    yield _migrate
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())


@pytest.mark.django_db(transaction=True)
def test_harness_verdicts_become_task_results_of_their_tasks(migrate, capsys):
    old = migrate(BEFORE)
    Task, AgentRun, HarnessVerdict, TaskResult = (
        old.get_model("trajectories", name) for name in ("Task", "AgentRun", "HarnessVerdict", "TaskResult"))
    tasks = {task_id: Task.objects.create(benchmark="webarena", task_id=task_id, intent=f"task {task_id}")
             for task_id in ("3", "6", "7")}
    Task.objects.create(benchmark="webarena-verified", task_id="9", intent="another benchmark's task 9")
    run = AgentRun.objects.create(name="logs", benchmark="webarena")
    trace = HarnessVerdict.objects.create(run=run, task_id="3", success=False, source="format_traces/3.json",
                                          model_outputs=["click [1]", "stop [N/A]"])
    # An older verdict than the results file's: the file's stays, the trace's model outputs are added.
    HarnessVerdict.objects.create(run=run, task_id="6", success=True, source="format_traces/6.json",
                                  model_outputs=["stop [x]"])
    TaskResult.objects.create(run=run, task=tasks["6"], success=False, source_name="published.csv", origin="api")
    # Grades of a task without a trajectory left a result without a verdict: the log's verdict fills it.
    TaskResult.objects.create(run=run, task=tasks["7"], success=None, source_name="grades.csv", origin="import")
    HarnessVerdict.objects.create(run=run, task_id="7", success=True, source="log_files/a.log")
    HarnessVerdict.objects.create(run=run, task_id="9", success=True, source="log_files/a.log")  # no webarena/9

    new = migrate(AFTER)

    TaskResult = new.get_model("trajectories", "TaskResult")
    rows = {result.task.task_id: result for result in TaskResult.objects.select_related("task")}
    assert {task_id: (row.success, row.source_name, row.origin, row.model_outputs) for task_id, row in rows.items()} == {
        "3": (False, "format_traces/3.json", "import", ["click [1]", "stop [N/A]"]),
        "6": (False, "published.csv", "api", ["stop [x]"]),
        "7": (True, "log_files/a.log", "import", []),
    }
    assert rows["3"].created_at == rows["3"].updated_at == trace.updated_at
    assert "harness verdicts dropped, their task is not imported: logs/9" in capsys.readouterr().out
    assert "trajectories_harnessverdict" not in connection.introspection.table_names()

    # And back: the imported task results are harness verdicts again.
    HarnessVerdict = migrate(BEFORE).get_model("trajectories", "HarnessVerdict")
    assert set(HarnessVerdict.objects.values_list("task_id", "success", "source")) == {
        ("3", False, "format_traces/3.json"), ("7", True, "log_files/a.log")}
