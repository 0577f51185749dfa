"""The per-run numbers the leaderboard reads (`RunTally`, `RunVerdictCount`, `SubsetVerdictCount`), recounted
whenever a run's trajectories or verdicts change (and a subset's whenever its tasks do), so listing runs costs the
same whatever they hold."""

from django.db import transaction
from django.db.models import Count, Q

from trajectories.models import AgentRun, RunTally, RunVerdictCount, SubsetVerdictCount, TaskSubset, Trajectory
from trajectories.selectors import verdict_counts


@transaction.atomic
def refresh_tallies(run_ids) -> None:
    """Recount the runs' trajectories and every verdict source's passed / total per site group."""
    run_ids = list(AgentRun.objects.filter(pk__in=list(run_ids)).values_list("pk", flat=True))
    held = dict.fromkeys(run_ids, (0, 0))
    held.update({run_id: (total, stepped) for run_id, total, stepped in (
        Trajectory.objects.filter(run_id__in=run_ids).order_by().values("run_id")
        .annotate(total=Count("pk"), stepped=Count("pk", filter=Q(step_count__gt=0)))
        .values_list("run_id", "total", "stepped"))})
    RunTally.objects.filter(run_id__in=run_ids).delete()
    RunTally.objects.bulk_create([RunTally(run_id=run_id, trajectories=total, with_steps=bool(stepped))
                                  for run_id, (total, stepped) in held.items()])
    RunVerdictCount.objects.filter(run_id__in=run_ids).delete()
    RunVerdictCount.objects.bulk_create(
        [RunVerdictCount(run_id=run_id, source=source, site=site, passed=passed, total=total)
         for run_id, source, site, passed, total in verdict_counts(run_ids)], batch_size=1000)
    SubsetVerdictCount.objects.filter(run_id__in=run_ids).delete()
    for subset in TaskSubset.objects.all():
        SubsetVerdictCount.objects.bulk_create(_subset_counts(subset, run_ids), batch_size=1000)


@transaction.atomic
def refresh_subset_counts(subset: TaskSubset) -> None:
    """Recount every run's verdicts on the subset's tasks (its tasks are new or changed)."""
    SubsetVerdictCount.objects.filter(subset=subset).delete()
    run_ids = AgentRun.objects.values_list("pk", flat=True)
    SubsetVerdictCount.objects.bulk_create(_subset_counts(subset, run_ids), batch_size=1000)


def _subset_counts(subset: TaskSubset, run_ids) -> list[SubsetVerdictCount]:
    return [SubsetVerdictCount(subset=subset, run_id=run_id, source=source, site=site, passed=passed, total=total)
            for run_id, source, site, passed, total in verdict_counts(run_ids, subset.task_filter("task__"))]


def fresh_tallies(run_ids) -> None:
    """Recount the runs whose tallies were dropped by a single write since (one query when none was)."""
    stale = list(AgentRun.objects.filter(pk__in=list(run_ids), tally__isnull=True).values_list("pk", flat=True))
    if stale:
        refresh_tallies(stale)
