import pytest
from django.contrib.auth.models import Group
from rest_framework.test import APIClient

from accounts.roles import ADMIN, ANNOTATOR, REVIEWER
from metrics.services import evaluation
from tests.factories import (
    AgentRunFactory,
    GoldStepFactory,
    GoldTrajectoryFactory,
    JudgeConfigFactory,
    StepFactory,
    TaskFactory,
    TrajectoryFactory,
    UserFactory,
)

GOLD_STEPS = ["click [1]", "click [2]", "click [3]"]


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def member(role: str | None, username: str):
    user = UserFactory(username=username)
    if role:
        user.groups.add(Group.objects.get_or_create(name=role)[0])
    return user


def client_for(user=None) -> APIClient:
    client = APIClient()
    if user is not None:
        client.force_authenticate(user)
    return client


def make_users() -> dict:
    return {
        "admin": member(ADMIN, "adam"),
        "reviewer": member(REVIEWER, "rita"),
        "annotator": member(ANNOTATOR, "alice"),
        "reader": member(None, "rob"),
    }


@pytest.fixture
def users(db):
    return make_users()


@pytest.fixture
def api(users):
    """A client logged in as a user without any role."""
    return client_for(users["reader"])


def _trajectory(run, task, actions, **fields):
    trajectory = TrajectoryFactory(run=run, task=task, step_count=len(actions), **fields)
    for index, action in enumerate(actions, start=1):
        StepFactory(trajectory=trajectory, index=index, action=action, planned_action=action,
                    action_type=action.split(" ")[0], reasoning=f"Step {index}: I will {action}.")
    return trajectory


def make_platform(users: dict) -> dict:
    """Two runs over four tasks on three site groups, three tasks with approved gold, both runs
    evaluated with the exact judge: real scores and aggregates behind every results endpoint.

    Evaluations start on commit: call it outside a transaction, or capture the callbacks."""
    tasks = [
        TaskFactory(task_id="101", number=101, sites=["shopping_admin"], requirements=["42"]),
        TaskFactory(task_id="102", number=102, sites=["shopping_admin"]),
        TaskFactory(task_id="103", number=103, sites=["gitlab"], benchmark="webarena"),
        TaskFactory(task_id="104", number=104, sites=["shopping", "reddit"]),
    ]
    for task in tasks[:3]:
        gold = GoldTrajectoryFactory(task=task, status="approved", annotator=users["annotator"])
        for index, text in enumerate(GOLD_STEPS, start=1):
            GoldStepFactory(gold=gold, index=index, text=text)
    run_a = AgentRunFactory(name="agent-a", paradigm="step_by_step", uploaded_by=users["reader"])
    run_b = AgentRunFactory(name="agent-b", paradigm="tree_search", model="other-model")
    steps_a = [GOLD_STEPS, ["click [1]", "click [9]", "click [3]"], ["click [7]"], ["scroll [down]", "click [1]"]]
    steps_b = [["click [9]", "click [1]", "click [2]", "click [3]"], ["click [8]"], GOLD_STEPS, ["click [1]"]]
    for task, a, b in zip(tasks, steps_a, steps_b):
        _trajectory(run_a, task, a, success=task.task_id != "103")
        _trajectory(run_b, task, b, success=task.task_id == "103", outcome_status="early_stop",
                    outcome_reason="repeated_action", final_answer=None)
    judge = JudgeConfigFactory(name="exact", backend="exact")
    jobs = {}
    for run in (run_a, run_b):
        jobs[run.name] = evaluation.create_evaluation(runs=[run], judge_config=judge, user=users["reviewer"])
        evaluation.start_evaluation(jobs[run.name])
    return {"tasks": tasks, "runs": {"agent-a": run_a, "agent-b": run_b}, "jobs": jobs, "judge": judge}


@pytest.fixture
def platform(users, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        data = make_platform(users)
    for job in data["jobs"].values():
        job.refresh_from_db()
        assert job.status == "done", job.errors
    return data
