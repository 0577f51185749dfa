"""Batches of one run's import on several workers (its chunks) and the run's tallies."""

import threading

import pytest
from django.db import connection, connections

from tests.factories import AgentRunFactory, TaskFactory, TrajectoryFactory
from trajectories.models import RunTally, Trajectory
from trajectories.services.import_batch import ImportBatch
from trajectories.services.tallies import fresh_tallies, refresh_tallies

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(connection.vendor != "postgresql", reason="a transaction waiting on another needs PostgreSQL"),
]


def _write_trajectory(run) -> None:
    """As an import writes its rows: in bulk, without a single write's signal."""
    Trajectory.objects.bulk_create([TrajectoryFactory.build(run=run, task=TaskFactory())])


def _batch_elsewhere(run) -> str:
    """A batch of one trajectory, written and committed from another connection that gives up on a lock
    after 2 s; what happened."""
    outcome = []

    def write():
        try:
            with connections["default"].cursor() as cursor:
                cursor.execute("SET lock_timeout = '2s'")
            batch = ImportBatch(run, flush=lambda: None)
            batch.begin()
            _write_trajectory(run)
            batch.commit()
            outcome.append("committed")
        except Exception as error:  # noqa: BLE001 - the outcome is what is asserted
            outcome.append(f"{type(error).__name__}: {error}")
        finally:
            connections["default"].close()

    thread = threading.Thread(target=write)
    thread.start()
    thread.join()
    return outcome[0]


def test_a_batch_does_not_wait_on_another_open_batch_of_its_run_and_each_commit_drops_the_tally():
    run = AgentRunFactory()
    refresh_tallies([run.pk])
    first = ImportBatch(run, flush=lambda: None)
    first.begin()
    try:
        _write_trajectory(run)
        assert _batch_elsewhere(run) == "committed"  # not held up by the first batch's open transaction
    finally:
        first.commit()

    assert not RunTally.objects.filter(run=run).exists()  # readers recount the run from here on
    fresh_tallies([run.pk])
    assert RunTally.objects.get(run=run).trajectories == 2
