"""The per-run numbers the leaderboard reads (`RunTally`, `RunVerdictCount`, and per subset `SubsetTally`,
`SubsetVerdictCount`), recounted
whenever a run's trajectories or verdicts change (and a subset's whenever its tasks do), so listing runs costs the
same whatever they hold."""

from django.db import transaction
from django.db.models import Count, Q

from trajectories.models import (
    AgentRun, RunTally, RunVerdictCount, SubsetTally, SubsetVerdictCount, TaskResult, TaskSubset, Trajectory,
)
from trajectories.selectors import verdict_counts


def _lock_runs(runs) -> list[int]:
    """Lock the runs (in id order, as every recount does, so two never wait on each other) and return the ids
    of those still there. A recount holds its runs until it commits: two recounts of one run take turns, and a
    run being deleted (which locks it first, `remove_run`) is either deleted before the recount reads it, and
    left out, or after, with the rows the recount wrote. `no_key`: an import inserting the run's trajectories
    holds a key-share lock on it, which this lock does not wait for."""
    return list(runs.order_by("pk").select_for_update(no_key=True).values_list("pk", flat=True))


@transaction.atomic
def refresh_tallies(run_ids) -> None:
    """Recount the runs' trajectories and every verdict source's passed / total per site group."""
    run_ids = _lock_runs(AgentRun.objects.filter(pk__in=list(run_ids)))
    held = dict.fromkeys(run_ids, (0, 0))
    held.update({run_id: (total, stepped) for run_id, total, stepped in (
        Trajectory.objects.filter(run_id__in=run_ids).order_by().values("run_id")
        .annotate(total=Count("pk"), stepped=Count("pk", filter=Q(step_count__gt=0)))
        .values_list("run_id", "total", "stepped"))})
    # An upsert: a single write's signal may have dropped a run's tally meanwhile, or not.
    RunTally.objects.bulk_create([RunTally(run_id=run_id, trajectories=total, with_steps=bool(stepped))
                                  for run_id, (total, stepped) in held.items()],
                                 update_conflicts=True, unique_fields=["run"],
                                 update_fields=["trajectories", "with_steps", "updated_at"])
    RunVerdictCount.objects.filter(run_id__in=run_ids).delete()
    RunVerdictCount.objects.bulk_create(
        [RunVerdictCount(run_id=run_id, source=source, site=site, passed=passed, total=total)
         for run_id, source, site, passed, total in verdict_counts(run_ids)], batch_size=1000)
    SubsetTally.objects.filter(run_id__in=run_ids).delete()
    SubsetVerdictCount.objects.filter(run_id__in=run_ids).delete()
    for subset in TaskSubset.objects.all():
        _count_subset(subset, run_ids)


@transaction.atomic
def refresh_subset_counts(subset: TaskSubset) -> None:
    """Recount every run's trajectories and verdicts on the subset's tasks (its tasks are new or changed)."""
    run_ids = _lock_runs(AgentRun.objects.all())
    SubsetTally.objects.filter(subset=subset).delete()
    SubsetVerdictCount.objects.filter(subset=subset).delete()
    _count_subset(subset, run_ids)


@transaction.atomic
def remove_run(run: AgentRun) -> None:
    """Delete the run with its tallies and everything else of it, in one transaction that first locks it, so
    that no recount writes a tally of it between the tallies' deletion and its own."""
    list(AgentRun.objects.filter(pk=run.pk).select_for_update().values_list("pk", flat=True))
    run.delete()


def _count_subset(subset: TaskSubset, run_ids) -> None:
    on_tasks = subset.task_filter("task__")
    held = dict(Trajectory.objects.filter(on_tasks, run_id__in=run_ids).order_by().values("run_id")
                .annotate(total=Count("pk")).values_list("run_id", "total"))
    with_results = TaskResult.objects.filter(on_tasks, run_id__in=run_ids).order_by().values_list("run_id", flat=True)
    for run_id in with_results.distinct():
        held.setdefault(run_id, 0)
    SubsetTally.objects.bulk_create([SubsetTally(subset=subset, run_id=run_id, trajectories=total)
                                     for run_id, total in held.items()], batch_size=1000)
    SubsetVerdictCount.objects.bulk_create(
        [SubsetVerdictCount(subset=subset, run_id=run_id, source=source, site=site, passed=passed, total=total)
         for run_id, source, site, passed, total in verdict_counts(run_ids, on_tasks)], batch_size=1000)


def fresh_tallies(run_ids) -> None:
    """Recount the runs whose tallies were dropped by a single write since (one query when none was)."""
    stale = list(AgentRun.objects.filter(pk__in=list(run_ids), tally__isnull=True).values_list("pk", flat=True))
    if stale:
        refresh_tallies(stale)
