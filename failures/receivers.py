"""Failure labels read with a trajectory (Who&When's) stored as imported human attributions."""

from trajectories.events import failure_labels_read
from trajectories.models import ResultOrigin

from .models import AttributionSource, FailureAttribution, SourceKind


def _store_labels(sender, trajectory, labels, file: str, **kwargs) -> None:
    for label in labels:
        source, _ = AttributionSource.objects.get_or_create(kind=SourceKind.IMPORTED, name=label.source[:200],
                                                            model="")
        FailureAttribution.objects.create(
            trajectory=trajectory, source=source, annotator_name="", step_index=label.step, agent=label.agent,
            failure_type=label.failure_type, note=label.reason, origin=ResultOrigin.IMPORT, source_name=file[-500:])


def connect() -> None:
    failure_labels_read.connect(_store_labels, dispatch_uid="failures-imported-labels")
