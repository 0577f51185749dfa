"""Reading the files of an import beside the storing of them: parsing (finding the steps of a
render file, decoding its screenshots, hashing its content) and writing the screenshot files need
no database, so they run in a pool of worker processes while this process stores rows, file
after file. With one worker (`INGEST_WORKERS=1`, or in a daemonic process, which may not have
children) they run on two threads of this process instead: while one parses, the other's file
writes and hashing, which let go of the interpreter lock, use the second core.

Workers are forked from this process (no re-import, a few milliseconds) and never touch the
database connection they inherit; they end without running its finalizers (multiprocessing ends
its children with `os._exit`). A few files are read ahead of the one being stored, so that
the readers do not wait while this process commits: up to eight per worker or thread while they
are under 64 MB together, and at least two per worker or thread, so memory stays bounded however
large the import. Screenshot files are
written ahead only for trajectories that `keep` says will be stored; a file read ahead and
never stored has its screenshot files removed. A worker sends back no screenshot bytes of the
others: one that is stored after all has its file read again.
JSONL files, which may be larger than anything a worker should send back at once, are read here
one line at a time.
"""

import multiprocessing
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Executor, Future, ProcessPoolExecutor, ThreadPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from functools import partial

from django.conf import settings

from trajectories.formats.readers import Record, prepared_records, read_file
from trajectories.formats.sources import TRAJECTORIES, Source, forget_archives

from .screenshots import discard_written_ahead, forget_storage, leave_behind, write_ahead

_BROKEN = ("a parsing process ended abruptly (out of memory?) while this file was being read; "
           "the files after it were read in the importing process")

Keep = Callable[[Record], bool]
_READING_THREADS = 2
_AHEAD_MIN_PER_READER, _AHEAD_PER_READER = 2, 8
_AHEAD_BYTES = 64 * 1024**2
_keep_in_worker: Keep | None = None


def ingest_workers() -> int:
    """INGEST_WORKERS, or 1 in a daemonic process (which may not have children of its own)."""
    if multiprocessing.current_process().daemon:
        return 1
    return max(1, settings.INGEST_WORKERS)


def _pooled(source: Source) -> bool:
    return source.kind == TRAJECTORIES and not source.problem and source.suffix != ".jsonl"


def read_ahead(source: Source, max_bytes: int, keep: Keep) -> list[Record]:
    """The file's records, prepared, with the screenshot files written of those that will be kept."""
    records = read_file(source, max_bytes)
    for record in records:
        if record.trajectory is not None and record.images and keep(record):
            write_ahead(record)
    return records


def _start_worker(keep: Keep) -> None:
    """A forked worker drops the parent's archive handles and storage clients, and keeps `keep`
    (inherited with the fork, never pickled)."""
    global _keep_in_worker
    forget_archives()
    forget_storage()
    _keep_in_worker = keep


def _read_in_worker(source: Source, max_bytes: int) -> list[Record]:
    records = read_ahead(source, max_bytes, _keep_in_worker)
    for record in records:
        leave_behind(record)
    return records


def read_images_again(source: Source, record: Record, max_bytes: int) -> None:
    """The screenshots a parsing worker left behind, read again from the file, for a trajectory that
    is stored after all (what the run holds changed while the file was being read)."""
    if not record.images_left_behind:
        return
    for again in read_file(source, max_bytes):
        if again.key == record.key and again.content_hash == record.content_hash:
            record.images, record.images_left_behind = again.images, False
            return
    raise OSError("the file changed while it was being imported")


def _pool(workers: int, keep: Keep) -> tuple[Executor, Callable[[Source, int], list[Record]], int]:
    """The pool, what it runs per file, and how many files it reads at once."""
    if workers < 2:
        return (ThreadPoolExecutor(max_workers=_READING_THREADS, thread_name_prefix="ingest-reading"),
                partial(read_ahead, keep=keep), _READING_THREADS)
    pool = ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("fork"),
                               initializer=_start_worker, initargs=(keep,))
    return pool, _read_in_worker, workers


def read_sources(sources: list[Source], max_bytes: int, keep: Keep) -> Iterator[tuple[Source, object]]:
    """Each source in order with what it holds: for a trajectory file, its records (a list, or an
    iterator read as it is consumed) or the exception that stopped reading it; else None."""
    pooled = sum(_pooled(source) for source in sources)
    if not pooled:
        for source in sources:
            yield source, _read_here(source, max_bytes)
        return
    workers = min(ingest_workers(), pooled)
    upcoming = iter(sources)
    pool, read, readers = _pool(workers, keep)
    with pool:
        ahead: deque[tuple[Source, Future | None]] = deque()
        try:
            while True:
                while _room_ahead(ahead, readers):
                    source = next(upcoming, None)
                    if source is None:
                        break
                    ahead.append((source, pool.submit(read, source, max_bytes) if _pooled(source) else None))
                if not ahead:
                    return
                source, future = ahead.popleft()
                if future is None:
                    yield source, _read_here(source, max_bytes)
                    continue
                try:
                    yield source, future.result()
                except BrokenProcessPool:
                    # A worker was killed (out of memory, a signal): the files being read with it are
                    # reported, and the rest are read in this process.
                    yield source, BrokenProcessPool(_BROKEN)
                    while ahead:
                        item, pending = ahead.popleft()
                        if pending is not None:
                            _abandon(pending)
                        yield item, BrokenProcessPool(_BROKEN) if pending is not None else _read_here(item, max_bytes)
                    break
                except Exception as error:  # noqa: BLE001 - reported for its file, as when read here
                    yield source, error
        finally:
            for _, future in ahead:
                if future is not None:
                    _abandon(future)
    for source in upcoming:
        yield source, _read_here(source, max_bytes)


def _room_ahead(ahead: deque[tuple[Source, Future | None]], readers: int) -> bool:
    if len(ahead) < _AHEAD_MIN_PER_READER * readers:
        return True
    return len(ahead) < _AHEAD_PER_READER * readers and sum(source.size for source, _ in ahead) < _AHEAD_BYTES


def _abandon(future: Future) -> None:
    """A file read ahead that will not be stored: its screenshot files go too."""
    if future.cancel():
        return
    try:
        records = future.result()
    except Exception:  # noqa: BLE001 - nothing was sent back, so nothing to remove
        return
    discard_written_ahead(records)


def _read_here(source: Source, max_bytes: int) -> Iterator[Record] | None:
    if source.kind != TRAJECTORIES or source.problem:
        return None
    return prepared_records(source, max_bytes)
