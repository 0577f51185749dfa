"""Failure labels read with a trajectory (Who&When's) stored as imported human attributions; the
steps of a finished import given their search vectors in the background."""

from django.db import transaction
from django.db.models.signals import post_save

from trajectories.events import failure_labels_read
from trajectories.models import ImportJob, ResultOrigin

from .models import AttributionSource, FailureAttribution, SourceKind


def _store_labels(sender, trajectory, labels, file: str, **kwargs) -> None:
    for label in labels:
        source, _ = AttributionSource.objects.get_or_create(kind=SourceKind.IMPORTED, name=label.source[:200],
                                                            model="")
        FailureAttribution.objects.create(
            trajectory=trajectory, source=source, annotator_name="", step_index=label.step, agent=label.agent,
            failure_type=label.failure_type, note=label.reason, origin=ResultOrigin.IMPORT, source_name=file[-500:])


def _index_imported_steps(sender, instance, raw=False, **kwargs) -> None:
    if not raw and instance.status == ImportJob.Status.DONE:
        from .tasks import index_step_vectors_task

        transaction.on_commit(index_step_vectors_task.delay)


def connect() -> None:
    post_save.connect(_index_imported_steps, sender=ImportJob, dispatch_uid="failures-step-vectors")
    failure_labels_read.connect(_store_labels, dispatch_uid="failures-imported-labels")
