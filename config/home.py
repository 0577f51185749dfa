"""Reads for the home page, which sits above every app: what the platform holds, and the guided start's
examples taken from it (the demo data after `manage.py load_demo`), so that each step links to something real."""

from dataclasses import dataclass

from annotation.models import GoldStatus, GoldTrajectory
from metrics.models import EvaluationJob
from trajectories.models import AgentRun, Task, Trajectory

EXAMPLE_RUNS = 3


@dataclass(frozen=True)
class Guide:
    runs: list  # runs that hold trajectories, to open or evaluate
    gold: GoldTrajectory | None  # approved gold to look at in the editor
    evaluation: EvaluationJob | None  # the latest finished evaluation


def platform_counts() -> dict:
    return {
        "tasks": Task.objects.count(),
        "runs": AgentRun.objects.count(),
        "trajectories": Trajectory.objects.count(),
        "gold_trajectories": GoldTrajectory.objects.count(),
    }


def guide() -> Guide:
    return Guide(
        runs=list(AgentRun.objects.filter(trajectories__isnull=False).distinct().order_by("name")[:EXAMPLE_RUNS]),
        gold=GoldTrajectory.objects.filter(status=GoldStatus.APPROVED).select_related("task")
        .order_by("task__number", "pk").first(),
        evaluation=EvaluationJob.objects.filter(status=EvaluationJob.Status.DONE).order_by("-finished_at").first(),
    )
