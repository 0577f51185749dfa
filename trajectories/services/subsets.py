"""Writes of task subsets: from a WebArena-Lite file (by `old_task_id`) or from an id list."""

from pathlib import Path

from django.db import transaction

from trajectories.formats.task_files import SubsetDefinition, parse_subset_ids
from trajectories.models import TaskSubset


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
                        description: str = "") -> tuple[str, SubsetDefinition]:
    name = name.strip()
    if not name:
        raise ValueError("a subset needs a name")
    definition = SubsetDefinition(name=name, benchmark=benchmark, task_ids=parse_subset_ids(data, source),
                                  source=source, description=description)
    return save_subset(definition), definition


def import_subset_file(path: Path, *, name: str, benchmark: str = "webarena", description: str = ""):
    path = Path(path)
    return import_subset_bytes(path.read_bytes(), path.name, name=name, benchmark=benchmark, description=description)
