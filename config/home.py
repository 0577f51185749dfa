"""Reads for the home page's guided start: examples taken from what the platform holds (the demo data
after `manage.py load_demo`), so that each step links to something real."""

from dataclasses import dataclass

from annotation.models import GoldStatus, GoldTrajectory
from metrics.models import EvaluationJob
from trajectories.models import AgentRun

EXAMPLE_RUNS = 3


@dataclass(frozen=True)
class Guide:
    runs: list  # runs that hold trajectories, to open or evaluate
    gold: GoldTrajectory | None  # approved gold to look at in the editor
    evaluation: EvaluationJob | None  # the latest finished evaluation


def guide() -> Guide:
    return Guide(
        runs=list(AgentRun.objects.filter(trajectories__isnull=False).distinct().order_by("name")[:EXAMPLE_RUNS]),
        gold=GoldTrajectory.objects.filter(status=GoldStatus.APPROVED).select_related("task")
        .order_by("task__number", "pk").first(),
        evaluation=EvaluationJob.objects.filter(status=EvaluationJob.Status.DONE).order_by("-finished_at").first(),
    )
