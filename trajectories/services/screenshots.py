"""Screenshot files in Django storage, one file and one row per distinct image.

Files are written before the trajectory's transaction (so that it stays short) and removed
again when that transaction fails, so a failed import leaves neither rows nor files behind.
"""

from django.core.files.base import ContentFile

from trajectories.formats.screenshots import Image
from trajectories.models import Screenshot

_FIELD = Screenshot._meta.get_field("image")


def unstored(images: dict[str, Image]) -> dict[str, Image]:
    """The images that have no Screenshot row yet."""
    known = set(Screenshot.objects.filter(sha256__in=list(images)).values_list("sha256", flat=True))
    return {sha: image for sha, image in images.items() if sha not in known}


def write_files(images: dict[str, Image]) -> dict[str, str]:
    """Store image files (no database access, so it may run on another thread); names by hash."""
    written: dict[str, str] = {}
    try:
        for sha, image in images.items():
            name = _FIELD.generate_filename(None, f"{sha}.{image.extension}")
            written[sha] = _FIELD.storage.save(name, ContentFile(image.data))
    except BaseException:
        discard_files(written.values())
        raise
    return written


def screenshot_ids(images: dict[str, Image], written: dict[str, str]) -> tuple[dict[str, int], list[str]]:
    """Rows for the newly written files, inside the caller's transaction.

    Returns the row id of every image by hash, and the written files that turned out not to be
    needed because a concurrent import stored the same image first.
    """
    Screenshot.objects.bulk_create(
        [
            Screenshot(sha256=sha, image=name, content_type=images[sha].content_type, size=len(images[sha].data))
            for sha, name in written.items()
        ],
        ignore_conflicts=True,
    )
    ids, unused = {}, []
    for sha, pk, name in Screenshot.objects.filter(sha256__in=list(images)).values_list("sha256", "id", "image"):
        ids[sha] = pk
        if sha in written and written[sha] != name:
            unused.append(written[sha])
    return ids, unused


def discard_files(names) -> None:
    for name in names:
        _FIELD.storage.delete(name)
