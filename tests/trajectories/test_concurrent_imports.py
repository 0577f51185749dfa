"""Imports that fail (each removing the run it made), imports that succeed, and reads of the leaderboard and
of the runs, all at once against one server: none answers 5xx. The race between recounting a run's tallies and
deleting the run shows only with concurrent transactions, so this runs on PostgreSQL (SQLite writes one at a
time; CI runs the suite on PostgreSQL)."""

import random
from concurrent.futures import ThreadPoolExecutor

import pytest
import requests
from django.db import connection

from accounts.services import create_api_token
from tests.factories import TaskFactory, UserFactory
from trajectories.models import AgentRun, RunTally

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(connection.vendor != "postgresql", reason="concurrent transactions need PostgreSQL"),
]

FAILING, SUCCEEDING, READS = 25, 10, 60


def _trajectory(task_id, outcome=True):
    document = {"schema": "trajectory/v1", "task": {"benchmark": "webarena", "task_id": task_id},
                "steps": [{"index": 1, "action": "stop [N/A]"}], "final_answer": "N/A"}
    if outcome:  # without one the trajectory fails validation, and its import stores nothing
        document["outcome"] = {"status": "na"}
    return document


def test_failing_and_succeeding_imports_beside_leaderboard_and_run_reads_answer_no_5xx(live_server, settings):
    settings.MAX_IMPORTS_PER_ACCOUNT = 0
    settings.PUBLIC_LEADERBOARD = True
    tasks = [TaskFactory(number=n) for n in range(SUCCEEDING)]
    token = create_api_token(UserFactory(username="racer"))[1]
    headers = {"Authorization": f"Token {token}"}
    calls = ([("post", "/api/runs/import/", {"run": f"fails-{n}", "trajectories": [_trajectory("1", False)]})
              for n in range(FAILING)]
             + [("post", "/api/runs/import/", {"run": f"holds-{n}", "trajectories": [_trajectory(task.task_id)]})
                for n, task in enumerate(tasks)]
             + [("get", "/api/leaderboard/", None)] * READS + [("get", "/api/runs/", None)] * READS)
    random.Random(35).shuffle(calls)

    def call(method, path, body):
        response = requests.request(method, live_server.url + path, json=body, headers=headers, timeout=120)
        return path, response.status_code, response.text[:300]

    with ThreadPoolExecutor(max_workers=8) as pool:
        answers = list(pool.map(lambda args: call(*args), calls))

    errors = [answer for answer in answers if answer[1] >= 500]
    assert errors == []
    assert {status for path, status, _ in answers} == {200}
    assert not AgentRun.objects.filter(name__startswith="fails-").exists()
    assert sorted(RunTally.objects.filter(run__name__startswith="holds-").values_list("trajectories", flat=True)) == [
        1] * SUCCEEDING
