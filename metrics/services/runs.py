"""Renaming and deleting a run. Deleting lives here, on top, because a run's evaluations go with it."""

from dataclasses import dataclass

from django.db import transaction
from django.db.models import Count

from metrics.models import EvaluationJob
from trajectories.models import AgentRun, ImportJob, Step
from trajectories.services.tallies import remove_run


class RunNameError(ValueError):
    pass


def rename_run(run: AgentRun, name: str) -> AgentRun:
    """Give the run a new name; its import jobs carry the name they show too."""
    name = (name or "").strip()
    limit = AgentRun._meta.get_field("name").max_length
    if not name:
        raise RunNameError("a run needs a name")
    if len(name) > limit:
        raise RunNameError(f"a run's name has at most {limit} characters; this one has {len(name)}")
    with transaction.atomic():
        if AgentRun.objects.filter(name=name).exclude(pk=run.pk).exists():
            raise RunNameError(f"another run is called {name!r}")
        run.name = name
        run.save(update_fields=["name", "updated_at"])
        ImportJob.objects.filter(run=run).update(run_name=name)
    return run


@dataclass(frozen=True)
class RunDeletion:
    """What deleting a run takes with it, for the confirmation that names it."""

    trajectories: int
    steps: int
    task_results: int
    outcome_grades: int
    evaluations_removed: int  # evaluations of this run alone
    evaluations_shared: int  # evaluations of several runs: only this run's scores go


def _own_and_shared(run: AgentRun):
    # Counted apart from the filter on this run, which would count only this run's membership.
    jobs = EvaluationJob.objects.filter(pk__in=list(run.evaluation_jobs.values_list("pk", flat=True))).annotate(
        run_count=Count("runs"))
    own = [job.pk for job in jobs if job.run_count == 1]
    return own, jobs.count() - len(own)


def deletion_of(run: AgentRun) -> RunDeletion:
    own, shared = _own_and_shared(run)
    return RunDeletion(
        trajectories=run.trajectories.count(), steps=Step.objects.filter(trajectory__run=run).count(),
        task_results=run.task_results.count(), outcome_grades=run.outcome_grades.count(),
        evaluations_removed=len(own), evaluations_shared=shared,
    )


@transaction.atomic
def delete_run(run: AgentRun) -> None:
    """The run, its trajectories with their steps and scores, its verdicts and grades, and the
    evaluations of it alone; gold, tasks, judge decisions and screenshots shared with others stay."""
    own, _ = _own_and_shared(run)
    EvaluationJob.objects.filter(pk__in=own).delete()
    remove_run(run)
