"""What becomes of a trajectory read for a task of the run: stored new, unchanged, skipped, refused,
or replacing the run's trajectory of the task. A run holds one trajectory per task, identified by
the hash of its content. Pure, without Django: the import asks it once from what it knows of the
run, and again under the row's lock before writing.
"""

from dataclasses import dataclass
from enum import Enum


class Store(Enum):
    NEW = "new"  # the run holds no trajectory of the task: store it
    UNCHANGED = "unchanged"  # the run holds this very trajectory: nothing to write
    # Other results in the same upload already gave the run its trajectory of the task: these
    # results are another run's, and the file is skipped rather than refused.
    SKIP = "skip"
    REFUSE = "refuse"  # the run holds another trajectory of the task, and replacing was not asked
    REPLACE = "replace"  # the run holds another trajectory of the task, and replacing was asked


@dataclass(frozen=True)
class Given:
    """The file of this upload that gave the run its trajectory of the task, and the run that file names."""

    file: str
    run: str


def store_decision(held_hash: str | None, content_hash: str, *, replace: bool, given: Given | None = None,
                   run: str = "") -> Store:
    """The decision for a trajectory of content `content_hash` from a file naming the run `run`,
    where the run's trajectory of the task has `held_hash` (None: it holds none)."""
    if held_hash is None:
        return Store.NEW
    if held_hash == content_hash:
        return Store.UNCHANGED
    if given is not None and given.file and given.run != run:
        return Store.SKIP
    return Store.REPLACE if replace else Store.REFUSE
