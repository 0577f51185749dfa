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


def test_the_step_vectors_version_follows_writes_and_goes_with_its_migration(migrate):
    old = migrate([("failures", "0007_attribution_jobs")])
    AgentRun, Task, Trajectory, Step = (old.get_model("trajectories", name)
                                         for name in ("AgentRun", "Task", "Trajectory", "Step"))
    trajectory = Trajectory.objects.create(run=AgentRun.objects.create(name="logs"),
                                           task=Task.objects.create(benchmark="webarena", task_id="3", intent="x"))
    step = Step.objects.create(trajectory=trajectory, index=1, action="click [4]")
    old.get_model("failures", "StepVector").objects.create(step_id=step.pk, trajectory_id=trajectory.pk,
                                                           vector=bytes(384))

    new = migrate([("failures", "0008_step_vectors_version")])

    Version, StepVector = new.get_model("failures", "StepVectorsVersion"), new.get_model("failures", "StepVector")
    assert not Version.objects.exists()  # no write yet: the first search reads the vectors whatever the stamp
    StepVector.objects.filter(step_id=step.pk).update(vector=bytes(range(128)) * 3)
    assert Version.objects.get().stamp
    migrate([("failures", "0007_attribution_jobs")])
    assert "failures_stepvectorsversion" not in connection.introspection.table_names()
    with connection.cursor() as cursor:
        cursor.execute("SELECT to_regclass('failures_stepvectorsversion_stamp')")
        assert cursor.fetchone() == (None,)  # the sequence went with its table
    StepVector.objects.filter(step_id=step.pk).delete()  # no trigger left to fail
