"""Screenshot files in Django storage, one file and one row per distinct image.

Files are written where the trajectory file is read (a parsing worker), before the trajectory's
transaction, so that the transaction stays short and the importing process only stores rows.
They are removed again when that transaction fails, or finds the image already stored, so a
failed import leaves neither rows nor files behind.
"""

import contextlib
import json
import os
import posixpath
from dataclasses import replace

from django.core.files.base import ContentFile
from django.core.files.storage import FileSystemStorage, default_storage, storages
from django.db import connection
from django.utils.functional import empty

from trajectories.formats.readers import Record
from trajectories.formats.screenshots import Image
from trajectories.models import Screenshot

_FIELD = Screenshot._meta.get_field("image")


def write_files(images: dict[str, Image]) -> dict[str, str]:
    """Store image files (no database access, so it may run in another thread or process); names by hash."""
    written: dict[str, str] = {}
    # The field's dated folder, worked out once per trajectory rather than once per image: the
    # names within it (hash and extension) are already valid file names.
    folder = posixpath.dirname(_FIELD.generate_filename(None, "screenshot.png"))
    storage = _FIELD.storage
    directory = storage.path(folder) if isinstance(storage, FileSystemStorage) else None
    try:
        for sha, image in images.items():
            written[sha] = _save(folder, directory, f"{sha}.{image.extension}", image.data)
    except BaseException:
        discard_files(written.values())
        raise
    return written


def _save(folder: str, directory: str | None, filename: str, data: bytes) -> str:
    """Save a file as `filename` in `folder` or, when that name is taken, under the name the storage
    picks. In a folder (`directory` on disk), written directly unless the folder is new or the
    name taken: Django's storage spends more on checking the name than on writing the bytes, and
    a run has tens of thousands of them."""
    storage, name = _FIELD.storage, f"{folder}/{filename}"
    if directory is None:
        return storage.save(name, ContentFile(data))
    path = os.path.join(directory, filename)
    try:
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    except (FileNotFoundError, FileExistsError):  # a new folder, or the name taken
        return storage.save(name, ContentFile(data))
    try:
        with os.fdopen(descriptor, "wb") as file:
            file.write(data)
        if storage.file_permissions_mode is not None:
            os.chmod(path, storage.file_permissions_mode)
    except BaseException:
        os.unlink(path)
        raise
    return name


def write_ahead(record: Record) -> None:
    """Write the record's screenshot files and let go of their bytes: what travels on to the
    importing process is the names, not the images."""
    record.files = write_files(record.images)
    _let_go_of_bytes(record)


def leave_behind(record: Record) -> None:
    """In a parsing worker, for a trajectory that will not be stored (its files were not written
    ahead): let go of its screenshots' bytes rather than send them to the importing process, which
    would only drop them. A re-import of a whole run sends back the screenshots of none of it."""
    if record.images and not record.files:
        _let_go_of_bytes(record)
        record.images_left_behind = True


def _let_go_of_bytes(record: Record) -> None:
    """The record's images as their hash, type and size only."""
    record.images = {sha: replace(image, data=b"") for sha, image in record.images.items()}


def take_files(record: Record) -> dict[str, str]:
    """The record's screenshot files, written now unless they were written ahead; the record no
    longer holds them, so the caller owns (and on failure discards) them."""
    files = record.files or write_files(record.images)
    record.files = {}
    return files


def forget_storage() -> None:
    """In a forked worker: build the storage anew, so that no client connection (an S3 session)
    is shared with the parent process."""
    storages._storages = {}
    default_storage._wrapped = empty


def screenshot_ids(images: dict[str, Image], written: dict[str, str]) -> tuple[dict[str, int], list[str]]:
    """Rows for the newly written files, inside the caller's transaction.

    Returns the row id of every image by hash, and the written files that turned out not to be
    needed because the image was stored already (by an earlier import or a concurrent one).
    """
    return batch_screenshot_ids([(images, written)])


def batch_screenshot_ids(trajectories: list[tuple[dict[str, Image], dict[str, str]]]
                         ) -> tuple[dict[str, int], list[str]]:
    """`screenshot_ids` for the images and written files of several trajectories at once: an image
    two of them hold is stored once, from the first one's file, and the other's file is not needed."""
    images: dict[str, Image] = {}
    written: dict[str, str] = {}
    for own_images, own_written in trajectories:
        for sha, image in own_images.items():
            images.setdefault(sha, image)
        for sha, name in own_written.items():
            written.setdefault(sha, name)
    if not images:
        return {}, []
    if connection.vendor == "postgresql":
        found = _insert_rows(images, written)
    else:
        Screenshot.objects.bulk_create(
            [Screenshot(sha256=sha, image=written[sha], content_type=image.content_type, size=image.size)
             for sha, image in images.items()],
            ignore_conflicts=True,
        )
        found = []
    missing = images.keys() - {sha for sha, _, _ in found}
    if missing:
        found += Screenshot.objects.filter(sha256__in=missing).values_list("sha256", "id", "image")
    ids, names = {}, {}
    for sha, pk, name in found:
        ids[sha], names[sha] = pk, name
    unused = [name for _, own_written in trajectories for sha, name in own_written.items() if name != names[sha]]
    return ids, unused


_TABLE = Screenshot._meta.db_table


def _insert_rows(images: dict[str, Image], written: dict[str, str]) -> list[tuple[str, int, str]]:
    """PostgreSQL: insert the new rows and read the existing ones in one round trip. Both parts see
    the database as the statement began, so an image stored by a concurrent import after that is
    in neither and is read afterwards. The rows travel as one JSON document: as arrays, each of
    their values was checked for quoting one by one, which cost more than the statement."""
    column = {name: connection.ops.quote_name(Screenshot._meta.get_field(name).column)
              for name in ("id", "sha256", "image", "content_type", "size", "created_at")}
    table = connection.ops.quote_name(_TABLE)
    rows = json.dumps([{"sha": sha, "name": written[sha], "kind": image.content_type, "size": image.size}
                       for sha, image in images.items()])
    with connection.cursor() as cursor:
        cursor.execute(
            "WITH given AS (SELECT * FROM jsonb_to_recordset(%s::jsonb) AS given(sha text, name text, kind text, "
            "size integer)), "
            f"new AS (INSERT INTO {table} ({column['sha256']}, {column['image']}, {column['content_type']}, "
            f"{column['size']}, {column['created_at']}) "
            "SELECT sha, name, kind, size, now() FROM given "
            f"ON CONFLICT ({column['sha256']}) DO NOTHING "
            f"RETURNING {column['sha256']}, {column['id']}, {column['image']}) "
            f"SELECT * FROM new UNION ALL SELECT {column['sha256']}, {column['id']}, {column['image']} FROM {table} "
            f"WHERE {column['sha256']} = ANY(ARRAY(SELECT sha FROM given))",
            [rows],
        )
        return list(cursor.fetchall())


def discard_files(names) -> None:
    """Remove files that no row refers to. Best effort, file by file: a file that cannot be removed
    is an orphan on disk, never a reason to fail the import that no longer needs it."""
    for name in names:
        with contextlib.suppress(OSError):
            _FIELD.storage.delete(name)


def discard_written_ahead(records: list[Record]) -> None:
    """Remove the screenshot files written ahead for records that were not stored after all."""
    for record in records:
        discard_files(record.files.values())
