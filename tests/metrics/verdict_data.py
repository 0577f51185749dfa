"""A run whose three verdict sources disagree on one task, for the page, API and export tests."""

from django.contrib.auth.models import Group

from metrics.services.evaluation import create_evaluation, start_evaluation
from tests.factories import (
    AgentRunFactory, JudgeConfigFactory, StepFactory, TaskFactory, TrajectoryFactory, UserFactory,
)
from trajectories.services.outcomes_and_grades import record_grade


def grader(name: str, role: str = "annotator"):
    user = UserFactory(username=name)
    user.groups.add(Group.objects.get(name=role))
    return user


def three_voices(capture_on_commit):
    """Task A: harness FAIL, offline check PASS (must_include "42"), graders correct -> all three disagree
    with the harness. Task B: every source says FAIL."""
    run = AgentRunFactory(name="three-voices")
    eval_config = {"eval_types": ["string_match"], "reference_answers": {"must_include": ["42"]}}
    task_a = TaskFactory(eval_config=eval_config, sites=["shopping"])
    task_b = TaskFactory(eval_config=eval_config, sites=["gitlab"])
    disputed = TrajectoryFactory(run=run, task=task_a, final_answer="42", success=False, source_name="merged_log.txt")
    agreed = TrajectoryFactory(run=run, task=task_b, final_answer="7", success=False, source_name="merged_log.txt")
    for trajectory in (disputed, agreed):
        StepFactory(trajectory=trajectory, index=1)
    with capture_on_commit(execute=True):
        job = create_evaluation(runs=[run], judge_config=JudgeConfigFactory(name="exact", backend="exact"))
        start_evaluation(job)
    gina, hugo = grader("gina"), grader("hugo", "reviewer")
    record_grade(disputed, gina, 1, "answer is right")
    record_grade(disputed, hugo, 1)
    record_grade(agreed, gina, 0)
    record_grade(agreed, hugo, 0.5, "close")
    return {"run": run, "disputed": disputed, "agreed": agreed, "job": job, "gina": gina, "hugo": hugo}
