"""A run's stored tallies are dropped when one of its trajectories or verdicts is saved or deleted one by one
(forms, the admin, single writes); the next read recounts them (`trajectories.services.tallies.fresh_tallies`).
Bulk writes recount explicitly in their services."""

from django.db.models.signals import post_delete, post_save

from .models import OutcomeGrade, RunTally, TaskResult, Trajectory, Verdict


def _stale(sender, instance, **kwargs):
    RunTally.objects.filter(run_id=instance.run_id).delete()


def connect() -> None:
    for model in (Trajectory, TaskResult, OutcomeGrade, Verdict):
        post_save.connect(_stale, sender=model, dispatch_uid=f"tally-stale-save-{model.__name__}")
        post_delete.connect(_stale, sender=model, dispatch_uid=f"tally-stale-delete-{model.__name__}")
