"""The files of one import: paths, folders and zip archives, listed and checked before anything is read.

Uploads are untrusted, so the limits are applied to what the archives declare, before a byte is
decompressed: number of files, total size, size of one file, compression ratio, and entry
names (absolute or with `..`). Archives are read in place, never extracted to disk. Python's
`zipfile` stops every entry at its declared size and checks its CRC, so a lying header cannot
make an entry larger than the check saw.
"""

import io
import posixpath
import re
import threading
import zipfile
from collections.abc import Iterable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from .browsergym_agentlab import companion_reason, is_study_results

RUN_DESCRIPTION = "run"
HARNESS_CONFIG = "harness_config"
TRAJECTORIES = "trajectories"
RESULTS = "results"
LOG_LIST = "log_list"
SKIPPED = "skipped"
# Run-level files first, so that trajectories land in a described run; result logs last, so
# that their verdicts reach the trajectories imported with them.
_ORDER = {RUN_DESCRIPTION: 0, HARNESS_CONFIG: 1, TRAJECTORIES: 2, RESULTS: 3, LOG_LIST: 3, SKIPPED: 4}
# The harness's index of its log files (`log_files/log_<time>_<pid>.log`, one per line).
LOG_LIST_NAME = "log_files.txt"
TRAJECTORY_SUFFIXES = (".html", ".htm", ".json", ".jsonl")
RESULT_SUFFIXES = (".log", ".txt")
# browser-use's log of one step's prompt and reply (`conversations/conversation_<id>_<step>.txt`): the
# history holds the reply; not a result log.
_BROWSER_USE_CONVERSATION = re.compile(r"conversation_.+_\d+\.txt")
# Screenshots referenced from trajectory JSON travel beside it; they are not files of their own.
COMPANION_SUFFIXES = (".png", ".jpg", ".jpeg", ".gif", ".webp")


@dataclass(frozen=True)
class Limits:
    max_files: int
    max_total_bytes: int
    max_file_bytes: int
    max_compression_ratio: float


class ImportRefused(ValueError):
    """The import as a whole is over a limit: nothing of it is read."""


_open_archives: dict[Path, zipfile.ZipFile] = {}
_opening = threading.Lock()


def _archive(path: Path) -> zipfile.ZipFile:
    """The open archive at `path`: one handle per process, so that a worker of a parsing pool
    reads the central directory of an archive once rather than once per entry (the reading
    threads of one process share it: a ZipFile reads its entries under a lock of its own)."""
    with _opening:
        if path not in _open_archives:
            _open_archives[path] = zipfile.ZipFile(path)
        return _open_archives[path]


def forget_archives() -> None:
    """In a forked worker: drop the handles inherited from the parent, whose file offsets the two
    processes would share, so that the worker opens its own (and a lock of its own: another
    thread of the parent may have held it when the worker was forked)."""
    global _opening
    _open_archives.clear()
    _opening = threading.Lock()


def _close_archive(path: Path) -> None:
    archive = _open_archives.pop(path, None)
    if archive is not None:
        archive.close()


@dataclass
class Source:
    """One file of the import: a file in a folder (`path`, under `root`) or an archive entry
    (`entry` of the zip at `path`). Plain data, so that a worker process can read it too."""

    name: str
    kind: str
    size: int = 0
    problem: str = ""
    path: Path | None = None
    root: Path | None = None
    entry: str | None = None
    limits: Limits | None = field(default=None, repr=False)

    @property
    def suffix(self) -> str:
        return posixpath.splitext(self.name)[1].lower()

    def open(self) -> BinaryIO:
        if self.entry is not None:
            return _archive(self.path).open(self.entry)
        return self.path.open("rb")

    def read(self) -> bytes:
        with self.open() as stream:
            return stream.read()

    def read_sibling(self, relative: str) -> bytes:
        """A file named relative to this one (a screenshot), never outside the upload."""
        if self.entry is not None:
            return self._archive_sibling(relative)
        target = (self.path.parent / relative).resolve()
        if not target.is_relative_to(self.root):
            raise ValueError(f"{relative!r} points outside the uploaded folder")
        if target.stat().st_size > self.limits.max_file_bytes:
            raise ValueError(f"{relative!r} is larger than the limit for one file")
        return target.read_bytes()

    def _archive_sibling(self, relative: str) -> bytes:
        target = posixpath.normpath(posixpath.join(posixpath.dirname(self.entry), relative))
        if _unsafe_entry(target):
            raise ValueError(f"{relative!r} points outside the archive")
        archive = _archive(self.path)
        info = archive.NameToInfo.get(target)
        if info is None or info.is_dir():
            raise FileNotFoundError(relative)
        problem = entry_problem(info, TRAJECTORIES, self.limits)
        if problem:
            raise ValueError(f"{relative!r}: {problem}")
        return archive.read(info)


def _classify(name: str) -> str:
    base = posixpath.basename(name).lower()
    if base == "run.json":
        return RUN_DESCRIPTION
    if base == "config.json":
        return HARNESS_CONFIG
    if base == LOG_LIST_NAME:
        return LOG_LIST
    if is_study_results(base):
        return RESULTS
    if companion_reason(base) or _BROWSER_USE_CONVERSATION.fullmatch(base):
        return SKIPPED
    if base.endswith(TRAJECTORY_SUFFIXES):
        return TRAJECTORIES
    if base.endswith(RESULT_SUFFIXES):
        return RESULTS
    return SKIPPED


def _ignored(parts: Iterable[str]) -> bool:
    parts = list(parts)
    return any(part.startswith(".") or part == "__MACOSX" for part in parts) or (
        parts[-1].lower().endswith(COMPANION_SUFFIXES)
    )


def _natural_key(source: Source) -> tuple:
    return _ORDER[source.kind], [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", source.name)]


def _unsafe_entry(name: str) -> bool:
    normalized = name.replace("\\", "/")
    return normalized.startswith("/") or re.match(r"[A-Za-z]:", normalized) is not None or ".." in normalized.split("/")


def size_problem(name: str, kind: str, size: int, limits: Limits) -> str:
    # JSONL is read a line at a time; the reader applies the limit to each line instead.
    if kind == SKIPPED or name.lower().endswith(".jsonl") or size <= limits.max_file_bytes:
        return ""
    return f"{size:,} bytes is over the limit of {limits.max_file_bytes:,} bytes for one file"


def entry_problem(info: zipfile.ZipInfo, kind: str, limits: Limits) -> str:
    if _unsafe_entry(info.filename):
        return "refused: an archive entry with an absolute path or '..'"
    if info.flag_bits & 0x1:
        return "refused: encrypted archive entry"
    if info.compress_size:
        ratio = info.file_size / info.compress_size
    else:
        ratio = float("inf") if info.file_size else 0.0
    if ratio > limits.max_compression_ratio:
        return (
            f"refused: compression ratio {ratio:.0f}:1 is over the limit of "
            f"{limits.max_compression_ratio:.0f}:1"
        )
    return size_problem(info.filename, kind, info.file_size, limits)


class Catalogue:
    """The sources of one import, in processing order; keeps the archives open while in use."""

    def __init__(self, paths: list[Path], limits: Limits):
        self.limits = limits
        self.sources: list[Source] = []
        self._stack = ExitStack()
        self._files = 0
        self._bytes = 0
        try:
            for path in paths:
                self._add_path(Path(path))
        except BaseException:
            self._stack.close()
            raise
        self.sources.sort(key=_natural_key)

    def __enter__(self) -> "Catalogue":
        return self

    def __exit__(self, *exc) -> None:
        self._stack.close()

    def __iter__(self) -> Iterator[Source]:
        return iter(self.sources)

    def __len__(self) -> int:
        return len(self.sources)

    def holds(self, listed: str) -> bool:
        """Whether the file a harness listed (`log_files/log_1.log`) is part of the import, by its
        name alone: files uploaded one by one through a browser arrive without their folders."""
        name = posixpath.basename(listed.strip().replace("\\", "/"))
        return bool(name) and any(posixpath.basename(source.name) == name for source in self.sources)

    def _count(self, size: int) -> None:
        self._files += 1
        self._bytes += size
        if self._files > self.limits.max_files:
            raise ImportRefused(f"more than {self.limits.max_files} files (counting the files inside archives)")
        if self._bytes > self.limits.max_total_bytes:
            raise ImportRefused(
                f"more than {self.limits.max_total_bytes:,} bytes in total once uncompressed"
            )

    def _add_path(self, path: Path) -> None:
        if path.is_dir():
            root = path.resolve()
            for child in sorted(path.rglob("*")):
                if child.is_file():
                    self._add_file(child, f"{path.name}/{child.relative_to(path).as_posix()}", root)
        elif path.is_file():
            self._add_file(path, path.name, path.parent.resolve())
        else:
            self.sources.append(Source(name=str(path), kind=TRAJECTORIES, problem="no such file or folder"))

    def _add_file(self, path: Path, name: str, root: Path) -> None:
        ignored = _ignored(name.split("/")[1:] or [name])
        if path.suffix.lower() == ".zip" and not ignored:
            self._add_archive(path, name)
            return
        size = path.stat().st_size
        self._count(size)
        if ignored:
            return
        kind = _classify(name)
        self.sources.append(
            Source(
                name=name,
                kind=kind,
                size=size,
                problem=size_problem(name, kind, size, self.limits),
                path=path.resolve(),
                root=root,
                limits=self.limits,
            )
        )

    def _add_archive(self, path: Path, name: str) -> None:
        path = path.resolve()
        try:
            archive = _archive(path)
        except (zipfile.BadZipFile, OSError) as error:
            self._count(path.stat().st_size)
            self.sources.append(Source(name=name, kind=TRAJECTORIES, problem=f"not a readable zip archive: {error}"))
            return
        self._stack.callback(_close_archive, path)
        entries = {info.filename: info for info in archive.infolist() if not info.is_dir()}
        for info in entries.values():
            self._count(info.file_size)
            if _ignored(info.filename.replace("\\", "/").split("/")) and not _unsafe_entry(info.filename):
                continue
            kind = _classify(info.filename)
            self.sources.append(
                Source(
                    name=f"{name}/{info.filename}",
                    kind=kind,
                    size=info.file_size,
                    problem=entry_problem(info, kind, self.limits),
                    path=path,
                    entry=info.filename,
                    limits=self.limits,
                )
            )


def is_archive(data: bytes) -> bool:
    return data[:4] == b"PK\x03\x04"


def archive_members(data: bytes, limits: Limits) -> list[tuple[str, bytes]]:
    """The files (name, bytes) of a zip archive held in memory, checked as an upload's archives are (files, total
    size, one file's size, compression ratio, entry names) before a byte is decompressed; ImportRefused, naming
    the entry, when one is over a limit. Hidden files, `__MACOSX` and images are left out."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except zipfile.BadZipFile as error:
        raise ImportRefused(f"not a readable zip archive: {error}") from None
    with archive:
        entries = [info for info in archive.infolist() if not info.is_dir()]
        if len(entries) > limits.max_files:
            raise ImportRefused(f"more than {limits.max_files} files")
        if sum(info.file_size for info in entries) > limits.max_total_bytes:
            raise ImportRefused(f"more than {limits.max_total_bytes:,} bytes in total once uncompressed")
        members = []
        for info in entries:
            if problem := entry_problem(info, TRAJECTORIES, limits):
                raise ImportRefused(f"{info.filename}: {problem}")
            if not _ignored(info.filename.replace("\\", "/").split("/")):
                members.append((info.filename, archive.read(info)))
        return members
