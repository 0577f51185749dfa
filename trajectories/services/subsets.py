"""Writes of task subsets: from a WebArena-Lite file (by `old_task_id`), from Online-Mind2Web's task
levels, or from an id list."""

from dataclasses import dataclass
from pathlib import Path

from django.db import transaction

from trajectories.formats import online_mind2web
from trajectories.formats.task_files import SubsetDefinition, parse_subset_ids, reported_lines
from trajectories.formats.webarena_tasks import TaskProblem
from trajectories.models import Task, TaskSubset


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


def save_level_subsets(benchmark: str, source: str) -> list[dict]:
    """Online-Mind2Web reports its results by task level: one subset per level, `<benchmark>-easy`,
    `-medium` and `-hard`, of every task of the benchmark's list with that `level`, whichever part of
    the list a file brings, and of the earlier id of an updated task (`<id>` of `<id>_110325`, the id
    the published human labels and runs name) unless the list gives that id a level of its own.
    Returns {name, tasks, outcome} of each, as a task file's report lists its subsets."""
    listed = Task.objects.filter(benchmark=benchmark, from_task_list=True, config__level__in=online_mind2web.LEVELS)
    levels = dict(listed.values_list("task_id", "config__level"))
    if not levels:
        return []
    ids = {level: set() for level in online_mind2web.LEVELS}
    for task_id, level in levels.items():
        ids[level].add(task_id)
        original = online_mind2web.original_task_id(task_id)
        if original not in levels:
            ids[level].add(original)
    longest = TaskSubset._meta.get_field("name").max_length
    saved = []
    for level, task_ids in ids.items():
        definition = SubsetDefinition(
            name=f"{benchmark[:longest - len(level) - 1]}-{level}", benchmark=benchmark,
            task_ids=tuple(sorted(task_ids)), source=source,
            description=f"Online-Mind2Web tasks of level {level} (the task list's `level`), with the earlier id of "
                        "each updated task.")
        saved.append({"name": definition.name, "tasks": len(task_ids), "outcome": save_subset(definition)})
    return saved


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
