"""A page or API answer about one object runs as many queries beside 2 other runs as beside 20."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from annotation.models import GoldCheckJob
from metrics.services import evaluation
from metrics.tasks import run_evaluation
from tests.factories import AgentRunFactory, ImportJobFactory, ScreenshotFactory, TaskFactory, UserFactory
from tests.metrics.reports import GOLD, evaluate, exact_judge, gold, trajectory
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
    """`count` more runs on the same tasks, evaluated together, and as many other tasks with gold."""
    runs = [_graded_run(tasks, judge, source) for _ in range(count)]
    for _ in range(count):
        gold(TaskFactory(), GOLD)
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
    viewer = UserFactory(username="viewer", is_superuser=True, is_staff=True)
    client.force_login(viewer)
    judge = exact_judge()
    source = VerdictSource.objects.create(kind="llm_judge", name="WebJudge", model="o4-mini")
    tasks = [TaskFactory(sites=["shopping"] if number % 2 else ["gitlab"]) for number in range(4)]
    golds = [gold(task, GOLD) for task in tasks]
    run, other = _graded_run(tasks, judge, source), _graded_run(tasks, judge, source)
    job = evaluate(run, judge)
    evaluate(other, judge)
    shown = run.trajectories.order_by("pk")[1]
    score = job.scores.get(trajectory=shown)
    decision = score.decisions.order_by("pk").first()
    imported = ImportJobFactory(run=run)
    check = GoldCheckJob.objects.create(kind=GoldCheckJob.Kind.QUALITY, created_by=viewer)
    shot = ScreenshotFactory()
    task, shown_gold = tasks[0], golds[0]
    urls = {
        "trajectory page": reverse("metrics:trajectory-detail", args=[shown.pk]),
        "trajectory page, next steps": reverse("metrics:trajectory-detail", args=[shown.pk]) + "?fragment=steps",
        "run page": reverse("metrics:run-detail", args=[run.pk]),
        "run deletion page": reverse("metrics:run-delete", args=[run.pk]),
        "run agreement page": reverse("metrics:verdict-agreement", args=[run.pk]),
        "task page": reverse("trajectories:task-detail", args=[task.pk]),
        "side by side of one task": reverse("metrics:compare-task", args=[run.pk, other.pk, task.pk]),
        "evaluation page": reverse("metrics:job", args=[job.pk]),
        "import job page": reverse("trajectories:import-job", args=[imported.pk]),
        "import job progress": reverse("trajectories:import-job-progress", args=[imported.pk]),
        "screenshot": reverse("trajectories:screenshot", args=[shot.sha256]),
        "gold editor of a task": reverse("annotation:task", args=[task.pk]),
        "gold editor": reverse("annotation:gold", args=[shown_gold.pk]),
        "trajectory API": reverse("api-trajectory-detail", args=[shown.pk]),
        "trajectory grades API": reverse("api-trajectory-grades", args=[shown.pk]),
        "run API": reverse("api-run-detail", args=[run.pk]),
        "run verdicts API": reverse("api-run-verdicts", args=[run.pk]),
        "run agreement API": reverse("api-run-agreement", args=[run.pk]),
        "task API": reverse("api-task-detail", args=[task.pk]),
        "task requirements API": reverse("api-requirements", args=[task.benchmark, task.task_id]),
        "side by side API": reverse("api-comparison-task", args=[task.pk])
                            + f"?baseline={run.name}&candidate={other.name}",
        "evaluation API": reverse("api-evaluation", args=[job.pk]),
        "evaluation scores API": reverse("api-evaluation-scores", args=[job.pk]),
        "judge decision API": reverse("api-judge-decision-detail", args=[decision.pk]),
        "judge config API": reverse("api-judge-config-detail", args=[judge.pk]),
        "import job API": reverse("api-import-job", args=[imported.pk]),
        "gold API": reverse("api-gold-detail", args=[shown_gold.pk]),
        "gold steps API": reverse("api-gold-steps", args=[shown_gold.pk]),
        "gold step API": reverse("api-gold-step", args=[shown_gold.pk, 1]),
        "gold check job API": reverse("api-gold-check", args=[check.pk]),
    }
    _grow(2, tasks, judge, source)
    small = _counts(client, urls)
    _grow(18, tasks, judge, source)
    assert _counts(client, urls) == small


def test_the_evaluation_box_of_a_long_trajectory_holds_what_its_page_shows(client, settings, monkeypatch):
    """A page of steps gets the metrics' marks of its own steps; the gold steps their matches; the decisions
    are listed up to a bound, with their count and where to find them all."""
    from metrics.selectors import jobs_and_scores

    settings.TRAJECTORY_STEPS_PER_PAGE = 2
    monkeypatch.setattr(jobs_and_scores, "DECISIONS_SHOWN", 2)
    client.force_login(UserFactory(username="viewer", is_superuser=True, is_staff=True))
    task = TaskFactory()
    gold(task, GOLD)
    run = AgentRunFactory()
    made = trajectory(run, task, ["click [1]", "click [2]", "click [3]", "click [9]"], observation="[1] link 'One'")
    job = evaluate(run)
    score = job.scores.get()
    decisions = score.decisions.count()
    assert decisions > 2

    shown = jobs_and_scores.trajectory_evaluation(made, viewer=UserFactory(is_superuser=True), steps=[3, 4])
    assert sorted(shown.steps) == [3, 4]
    assert [(step.index, match) for step, match in shown.gold_steps] == [(1, (1, 1.0)), (2, (2, 1.0)), (3, (3, 1.0))]
    assert len(shown.decisions) == 2 and shown.decision_count == decisions

    page = client.get(reverse("metrics:trajectory-detail", args=[made.pk])).content.decode()
    assert f"Judge decisions ({decisions})" in page and 'id="decisions-cut"' in page
    assert f"/exports/decisions.csv?run={run.pk}&amp;job={job.pk}" in page
    assert "matched by step 3 (1.00)" in page


def test_the_task_page_lists_the_runs_trajectories_a_page_at_a_time(client, monkeypatch):
    from trajectories import views

    monkeypatch.setattr(views, "TASK_TRAJECTORIES_PER_PAGE", 2)
    client.force_login(UserFactory(username="viewer"))
    task = TaskFactory()
    runs = [AgentRunFactory(name=f"run-{number}") for number in range(3)]
    for run in runs:
        trajectory(run, task, ACTIONS)
    first = client.get(reverse("trajectories:task-detail", args=[task.pk])).content.decode()
    assert "Trajectories (3)" in first and "run-0" in first and "run-1" in first and "run-2" not in first
    assert "page 1 of 2" in first and "?page=2" in first
    second = client.get(reverse("trajectories:task-detail", args=[task.pk]) + "?page=2").content.decode()
    assert "run-2" in second and "run-0" not in second
