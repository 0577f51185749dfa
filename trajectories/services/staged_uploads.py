"""Files uploaded on a page and kept between its steps (read and shown, then imported with the
choices made): in the media storage, shared by every web process, under a folder of their own; removed
once imported, when the same session uploads again, or a day later. The session keeps where they are,
so a request names them only by a token it cannot turn into a path."""

import secrets
import time

from django.core.files.base import ContentFile
from django.core.files.storage import default_storage

FOLDER = "uploads/staged"
KEPT_SECONDS = 24 * 3600


def stage(files: list[tuple[str, bytes]]) -> dict:
    """Keep (name, content) pairs; what is returned finds them again (JSON, for the session)."""
    discard_stale()
    token = f"{int(time.time())}-{secrets.token_hex(16)}"
    saved = []
    try:
        for index, (name, data) in enumerate(files):
            saved.append([default_storage.save(f"{FOLDER}/{token}/{index}", ContentFile(data)), name])
    except BaseException:
        discard({"token": token, "files": saved})
        raise
    return {"token": token, "files": saved}


def staged_files(staged: dict) -> list[tuple[str, bytes]] | None:
    """The (name, content) pairs kept; None when they are no longer kept."""
    found = []
    for path, name in staged["files"]:
        try:
            with default_storage.open(path, "rb") as kept:
                found.append((name, kept.read()))
        except FileNotFoundError:
            return None
    return found


def discard(staged: dict) -> None:
    for path, _ in staged["files"]:
        default_storage.delete(path)
    default_storage.delete(f"{FOLDER}/{staged['token']}")  # the emptied folder of a local storage


def discard_stale() -> None:
    """Remove what was kept longer than a day: pages left at their second step."""
    try:
        folders = default_storage.listdir(FOLDER)[0]
    except FileNotFoundError:
        return
    oldest = time.time() - KEPT_SECONDS
    for folder in folders:
        started = folder.partition("-")[0]
        if started.isdigit() and int(started) < oldest:
            names = default_storage.listdir(f"{FOLDER}/{folder}")[1]
            discard({"token": folder, "files": [[f"{FOLDER}/{folder}/{name}", name] for name in names]})
