"""Writes of benchmark tasks: import of task files, idempotent by (benchmark, task id).

A file is one unit: its tasks and the subsets it defines (WebArena-Lite, Online-Mind2Web's levels)
are stored together or not at all. Entries that cannot be read are left out and listed in the report with what was
read as meant; `strict` refuses such a file instead. A WebArena-Verified file also reports, per
task, what changed against the WebArena version of the same task id when that version is stored.
"""

from dataclasses import asdict, dataclass, field
from pathlib import Path

from django.db import transaction
from django.utils import timezone

from trajectories.formats import online_mind2web, webarena_verified
from trajectories.formats.canonical import TASK_ID_MAX_LENGTH
from trajectories.formats.task_files import TaskFile, read_task_bytes, read_task_file, reported_lines
from trajectories.formats.webarena_tasks import TaskConfig, TaskProblem
from trajectories.models import RequirementsSource, Task
from trajectories.services.subsets import save_level_subsets, save_subset

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
    "revision",
    "key_nodes",
    "reference_length",
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
    kind: str = "webarena"
    benchmark: str = ""
    subsets: list[dict] = field(default_factory=list)  # {name, tasks, outcome}
    changes: list[dict] = field(default_factory=list)  # Verified: {task_id, field, webarena, verified}
    compared: int = 0  # Verified tasks whose WebArena version is stored
    skipped: list[TaskProblem] = field(default_factory=list)  # entries left out: {entry, task_id, field, message}
    notes: list[TaskProblem] = field(default_factory=list)  # values read as meant rather than as written

    def to_dict(self) -> dict:
        return {**asdict(self), "skipped": [problem.to_dict() for problem in self.skipped],
                "notes": [problem.to_dict() for problem in self.notes]}

    def __str__(self):
        lines = [
            f"{self.source}: {self.total} {self.kind} tasks ({self.created} created, {self.updated} updated, "
            f"{self.unchanged} unchanged; {self.unachievable} unachievable by design)"
        ]
        lines += [f"subset {item['name']}: {item['tasks']} tasks ({item['outcome']})" for item in self.subsets]
        if self.kind == webarena_verified.BENCHMARK:
            changed = sorted({item["task_id"] for item in self.changes}, key=_id_order)
            lines.append(f"changed against WebArena: {len(changed)} of {self.compared} tasks with a stored "
                         f"WebArena version")
            lines += [f"  task {item['task_id']}: {item['field']}: {item['webarena']!r} -> {item['verified']!r}"
                      for item in self.changes]
        return "\n".join(lines + reported_lines(self.source, self.skipped, self.notes))


def unusable_task_id(task_id: str) -> str:
    """Why a task id can name no task; empty when it can."""
    if not task_id.strip():
        return "no task id"
    if len(task_id) > TASK_ID_MAX_LENGTH:
        return f"a task id of {len(task_id)} characters; the platform keeps task ids of up to {TASK_ID_MAX_LENGTH}"
    if not task_id.isprintable():
        return "the task id holds control characters"
    return ""


def task_from_file(benchmark: str, task_id: str, intent: str, reference_answer: str = "") -> tuple[Task, bool]:
    """A task of a benchmark whose task list the platform does not hold, made from what a run's or a
    verdict file says of it (`created` False when another file made it first); a reference answer
    the file gives is checked as an exact match, as the benchmark's own scorer does."""
    answer = {"eval_types": ["string_match"], "eval_config": {
        "eval_types": ["string_match"], "reference_answers": {"exact_match": reference_answer}}} if reference_answer else {}
    return Task.objects.get_or_create(benchmark=benchmark, task_id=task_id, defaults={
        "intent": intent, "from_task_list": False,
        "number": int(task_id) if task_id.isdigit() and len(task_id) < 10 else None, **answer})


def _id_order(task_id: str):
    return (0, int(task_id), "") if task_id.isdigit() else (1, 0, task_id)


def verified_changes(configs: list[TaskConfig]) -> tuple[int, list[dict]]:
    """(Verified tasks compared, their changes) against the stored WebArena tasks of the same ids."""
    stored = {
        task.task_id: {"intent": task.intent, "eval_types": task.eval_types, "eval_config": task.eval_config}
        for task in Task.objects.filter(benchmark=webarena_verified.BASE_BENCHMARK,
                                        task_id__in=[config.task_id for config in configs])
    }
    changes = []
    for config in configs:
        if config.task_id not in stored:
            continue
        verified = {"intent": config.intent, "eval_types": config.eval_types, "eval_config": config.eval_config}
        changes += [{"task_id": config.task_id, "field": change.field, "webarena": change.webarena,
                     "verified": change.verified}
                    for change in webarena_verified.changes_against_webarena(stored[config.task_id], verified)
                    if change.changed]
    return len(stored), changes


def _apply(task: Task, config: TaskConfig) -> bool:
    """Copy the config onto the row; True when anything changed.

    Requirements an annotator edited are theirs: a re-import does not overwrite them.
    """
    fields = _CONFIG_FIELDS
    if task.requirements_source != RequirementsSource.ANNOTATOR:
        fields += _REQUIREMENT_FIELDS
    changed = not task.from_task_list  # a task made from a run's files, now in its benchmark's list
    task.from_task_list = True
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
        Task.objects.bulk_update(to_update, _CONFIG_FIELDS + _REQUIREMENT_FIELDS + ("from_task_list", "updated_at"),
                                 batch_size=200)
    report.created, report.updated = len(to_create), len(to_update)
    return report


@transaction.atomic
def import_parsed_task_file(parsed: TaskFile, source: str) -> TaskImportReport:
    """Store a parsed task file: its tasks, then the subsets it defines."""
    report = import_task_configs(parsed.configs, source)
    report.kind, report.skipped, report.notes = parsed.kind, parsed.skipped, parsed.notes
    report.benchmark = ", ".join(sorted({config.benchmark for config in parsed.configs}))
    for definition in parsed.subsets:
        outcome = save_subset(definition)
        report.subsets.append({"name": definition.name, "tasks": len(definition.task_ids), "outcome": outcome})
    if parsed.kind == online_mind2web.BENCHMARK:
        for benchmark in sorted({config.benchmark for config in parsed.configs}):
            report.subsets += save_level_subsets(benchmark, source)
    if parsed.kind == webarena_verified.BENCHMARK:
        report.compared, report.changes = verified_changes(parsed.configs)
    return report


def import_task_file(path: Path, *, benchmark: str | None = None, strict: bool = False) -> TaskImportReport:
    """Import one file as one unit: every entry is checked first, then all readable ones are stored."""
    path = Path(path)
    return import_parsed_task_file(read_task_file(path, benchmark, strict=strict), source=path.name)


def import_task_bytes(data: bytes, name: str, *, benchmark: str | None = None,
                      strict: bool = False) -> TaskImportReport:
    """The same import for an uploaded file (web page, API)."""
    return import_parsed_task_file(read_task_bytes(data, name, benchmark, strict=strict), source=name)
