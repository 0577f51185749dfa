"""What an import of trajectory files says it did, file by file and record by record."""

from collections import Counter
from dataclasses import asdict, dataclass, field

from trajectories.formats.canonical import TrajectoryFormatError

IMPORTED, UNCHANGED, REPLACED, FAILED, SKIPPED_STATUS = "imported", "unchanged", "replaced", "failed", "skipped"
STATUSES = (IMPORTED, UNCHANGED, REPLACED, FAILED, SKIPPED_STATUS)


@dataclass
class FileReport:
    """What became of one trajectory (or one results log, run description, other file) of the import."""

    file: str
    status: str
    kind: str = "trajectory"
    format: str = ""
    task_id: str = ""
    line: int | None = None
    where: str = ""
    reason: str = ""
    trajectory_id: int | None = None
    notes: list[str] = field(default_factory=list)

    def fail(self, error: TrajectoryFormatError) -> "FileReport":
        self.status, self.reason = FAILED, error.message
        # The record's place in its file (`[3]`), then the field, unless the error names both already.
        inner = "" if error.where == "(document)" else error.where
        self.where = (f"{self.where}.{inner}" if self.where and inner and not inner.startswith(self.where)
                      else inner or self.where)
        self.line = error.line or self.line
        return self

    @property
    def location(self) -> str:
        """File, line and field, as a person would look them up."""
        return ", ".join(part for part in (self.file, f"line {self.line}" if self.line else "", self.where) if part)


@dataclass
class ImportReport:
    run: str
    run_id: int | None = None
    files: list[FileReport] = field(default_factory=list)
    refused: str = ""

    def counts(self) -> dict[str, int]:
        found = Counter(entry.status for entry in self.files)
        return {status: found[status] for status in STATUSES}

    @property
    def failed(self) -> list[FileReport]:
        return [entry for entry in self.files if entry.status == FAILED]

    @property
    def ok(self) -> bool:
        return not self.refused and not self.failed

    def failures_said(self, most: int = 10) -> str:
        """The failed records named (file, line or record, field), the first `most` of them."""
        named = "; ".join(entry.location for entry in self.failed[:most])
        return named + (f" and {len(self.failed) - most} more" if len(self.failed) > most else "")

    def summary(self) -> str:
        if self.refused:
            return self.refused
        return ", ".join(f"{count} {status}" for status, count in self.counts().items())

    def to_dict(self) -> dict:
        return {
            "run": self.run,
            "run_id": self.run_id,
            "ok": self.ok,
            "refused": self.refused,
            "counts": self.counts(),
            "run_removed": False,
            "failures": [{"record": entry.location, "task_id": entry.task_id, "reason": entry.reason}
                         for entry in self.failed],
            "files": [asdict(entry) for entry in self.files],
        }
