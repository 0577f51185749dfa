"""Import of a gold file (xlsx, CSV or `gold/v1` JSON) as one unit of work.

Each block of the file becomes one gold trajectory whose identity (`source_key`) is the file
name, the annotator, the task and the block's ordinal for that task, so importing the same file
again updates in place and, when nothing changed, writes nothing at all.
"""

import hashlib
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db import transaction
from django.utils import timezone

from annotation.content import GoldContent, clean_content
from annotation.errors import GoldValidationError
from annotation.formats import GoldBlock, GoldFile, GoldFormatError, UnplacedRow, read_gold_file
from annotation.models import GoldStatus, GoldStep, GoldTrajectory
from annotation.roles import ANNOTATOR
from trajectories.models import Task
from trajectories.services.tasks import import_task_configs

STEP_FIELDS = ("text", "label", "action_type", "element_role", "element_name", "value")


@dataclass
class ImportedGold:
    task_id: str
    ordinal: int
    where: str
    steps: int
    outcome: str  # created | updated | unchanged
    gold_id: int


@dataclass
class GoldImportReport:
    file: str
    format: str
    annotator: str
    status: str
    benchmark: str
    gold: list[ImportedGold] = field(default_factory=list)
    missing_tasks: list[str] = field(default_factory=list)
    unplaced: list[UnplacedRow] = field(default_factory=list)
    defined_tasks: dict = field(default_factory=dict)  # the file's own tasks (Mind2Web): TaskImportReport

    @property
    def tasks(self) -> int:
        return len({item.task_id for item in self.gold})

    @property
    def steps(self) -> int:
        return sum(item.steps for item in self.gold)

    def count(self, outcome: str) -> int:
        return sum(item.outcome == outcome for item in self.gold)

    def to_dict(self) -> dict:
        return {
            **asdict(self),
            "tasks": self.tasks,
            "gold_trajectories": len(self.gold),
            "steps": self.steps,
            "created": self.count("created"),
            "updated": self.count("updated"),
            "unchanged": self.count("unchanged"),
        }

    def summary(self) -> str:
        lines = [
            f"{self.file} ({self.format}) as {self.annotator}, status {self.status}: {self.tasks} tasks, "
            f"{len(self.gold)} gold trajectories, {self.steps} steps "
            f"({self.count('created')} created, {self.count('updated')} updated, {self.count('unchanged')} unchanged)"
        ]
        if self.defined_tasks:
            counts = self.defined_tasks
            lines.append(f"{self.benchmark} tasks of the file: {counts['created']} created, {counts['updated']} "
                         f"updated, {counts['unchanged']} unchanged")
        if self.missing_tasks:
            lines.append(f"tasks not found in benchmark {self.benchmark!r}: {', '.join(self.missing_tasks)}")
        if self.unplaced:
            lines.append(f"{len(self.unplaced)} rows not placed:")
            lines.extend(f"  {row.where}: {row.reason}" for row in self.unplaced)
        return "\n".join(lines)

    __str__ = summary


def _annotator_user(username: str):
    username = username.strip()
    if not username:
        raise ValueError("an annotator name is required")
    user, created = get_user_model().objects.get_or_create(username=username)
    if created:
        user.set_unusable_password()
        user.save(update_fields=["password"])
    user.groups.add(Group.objects.get_or_create(name=ANNOTATOR)[0])
    return user


def _source_key(file_name: str, annotator: str, block: GoldBlock) -> str:
    identity = json.dumps([file_name, annotator, block.benchmark, block.task_id, block.ordinal])
    return hashlib.sha256(identity.encode("utf-8")).hexdigest()


def _stored_state(gold: GoldTrajectory) -> tuple:
    steps = [
        (step.text, step.source_label, step.action_type, step.element_role, step.element_name, step.value)
        for step in gold.steps.all()
    ]
    return steps, gold.cannot_complete, gold.cannot_complete_reason, gold.final_answer, gold.status


def _wanted_state(content: GoldContent, status: str) -> tuple:
    steps = [tuple(getattr(step, name) for name in STEP_FIELDS) for step in content.steps]
    return steps, content.cannot_complete, content.cannot_complete_reason, content.final_answer, status


def _block_content(block: GoldBlock, file_name: str) -> GoldContent:
    try:
        return clean_content(
            GoldContent(
                steps=block.steps,
                cannot_complete=block.cannot_complete,
                cannot_complete_reason=block.cannot_complete_reason,
                final_answer=block.final_answer,
            )
        )
    except GoldValidationError as exc:
        # Sheet rows were checked while reading; this only guards JSON written by other tools.
        raise GoldFormatError(str(exc), where=f"{file_name} {block.where}") from exc


def _apply(gold: GoldTrajectory, content: GoldContent, status: str, now) -> None:
    gold.cannot_complete = content.cannot_complete
    gold.cannot_complete_reason = content.cannot_complete_reason
    gold.final_answer = content.final_answer
    gold.status = status
    if status in (GoldStatus.SUBMITTED, GoldStatus.APPROVED) and gold.submitted_at is None:
        gold.submitted_at = now
    gold.updated_at = now


def _steps_of(gold: GoldTrajectory, content: GoldContent) -> list[GoldStep]:
    return [
        GoldStep(gold=gold, index=index, text=step.text, source_label=step.label, action_type=step.action_type,
                 element_role=step.element_role, element_name=step.element_name, value=step.value)
        for index, step in enumerate(content.steps, start=1)
    ]


def _in_chunks(values: list, size: int = 500):
    for start in range(0, len(values), size):
        yield values[start:start + size]


def import_gold(parsed: GoldFile, *, file_name: str, annotator: str, status: str = GoldStatus.APPROVED,
                benchmark: str = "webarena") -> GoldImportReport:
    """Store parsed gold under `annotator`; all of the file or nothing, in a few bulk statements."""
    if status not in GoldStatus.values:
        raise ValueError(f"unknown status {status!r}; expected one of {', '.join(GoldStatus.values)}")
    report = GoldImportReport(
        file=file_name, format=parsed.format, annotator=annotator, status=status, benchmark=benchmark,
        unplaced=list(parsed.unplaced),
    )
    with transaction.atomic():
        if parsed.tasks:
            report.benchmark = parsed.tasks[0].benchmark
            report.defined_tasks = import_task_configs(parsed.tasks, source=file_name).to_dict()
        user = _annotator_user(annotator)
        tasks = {}
        for bench in {block.benchmark for block in parsed.blocks}:
            ids = list({block.task_id for block in parsed.blocks if block.benchmark == bench})
            for chunk in _in_chunks(ids):
                for task in Task.objects.filter(benchmark=bench, task_id__in=chunk):
                    tasks[bench, task.task_id] = task
        placed = []
        for block in parsed.blocks:
            task = tasks.get((block.benchmark, block.task_id))
            if task is None:
                if block.task_id not in report.missing_tasks:
                    report.missing_tasks.append(block.task_id)
                reason = f"task {block.task_id} does not exist in benchmark {block.benchmark!r}"
                report.unplaced.extend(UnplacedRow(where, reason) for where in block.rows or [block.where])
                continue
            placed.append((block, task, _block_content(block, file_name), _source_key(file_name, user.username, block)))
        existing = {}
        for chunk in _in_chunks([key for _, _, _, key in placed]):
            for gold in GoldTrajectory.objects.filter(source_key__in=chunk).prefetch_related("steps"):
                existing[gold.source_key] = gold

        now = timezone.now()
        outcomes, created, updated = {}, [], []
        for block, task, content, key in placed:
            gold = existing.get(key)
            if gold is None:
                gold = GoldTrajectory(task=task, annotator=user, source=file_name, source_key=key)
                _apply(gold, content, status, now)
                created.append(gold)
                existing[key] = gold
                outcomes[key] = "created"
            elif _stored_state(gold) == _wanted_state(content, status):
                outcomes[key] = "unchanged"
            else:
                gold.version += 1
                _apply(gold, content, status, now)
                updated.append(gold)
                outcomes[key] = "updated"
        GoldTrajectory.objects.bulk_create(created, batch_size=500)
        GoldTrajectory.objects.bulk_update(
            updated, ["version", "status", "submitted_at", "cannot_complete", "cannot_complete_reason",
                      "final_answer", "updated_at"], batch_size=500)
        for chunk in _in_chunks(updated):
            GoldStep.objects.filter(gold__in=chunk).delete()
        written = {gold.source_key for gold in created + updated}
        GoldStep.objects.bulk_create(
            [step for block, task, content, key in placed if key in written
             for step in _steps_of(existing[key], content)],
            batch_size=1000,
        )
        for block, task, content, key in placed:
            report.gold.append(ImportedGold(block.task_id, block.ordinal, block.where, len(content.steps),
                                            outcomes[key], existing[key].pk))
    return report


def import_gold_file(path: Path, *, annotator: str, status: str = GoldStatus.APPROVED,
                     benchmark: str = "webarena") -> GoldImportReport:
    """Read and import one gold file; raises GoldFormatError (naming file and row) on unreadable input."""
    path = Path(path)
    return import_gold(read_gold_file(path, benchmark=benchmark), file_name=path.name, annotator=annotator,
                       status=status, benchmark=benchmark)
