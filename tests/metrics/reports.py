"""Runs evaluated for real (exact judge, in-process jobs), for the leaderboard, comparison, plot and export tests."""

from dataclasses import dataclass

from django.contrib.auth import get_user_model

from metrics.models import EvaluationJob
from metrics.services import evaluation
from metrics.tasks import run_evaluation
from tests.factories import (
    AgentRunFactory,
    GoldStepFactory,
    GoldTrajectoryFactory,
    JudgeConfigFactory,
    StepFactory,
    TaskFactory,
    TrajectoryFactory,
)


def trajectory(run, task, actions, observation="", **fields):
    made = TrajectoryFactory(run=run, task=task, step_count=len(actions), **fields)
    for index, action in enumerate(actions, start=1):
        StepFactory(trajectory=made, index=index, action=action, planned_action=action,
                    action_type=action.split(" ")[0], observation=observation)
    return made


def gold(task, texts, **fields):
    # One annotator without a password: hashing one per gold trajectory would dominate the tests' time.
    fields.setdefault("annotator", get_user_model().objects.get_or_create(username="annotator")[0])
    made = GoldTrajectoryFactory(task=task, status="approved", **fields)
    for index, text in enumerate(texts, start=1):
        GoldStepFactory(gold=made, index=index, text=text)
    return made


def evaluate(run, judge=None) -> EvaluationJob:
    """Create and run an evaluation of one run to the end, in this process."""
    job = evaluation.create_evaluation(runs=[run], judge_config=judge or exact_judge())
    run_evaluation(job.pk)
    job.refresh_from_db()
    assert job.status == EvaluationJob.Status.DONE, job.errors
    return job


def exact_judge():
    return JudgeConfigFactory(name="exact", backend="exact")


GOLD = ["click [1]", "click [2]", "click [3]"]


@dataclass
class TwoRuns:
    """alpha and beta on the same four tasks (two sites and a two-site task); alpha has a fifth task."""

    alpha: object
    beta: object
    tasks: dict
    alpha_job: EvaluationJob
    beta_job: EvaluationJob


def two_evaluated_runs() -> TwoRuns:
    tasks = {
        "a1": TaskFactory(task_id="101", number=101, sites=["shopping_admin"]),
        "a2": TaskFactory(task_id="102", number=102, sites=["shopping_admin"]),
        "g1": TaskFactory(task_id="201", number=201, sites=["gitlab"]),
        "gr": TaskFactory(task_id="301", number=301, sites=["reddit", "gitlab"]),
        "x": TaskFactory(task_id="401", number=401, sites=["shopping"]),
    }
    for key in ("a1", "a2", "g1", "gr"):
        gold(tasks[key], GOLD)
    alpha = AgentRunFactory(name="alpha", agent="cot", model="gpt-4", paradigm="step_by_step")
    beta = AgentRunFactory(name="beta", agent="plan", model="llama", paradigm="full_plan")
    # alpha: the paper's Table 1 walk on a1 (SSR 1, two deviations, two recoveries), weaker elsewhere
    trajectory(alpha, tasks["a1"], ["click [9]", "click [1]", "click [2]", "scroll [down]", "click [3]", "go_back"],
               success=True)
    trajectory(alpha, tasks["a2"], ["click [1]", "click [7]", "click [7]"], success=False)
    trajectory(alpha, tasks["g1"], ["click [1]", "click [2]", "click [3]"], success=True)
    trajectory(alpha, tasks["gr"], ["scroll [down]"], success=False)
    trajectory(alpha, tasks["x"], ["click [5]"], success=None, final_answer=None, outcome_status="no_stop")
    # beta: the gold path on a2 and gr, nothing right on a1
    trajectory(beta, tasks["a1"], ["click [8]", "click [8]"], success=False)
    trajectory(beta, tasks["a2"], ["click [1]", "click [2]", "click [3]"], success=True)
    trajectory(beta, tasks["g1"], ["click [1]", "click [2]"], success=True)
    trajectory(beta, tasks["gr"], ["click [1]", "click [2]", "click [3]"], success=True)
    judge = exact_judge()
    return TwoRuns(alpha, beta, tasks, evaluate(alpha, judge), evaluate(beta, judge))
