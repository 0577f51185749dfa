"""A task subset's stored numbers follow it: recomputed for every finished evaluation whenever it is saved
(created, or its tasks changed, by a file, the admin or a test's factory), dropped when it is deleted."""

from django.db.models.signals import post_delete, post_save

from trajectories.models import TaskSubset

from .services.aggregates import drop_subset_aggregates, store_subset_aggregates


def _subset_saved(sender, instance, raw=False, **kwargs):
    if not raw:
        store_subset_aggregates(instance)


def _subset_deleted(sender, instance, **kwargs):
    drop_subset_aggregates(instance)


def connect() -> None:
    post_save.connect(_subset_saved, sender=TaskSubset, dispatch_uid="subset-aggregates")
    post_delete.connect(_subset_deleted, sender=TaskSubset, dispatch_uid="subset-aggregates-dropped")
