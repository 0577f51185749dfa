"""Rows that name a file the media store no longer holds (a store moved, files removed by hand)."""

import logging
from dataclasses import dataclass

from django.db import transaction
from django.db.models import Count

from trajectories.models import ImportJob, Screenshot

logger = logging.getLogger(__name__)
_logged_missing: set[str] = set()


def log_missing_once(kind: str, name: str) -> None:
    """A missing file is logged once per process, not on every page that shows it."""
    if name not in _logged_missing:
        _logged_missing.add(name)
        logger.error("%s file %s is missing from the media store (manage.py check_media lists such rows)", kind, name)


@dataclass(frozen=True)
class MissingFile:
    kind: str  # "screenshot" | "upload"
    pk: int
    name: str
    steps: int = 0


def missing_files() -> list[MissingFile]:
    """Every screenshot row and kept upload whose file is not in the store."""
    storage = Screenshot._meta.get_field("image").storage
    found = [
        MissingFile("screenshot", pk, name, steps)
        for pk, name, steps in _screenshots()
        if not storage.exists(name)
    ]
    for job in ImportJob.objects.exclude(upload="").only("pk", "upload"):
        if not job.upload.storage.exists(job.upload.name):
            found.append(MissingFile("upload", job.pk, job.upload.name))
    return found


def _screenshots():
    return Screenshot.objects.annotate(n=Count("steps")).values_list("pk", "image", "n").order_by("pk").iterator()


@transaction.atomic
def clear_missing(missing: list[MissingFile]) -> None:
    """Screenshot rows go (their steps show no screenshot); an import job forgets its upload."""
    Screenshot.objects.filter(pk__in=[m.pk for m in missing if m.kind == "screenshot"]).delete()
    ImportJob.objects.filter(pk__in=[m.pk for m in missing if m.kind == "upload"]).update(upload="")
