"""Writes of benchmark tasks: import of WebArena task configs, idempotent by (benchmark, task id)."""

from dataclasses import asdict, dataclass
from pathlib import Path

from django.db import transaction
from django.utils import timezone

from trajectories.formats.webarena_tasks import TaskConfig, load_task_file
from trajectories.models import RequirementsSource, Task

_CONFIG_FIELDS = (
    "number",
    "old_task_id",
    "intent",
    "intent_template",
    "intent_template_id",
    "instantiation",
    "sites",
    "start_url",
    "require_login",
    "require_reset",
    "eval_types",
    "eval_config",
    "config",
    "unachievable",
)
_REQUIREMENT_FIELDS = ("requirements", "requirements_source")


@dataclass
class TaskImportReport:
    source: str
    total: int = 0
    created: int = 0
    updated: int = 0
    unchanged: int = 0
    unachievable: int = 0

    def to_dict(self) -> dict:
        return asdict(self)

    def __str__(self):
        return (
            f"{self.source}: {self.total} tasks ({self.created} created, {self.updated} updated, "
            f"{self.unchanged} unchanged; {self.unachievable} unachievable by design)"
        )


def _apply(task: Task, config: TaskConfig) -> bool:
    """Copy the config onto the row; True when anything changed.

    Requirements an annotator edited are theirs: a re-import does not overwrite them.
    """
    fields = _CONFIG_FIELDS
    if task.requirements_source != RequirementsSource.ANNOTATOR:
        fields += _REQUIREMENT_FIELDS
    changed = False
    for name in fields:
        value = getattr(config, name)
        if getattr(task, name) != value:
            setattr(task, name, value)
            changed = True
    return changed


@transaction.atomic
def import_task_configs(configs: list[TaskConfig], source: str) -> TaskImportReport:
    report = TaskImportReport(source=source, total=len(configs))
    report.unachievable = sum(config.unachievable for config in configs)
    by_benchmark: dict[str, list[TaskConfig]] = {}
    for config in configs:
        by_benchmark.setdefault(config.benchmark, []).append(config)

    to_create, to_update = [], []
    for benchmark, group in by_benchmark.items():
        existing = {
            task.task_id: task
            for task in Task.objects.filter(benchmark=benchmark, task_id__in=[c.task_id for c in group])
        }
        for config in group:
            task = existing.get(config.task_id)
            if task is None:
                task = Task(benchmark=benchmark, task_id=config.task_id)
                _apply(task, config)
                to_create.append(task)
            elif _apply(task, config):
                to_update.append(task)
            else:
                report.unchanged += 1

    Task.objects.bulk_create(to_create, batch_size=500)
    if to_update:
        now = timezone.now()
        for task in to_update:
            task.updated_at = now
        Task.objects.bulk_update(to_update, _CONFIG_FIELDS + _REQUIREMENT_FIELDS + ("updated_at",), batch_size=200)
    report.created, report.updated = len(to_create), len(to_update)
    return report


def import_task_file(path: Path, *, benchmark: str | None = None) -> TaskImportReport:
    """Import one file as one unit: every entry is validated first, then all are stored or none."""
    path = Path(path)
    return import_task_configs(load_task_file(path, benchmark), source=path.name)
