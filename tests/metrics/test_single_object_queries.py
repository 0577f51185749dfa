"""A page or API answer about one object runs as many queries beside 2 other runs as beside 20."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from metrics.services import evaluation
from metrics.tasks import run_evaluation
from tests.factories import AgentRunFactory, ImportJobFactory, TaskFactory, UserFactory
from tests.metrics.reports import evaluate, exact_judge, trajectory
from trajectories.models import OutcomeGrade, Verdict, VerdictSource

pytestmark = pytest.mark.django_db

ACTIONS = ["click [1]", "type [2] [shoes]", "stop [done]"]


def _graded_run(tasks, judge, source):
    run = AgentRunFactory()
    for number, task in enumerate(tasks):
        made = trajectory(run, task, ACTIONS, success=number % 2 == 0)
        OutcomeGrade.objects.create(run=run, task=task, trajectory=made, grader_name="ann", value=1.0)
        Verdict.objects.create(run=run, task=task, trajectory=made, source=source, success=number % 3 == 0)
    return run


def _grow(count, tasks, judge, source):
    """`count` more runs on the same tasks, evaluated together."""
    runs = [_graded_run(tasks, judge, source) for _ in range(count)]
    job = evaluation.create_evaluation(runs=runs, judge_config=judge)
    run_evaluation(job.pk)


def _counts(client, urls) -> dict[str, int]:
    counts = {}
    for name, url in urls.items():
        assert client.get(url).status_code == 200, name  # the first answer may count what single writes dropped
        with CaptureQueriesContext(connection) as queries:
            assert client.get(url).status_code == 200, name
        counts[name] = len(queries)
    return counts


def test_pages_of_one_object_run_the_same_queries_beside_ten_times_more_data(client):
    client.force_login(UserFactory(username="viewer", is_superuser=True, is_staff=True))
    judge = exact_judge()
    source = VerdictSource.objects.create(kind="llm_judge", name="WebJudge", model="o4-mini")
    tasks = [TaskFactory(sites=["shopping"] if number % 2 else ["gitlab"]) for number in range(4)]
    run = _graded_run(tasks, judge, source)
    job = evaluate(run, judge)
    shown = run.trajectories.order_by("pk").first()
    imported = ImportJobFactory(run=run)
    urls = {
        "trajectory page": reverse("metrics:trajectory-detail", args=[shown.pk]),
        "run page": reverse("metrics:run-detail", args=[run.pk]),
        "task page": reverse("trajectories:task-detail", args=[tasks[0].pk]),
        "evaluation page": reverse("metrics:job", args=[job.pk]),
        "import job page": reverse("trajectories:import-job", args=[imported.pk]),
        "trajectory API": reverse("api-trajectory-detail", args=[shown.pk]),
        "run API": reverse("api-run-detail", args=[run.pk]),
        "task API": reverse("api-task-detail", args=[tasks[0].pk]),
        "evaluation API": reverse("api-evaluation", args=[job.pk]),
        "run verdicts API": reverse("api-run-verdicts", args=[run.pk]),
        "import job API": reverse("api-import-job", args=[imported.pk]),
    }
    _grow(2, tasks, judge, source)
    small = _counts(client, urls)
    _grow(18, tasks, judge, source)
    assert _counts(client, urls) == small
