"""A run's stored tallies are dropped when one of its trajectories or verdicts is saved or deleted one by one
(forms, the admin, single writes); the next read recounts them (`trajectories.services.tallies.fresh_tallies`).
Bulk writes recount explicitly in their services. A task subset's verdict counts are recounted whenever it is
saved (created, or its tasks changed, by a file, the admin or a test's factory); deleting it deletes them."""

from django.db.models.signals import post_delete, post_save

from .models import OutcomeGrade, RunTally, TaskResult, TaskSubset, Trajectory, Verdict
from .services.tallies import refresh_subset_counts


def _stale(sender, instance, **kwargs):
    RunTally.objects.filter(run_id=instance.run_id).delete()


def _subset_saved(sender, instance, raw=False, **kwargs):
    if not raw:
        refresh_subset_counts(instance)


def connect() -> None:
    post_save.connect(_subset_saved, sender=TaskSubset, dispatch_uid="subset-verdict-counts")
    for model in (Trajectory, TaskResult, OutcomeGrade, Verdict):
        post_save.connect(_stale, sender=model, dispatch_uid=f"tally-stale-save-{model.__name__}")
        post_delete.connect(_stale, sender=model, dispatch_uid=f"tally-stale-delete-{model.__name__}")
