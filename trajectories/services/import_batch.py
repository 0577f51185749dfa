"""The transaction of a batch of consecutive trajectory files of an import: a commit waits for the
database's disk, once per batch rather than once per file. The rows a batch writes are locked,
and the screenshot files its files wrote unseen, until it commits; rolled back, it takes those
files with it.
"""

import time
from collections.abc import Callable

from django.db import transaction

from trajectories.models import AgentRun, RunTally

from .screenshots import discard_files

# A batch is committed after this many files or seconds, whichever comes first.
BATCH_FILES = 50
BATCH_SECONDS = 0.5


class ImportBatch:
    """At most one open batch at a time; `flush` writes the rows still waiting (trajectories
    checked but not yet written), just before the batch commits."""

    def __init__(self, run: AgentRun, flush: Callable[[], None]):
        self.run, self.flush = run, flush
        self._atomic: transaction.Atomic | None = None
        self._files, self._started = 0, 0.0
        # The screenshot files the batch's files wrote: removed should it roll back.
        self.written: list[str] = []

    @property
    def open(self) -> bool:
        return self._atomic is not None

    def begin(self) -> None:
        """Open a batch, unless one is open."""
        if self._atomic is not None:
            return
        self._atomic = transaction.atomic()
        self._atomic.__enter__()
        self._files, self._started = 0, time.monotonic()

    def file_done(self) -> None:
        """Count a file of the open batch, and commit the batch once it is full or old enough."""
        if self._atomic is None:
            return
        self._files += 1
        if self._files >= BATCH_FILES or time.monotonic() - self._started >= BATCH_SECONDS:
            self.commit()

    def commit(self) -> None:
        """Write what waits and commit the open batch, if any."""
        if self._atomic is None:
            return
        self.flush()
        atomic, self._atomic = self._atomic, None
        try:
            atomic.__exit__(None, None, None)
        except BaseException:
            discard_files(self.written)
            raise
        finally:
            self.written = []
        # As a single write's signal does: readers recount the run until the import refreshes its tallies.
        # Dropped once the batch's rows are seen, not inside the batch, where the dropped row would stay
        # locked until the commit and a reader recounting the run, or another chunk's batch, would wait on it.
        RunTally.objects.filter(run=self.run).delete()

    def roll_back(self, error_type, error, traceback) -> None:
        """Undo the open batch, if any, with the screenshot files of its files."""
        if self._atomic is None:
            return
        atomic, self._atomic = self._atomic, None
        try:
            atomic.__exit__(error_type, error, traceback)
        finally:
            discard_files(self.written)
            self.written = []

    def close(self, error_type=None, error=None, traceback=None) -> None:
        """At the end of the import: commit the open batch, or roll it back when the import stops
        with an error (or the commit fails)."""
        if error_type is not None:
            self.roll_back(error_type, error, traceback)
            return
        try:
            self.commit()
        except BaseException as failure:
            self.roll_back(type(failure), failure, failure.__traceback__)
            raise
