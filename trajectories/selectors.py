"""Reads of tasks, runs and trajectories."""

import json
from dataclasses import dataclass

from django.db.models import Count, Q, QuerySet

from annotation.models import GoldTrajectory

from .formats.actions import parse_action
from .models import AgentRun, HarnessVerdict, OutcomeStatus, Step, Task, Trajectory


def platform_counts() -> dict:
    return {
        "tasks": Task.objects.count(),
        "runs": AgentRun.objects.count(),
        "trajectories": Trajectory.objects.count(),
        "gold_trajectories": GoldTrajectory.objects.count(),
    }


OUTCOME_FIELDS = {status: f"outcome_{status}" for status in OutcomeStatus.values}


def runs_overview() -> QuerySet[AgentRun]:
    """Every run with its trajectory count, harness verdicts and outcome counts."""
    return (
        AgentRun.objects.select_related("uploaded_by")
        .annotate(
            trajectory_count=Count("trajectories"),
            passed=Count("trajectories", filter=Q(trajectories__success=True)),
            judged=Count("trajectories", filter=Q(trajectories__success__isnull=False)),
            **{
                field: Count("trajectories", filter=Q(trajectories__outcome_status=status))
                for status, field in OUTCOME_FIELDS.items()
            },
        )
        .order_by("-created_at")
    )


@dataclass(frozen=True)
class TrajectoryFilters:
    outcome: str = ""
    site: str = ""
    success: str = ""  # "pass", "fail", "unknown" or "" for all
    search: str = ""


def run_trajectories(run: AgentRun, filters: TrajectoryFilters) -> QuerySet[Trajectory]:
    trajectories = run.trajectories.select_related("task").order_by("task__number", "task__task_id")
    if filters.outcome:
        trajectories = trajectories.filter(outcome_status=filters.outcome)
    if filters.site:
        # Sites are a JSON list; matching the quoted name keeps "shopping" from matching "shopping_admin".
        trajectories = trajectories.filter(task__sites__icontains=json.dumps(filters.site))
    if filters.success == "unknown":
        trajectories = trajectories.filter(success__isnull=True)
    elif filters.success in ("pass", "fail"):
        trajectories = trajectories.filter(success=filters.success == "pass")
    if filters.search:
        trajectories = trajectories.filter(Q(task__task_id=filters.search) | Q(task__intent__icontains=filters.search))
    return trajectories


def verdicts_without_trajectory(run: AgentRun) -> list[HarnessVerdict]:
    """Harness verdicts the run's files gave for tasks it holds no trajectory of, in task order."""
    held = run.trajectories.filter(task__benchmark=run.benchmark).values("task__task_id")
    verdicts = list(HarnessVerdict.objects.filter(run=run, success__isnull=False).exclude(task_id__in=held)
                    .only("task_id", "success", "source"))
    return sorted(verdicts, key=lambda verdict: (not verdict.task_id.isdigit(),
                                                 int(verdict.task_id) if verdict.task_id.isdigit() else 0,
                                                 verdict.task_id))


def run_sites(run: AgentRun) -> list[str]:
    sites = Task.objects.filter(trajectories__run=run).values_list("sites", flat=True).distinct()
    return sorted({site for listed in sites for site in (listed or [])})


def viewer_trajectories() -> QuerySet[Trajectory]:
    return Trajectory.objects.select_related("run", "task")


@dataclass(frozen=True)
class StepView:
    """An agent step as the viewer shows it, with whether it did what its reasoning said."""

    step: Step
    planned_matches: bool | None  # None: the reasoning states no action

    @property
    def is_stop(self) -> bool:
        return self.step.action_type == "stop"


def step_views(trajectory: Trajectory) -> list[StepView]:
    views = []
    for step in trajectory.steps.select_related("screenshot").order_by("index"):
        matches = None
        if step.planned_action:
            matches = parse_action(step.planned_action).same_target(parse_action(step.action))
        views.append(StepView(step=step, planned_matches=matches))
    return views


def neighbours(trajectory: Trajectory) -> tuple[Trajectory | None, Trajectory | None]:
    """The run's trajectories just before and after this one, in task order."""
    ordered = list(
        trajectory.run.trajectories.order_by("task__number", "task__task_id").values_list("pk", flat=True)
    )
    position = ordered.index(trajectory.pk)
    previous = ordered[position - 1] if position > 0 else None
    following = ordered[position + 1] if position + 1 < len(ordered) else None
    found = Trajectory.objects.select_related("task").in_bulk([pk for pk in (previous, following) if pk])
    return found.get(previous), found.get(following)
