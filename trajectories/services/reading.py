"""Reading the files of an import, on every core: parsing (finding the steps of a render file,
decoding its screenshots, hashing its content) is CPU work that needs no database, so it runs in
a pool of worker processes while this process stores what they have read, file after file.

Workers are forked from this process (no re-import, a few milliseconds) and run only the
Django-free parsers: they never touch the database connection they inherit, and end without
running its finalizers (multiprocessing ends its children with `os._exit`). A few files are
read ahead of the one being stored (twice the number of workers), so memory stays bounded
however large the import.
JSONL files, which may be larger than anything a worker should send back at once, are read here
one line at a time.
"""

import multiprocessing
from collections import deque
from collections.abc import Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool

from django.conf import settings

from trajectories.formats.readers import Record, prepared_records, read_file
from trajectories.formats.sources import TRAJECTORIES, Source, forget_archives


_BROKEN = ("a parsing process ended abruptly (out of memory?) while this file was being read; "
           "the files after it were read in the importing process")


def ingest_workers() -> int:
    """INGEST_WORKERS, or 1 in a daemonic process (which may not have children of its own)."""
    if multiprocessing.current_process().daemon:
        return 1
    return max(1, settings.INGEST_WORKERS)


def _pooled(source: Source) -> bool:
    return source.kind == TRAJECTORIES and not source.problem and source.suffix != ".jsonl"


def _pool(workers: int) -> ProcessPoolExecutor:
    return ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("fork"),
                               initializer=forget_archives)


def read_sources(sources: list[Source], max_bytes: int) -> Iterator[tuple[Source, object]]:
    """Each source in order with what it holds: for a trajectory file, its records (a list, or an
    iterator read as it is consumed) or the exception that stopped reading it; else None."""
    workers = min(ingest_workers(), sum(_pooled(source) for source in sources))
    if workers < 2:
        for source in sources:
            yield source, _read_here(source, max_bytes)
        return
    upcoming = iter(sources)
    with _pool(workers) as pool:
        ahead: deque[tuple[Source, Future | None]] = deque()
        try:
            while True:
                while len(ahead) < 2 * workers:
                    source = next(upcoming, None)
                    if source is None:
                        break
                    ahead.append((source, pool.submit(read_file, source, max_bytes) if _pooled(source) else None))
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
                        yield item, BrokenProcessPool(_BROKEN) if pending is not None else _read_here(item, max_bytes)
                    break
                except Exception as error:  # noqa: BLE001 - reported for its file, as when read here
                    yield source, error
        finally:
            for _, future in ahead:
                if future is not None:
                    future.cancel()
    for source in upcoming:
        yield source, _read_here(source, max_bytes)


def _read_here(source: Source, max_bytes: int) -> Iterator[Record] | None:
    if source.kind != TRAJECTORIES or source.problem:
        return None
    return prepared_records(source, max_bytes)
