"""The steps stored before there was full-text search get their words when the migration adds it."""

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

BEFORE = [("failures", "0005_step_vectors")]
AFTER = [("failures", "0006_step_documents")]

pytestmark = [pytest.mark.django_db(transaction=True),
              pytest.mark.skipif(connection.vendor != "postgresql", reason="the words are written on PostgreSQL only")]


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


def test_steps_already_stored_get_their_words_and_new_ones_get_them_as_written(migrate):
    old = migrate(BEFORE)
    AgentRun, Task, Trajectory, Step = (old.get_model("trajectories", name)
                                         for name in ("AgentRun", "Task", "Trajectory", "Step"))
    trajectory = Trajectory.objects.create(run=AgentRun.objects.create(name="logs"),
                                           task=Task.objects.create(benchmark="webarena", task_id="3", intent="x"))
    Step.objects.create(trajectory=trajectory, index=1, action="click [4]", reasoning="A captcha blocked me",
                        observation="<div>Sign in</div>")

    new = migrate(AFTER)

    StepDocument = new.get_model("failures", "StepDocument")
    [document] = StepDocument.objects.values_list("trajectory_id", "index", "words", "page__words")
    assert document == (trajectory.pk, 1, "'4':2 'block':5 'captcha':4 'click':1",
                        "'/div':4 'div':1 'sign':2")  # the markup's words kept
    new.get_model("trajectories", "Step").objects.create(trajectory_id=trajectory.pk, index=2, action="stop [done]")
    assert StepDocument.objects.get(index=2).words == "'done':2 'stop':1"
    migrate(BEFORE)
    assert "failures_stepdocument" not in connection.introspection.table_names()
