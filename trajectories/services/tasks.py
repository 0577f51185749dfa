"""Writes of benchmark tasks: import of task files, idempotent by (benchmark, task id), and the
tasks a run's files name, found or made.

A file is one unit: its tasks and the subsets it defines (WebArena-Lite, Online-Mind2Web's levels)
are stored together or not at all. Entries that cannot be read are left out and listed in the report with what was
read as meant; `strict` refuses such a file instead. A WebArena-Verified file also reports, per
task, what changed against the WebArena version of the same task id when that version is stored.

Where a benchmark's tasks come from (its task list only, or also the trajectories that name them)
is what the reader of its task file declares (`task_files.benchmark_tasks`).
"""

from dataclasses import asdict, dataclass, field
from pathlib import Path

from django.db import transaction
from django.utils import timezone

from trajectories.formats import online_mind2web, webarena_verified
from trajectories.formats.canonical import TASK_ID_MAX_LENGTH, TaskRef
from trajectories.formats.task_files import TaskFile, benchmark_tasks, read_task_bytes, read_task_file, reported_lines
from trajectories.formats.webarena_tasks import TaskConfig, TaskProblem
from trajectories.models import RequirementsSource, Task
from trajectories.services.storable import storable_text
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


def has_task_list(benchmark: str) -> bool:
    """Whether the benchmark's tasks come from its task list, so that files naming others cannot create them."""
    return (benchmark_tasks(benchmark).from_task_list
            or Task.objects.filter(benchmark=benchmark, from_task_list=True).exists())


def only_listed_tasks(benchmark: str) -> bool:
    """Whether a result naming a task the platform does not hold is refused rather than make it: the
    benchmark has a task list, and its results do not name the version of the task they ran."""
    return not benchmark_tasks(benchmark).named_by_results and has_task_list(benchmark)


def _same_text(one: str, other: str) -> bool:
    return " ".join(one.split()) == " ".join(other.split())


class RunTasks:
    """The tasks that the files of one import name: each benchmark's read in one query the first
    time it is named, made from a file where the benchmark allows it. What a rolled-back file made
    is never kept: a task made is cached once its transaction commits, and `forget` drops what
    was read of a benchmark whose rows may have been undone."""

    def __init__(self):
        self._tasks: dict[str, dict[str, Task]] = {}
        self._listed: dict[str, bool] = {}

    def _of(self, benchmark: str) -> dict[str, Task]:
        if benchmark not in self._tasks:
            self._tasks[benchmark] = {
                task.task_id: task for task in
                Task.objects.filter(benchmark=benchmark).only("id", "benchmark", "task_id", "intent")
            }
        return self._tasks[benchmark]

    def get(self, ref: TaskRef) -> Task | None:
        """The task, if the platform holds it."""
        return self._of(ref.benchmark).get(ref.task_id)

    def forget(self, benchmark: str | None = None) -> None:
        """Read the benchmark's tasks (every benchmark's, by default) again when next named."""
        if benchmark is None:
            self._tasks.clear()
        else:
            self._tasks.pop(benchmark, None)

    def version_with_text(self, ref: TaskRef) -> Task | None:
        """Where a benchmark keeps updated tasks under suffixed ids (Online-Mind2Web), another
        version of the file's task whose text is the file's."""
        original_task_id = benchmark_tasks(ref.benchmark).original_task_id
        if original_task_id is None or not ref.intent.strip():
            return None
        original = original_task_id(ref.task_id)
        return next((task for task in self._of(ref.benchmark).values()
                     if task.task_id != ref.task_id and original_task_id(task.task_id) == original
                     and _same_text(task.intent, ref.intent)), None)

    def of_file(self, ref: TaskRef, notes: list[str]) -> Task | None:
        """The task a trajectory file names: held, another version of it with the file's text, or
        made from the file; None where the benchmark's tasks come from its task list alone. What
        differs between the file's text and the task's is said in `notes`."""
        task = self.get(ref)
        if task is None:
            task = self.version_with_text(ref)
            if task is not None:
                notes.append(f"task {ref.benchmark}/{ref.task_id} is not imported: "
                             f"stored as a trajectory of its version {task}, whose text the file has")
            else:
                task = self.from_file(ref, notes)
        if task is None:
            return None
        if not task.intent and ref.intent.strip():
            # A verdict without its episode (a study's results) named the task without its intent.
            task.intent = storable_text(ref.intent).strip()
            task.save(update_fields=["intent", "updated_at"])
        if ref.intent and not _same_text(ref.intent, task.intent):
            notes.append(f"the file's intent differs from task {task}'s: {ref.intent!r}")
            version = self.version_with_text(ref)
            if version is not None:
                notes.append(f"task {version}, another version of this task, has the file's text: "
                             "the result may belong to that version")
        return task

    def from_file(self, ref: TaskRef, notes: list[str] | None = None) -> Task | None:
        """A task of a benchmark whose task list the platform does not hold (WorkArena, MiniWoB, a
        live-web benchmark), made from what the file says of it (said in `notes`); None for a
        listed benchmark, except where the benchmark's list changes under its results
        (Online-Mind2Web's results name the version of the task they ran, with its text)."""
        if ref.benchmark not in self._listed:
            self._listed[ref.benchmark] = has_task_list(ref.benchmark)
        listed = self._listed[ref.benchmark]
        named = benchmark_tasks(ref.benchmark).named_by_results and bool(ref.intent.strip())
        if (listed and not named) or not (ref.task_id.isprintable() and ref.benchmark.isprintable()):
            return None
        task, created = task_from_file(ref.benchmark, ref.task_id, storable_text(ref.intent).strip(),
                                       storable_text(ref.reference_answer).strip())
        if created and notes is not None:
            held = "no task of this id" if listed else f"no task list of {ref.benchmark}"
            notes.append(f"task {task} created from this file: the platform holds {held}")
        # Cached once the file's transaction commits: a rolled-back file leaves no task behind.
        transaction.on_commit(lambda: self._tasks.get(ref.benchmark, {}).setdefault(task.task_id, task))
        return task


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
