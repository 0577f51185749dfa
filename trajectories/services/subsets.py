"""Writes of task subsets: from a WebArena-Lite file (by `old_task_id`) or from an id list."""

from dataclasses import dataclass
from pathlib import Path

from django.db import transaction

from trajectories.formats.task_files import SubsetDefinition, parse_subset_ids, reported_lines
from trajectories.formats.webarena_tasks import TaskProblem
from trajectories.models import TaskSubset


@dataclass
class SubsetImport:
    outcome: str  # created | updated | unchanged
    definition: SubsetDefinition
    skipped: tuple[TaskProblem, ...] = ()
    notes: tuple[TaskProblem, ...] = ()

    def to_dict(self) -> dict:
        return {"name": self.definition.name, "benchmark": self.definition.benchmark,
                "tasks": len(self.definition.task_ids), "outcome": self.outcome,
                "skipped": [problem.to_dict() for problem in self.skipped],
                "notes": [problem.to_dict() for problem in self.notes]}

    def __str__(self):
        head = (f"subset {self.definition.name} of {self.definition.benchmark}: {len(self.definition.task_ids)} "
                f"tasks ({self.outcome})")
        return "\n".join([head, *reported_lines(self.definition.source, self.skipped, self.notes)])


def save_subset(definition: SubsetDefinition) -> str:
    """Create or replace the subset of that name: "created", "updated" or "unchanged"."""
    subset = TaskSubset.objects.filter(name=definition.name).first()
    wanted = {"benchmark": definition.benchmark, "task_ids": list(definition.task_ids),
              "description": definition.description, "source": definition.source}
    if subset is None:
        TaskSubset.objects.create(name=definition.name, **wanted)
        return "created"
    if all(getattr(subset, name) == value for name, value in wanted.items()):
        return "unchanged"
    for name, value in wanted.items():
        setattr(subset, name, value)
    subset.save()
    return "updated"


@transaction.atomic
def import_subset_bytes(data: bytes, source: str, *, name: str, benchmark: str = "webarena",
                        description: str = "", strict: bool = False) -> SubsetImport:
    name = name.strip()
    if not name:
        raise ValueError("a subset needs a name")
    ids = parse_subset_ids(data, source, strict=strict)
    definition = SubsetDefinition(name=name, benchmark=benchmark, task_ids=ids.task_ids, source=source,
                                  description=description)
    return SubsetImport(save_subset(definition), definition, ids.skipped, ids.notes)


def import_subset_file(path: Path, *, name: str, benchmark: str = "webarena", description: str = "",
                       strict: bool = False) -> SubsetImport:
    path = Path(path)
    return import_subset_bytes(path.read_bytes(), path.name, name=name, benchmark=benchmark, description=description,
                               strict=strict)
