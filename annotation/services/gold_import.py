"""Import of a gold file (xlsx, CSV or `gold/v1` JSON) as one unit of work.

Each block of the file becomes one gold trajectory whose identity (`source_key`) is the file
name, the annotator, the task and the block's ordinal for that task, so importing the same file
again updates in place and, when nothing changed, writes nothing at all.

Gold is recorded under an existing annotator's account. A reviewer imports it under their own
name or on behalf of another annotator, and each gold written keeps who imported it and when
(the file is its `source`). Imported gold starts at most submitted, for a reviewer other than the
importer to approve: a reviewer could otherwise approve their own gold by importing it under
another annotator's name. Only an admin approves on import, which is recorded as their review.
Accounts and roles are the admin's: only the operator's command may create a missing annotator,
and only when asked to (`create_annotator`).
The numbering anomalies the reader resolved are listed in the report and kept as flags on the
gold they concern (for the gold quality page); `strict` refuses a file that has any. The first
approved gold of a task becomes its reference; `reference` makes this file's gold the reference.
"""

import hashlib
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from accounts.roles import ADMIN, ANNOTATOR, REVIEWER, has_role
from annotation.content import GoldContent, clean_content
from annotation.errors import GoldPermissionDenied, GoldValidationError
from annotation.formats import GoldAnomaly, read_gold_file, unplaced_reason
from annotation.gold_records import GoldBlock, GoldFile, GoldFormatError, UnplacedRow
from annotation.models import GoldFlag, GoldReview, GoldStatus, GoldStep, GoldTrajectory
from annotation.services.gold_checks import start_quality_checks_after_import
from annotation.services.reference import assign_missing_references, make_reference
from trajectories.formats.wording import count_of
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
    imported_by: str = ""  # empty: the operator's command
    gold: list[ImportedGold] = field(default_factory=list)
    missing_tasks: list[str] = field(default_factory=list)
    unplaced: list[UnplacedRow] = field(default_factory=list)
    anomalies: list[GoldAnomaly] = field(default_factory=list)
    reference: bool = False
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
            "anomalies": [{**asdict(anomaly), "where": anomaly.where} for anomaly in self.anomalies],
        }

    def summary(self) -> str:
        by = f", imported by {self.imported_by}" if self.imported_by and self.imported_by != self.annotator else ""
        lines = [
            f"{self.file} ({self.format}) as {self.annotator}{by}, status {self.status}: "
            f"{count_of(self.tasks, 'task')}, {count_of(len(self.gold), 'gold trajectory', 'gold trajectories')}, "
            f"{count_of(self.steps, 'step')} "
            f"({self.count('created')} created, {self.count('updated')} updated, {self.count('unchanged')} unchanged)"
        ]
        if self.defined_tasks:
            counts = self.defined_tasks
            lines.append(f"{self.benchmark} tasks of the file: {counts['created']} created, {counts['updated']} "
                         f"updated, {counts['unchanged']} unchanged")
        if self.missing_tasks:
            lines.append(f"tasks not found in benchmark {self.benchmark!r}: {', '.join(self.missing_tasks)}")
        if self.anomalies:
            lines.append(f"{_anomalies(len(self.anomalies))} resolved:")
            lines.extend(f"  {anomaly}" for anomaly in self.anomalies)
        if self.unplaced:
            lines.append(f"{count_of(len(self.unplaced), 'row')} not placed:")
            lines.extend(f"  {row.where}: {row.reason}" for row in self.unplaced)
        return "\n".join(lines)

    __str__ = summary


def _anomalies(count: int) -> str:
    return count_of(count, "numbering anomaly", "numbering anomalies")


def _annotator_user(username: str, *, create: bool):
    """The existing annotator account; with `create`, a missing one is made (no password, annotator role)."""
    username = username.strip()
    if not username:
        raise ValueError("an annotator name is required")
    model = get_user_model()
    user = model.objects.filter(username=username).first()
    if user is None and not create:
        raise ValueError(f"no account named {username!r}: gold is imported under an existing annotator's "
                         "account (accounts and roles are the admin's)")
    if user is None:
        user = model(username=username)
        try:
            user.full_clean(exclude=["password"])
        except ValidationError as exc:
            messages = exc.message_dict.get("username", exc.messages)
            raise ValueError(f"annotator {username!r}: {' '.join(messages)}") from None
        user.set_unusable_password()
        user.save()
        user.groups.add(Group.objects.get_or_create(name=ANNOTATOR)[0])
    elif not has_role(user, ANNOTATOR):
        raise ValueError(f"{username!r} does not hold the annotator role (roles are granted by an admin)")
    return user


def _check_importer(importer, annotator, status: str) -> None:
    if importer is None:
        return
    if not has_role(importer, REVIEWER):
        raise GoldPermissionDenied("importing gold needs the reviewer role")
    if status == GoldStatus.APPROVED and not has_role(importer, ADMIN):
        raise GoldPermissionDenied("only an admin approves gold on import: import it as submitted, for a "
                                   "reviewer other than you to review")


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


def _apply(gold: GoldTrajectory, content: GoldContent, status: str, now, importer) -> None:
    gold.imported_by = importer
    gold.imported_at = now
    if status != GoldStatus.APPROVED:
        gold.is_reference = False
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


def refuse_anomalies(parsed: GoldFile, file_name: str) -> None:
    """`--strict`: a file whose numbering needed resolving is refused, naming every anomaly."""
    if parsed.anomalies:
        listed = "; ".join(str(anomaly) for anomaly in parsed.anomalies)
        raise GoldFormatError(f"{_anomalies(len(parsed.anomalies))} (refused by --strict): {listed}", where=file_name)


def _anomaly_flags(placed, gold_of: dict, anomalies: list[GoldAnomaly]) -> list[GoldFlag]:
    """One flag per anomaly, on the gold that holds its rows."""
    holder = {}
    for block, _, _, key in placed:
        for where in block.rows:
            holder[where.rsplit(" ", 1)[-1]] = gold_of[key]
    flags = []
    for anomaly in anomalies:
        gold = next((holder[str(row)] for row in anomaly.rows if str(row) in holder), None)
        if gold is not None:
            flags.append(GoldFlag(gold=gold, kind=GoldFlag.Kind.IMPORT_ANOMALY, rows=anomaly.rows,
                                  key=f"{anomaly.kind}:{','.join(map(str, anomaly.rows))}",
                                  message=f"{anomaly.where}: {anomaly.action}"))
    return flags


def _store_anomaly_flags(golds: list[GoldTrajectory], flags: list[GoldFlag]) -> None:
    """The import's anomalies replace those of the previous import of the same gold; a flag a
    reviewer dismissed stays dismissed."""
    wanted = {(flag.gold.pk, flag.key) for flag in flags}
    stored = {}
    for chunk in _in_chunks([gold.pk for gold in golds]):
        for flag in GoldFlag.objects.filter(gold_id__in=chunk, kind=GoldFlag.Kind.IMPORT_ANOMALY):
            stored[flag.gold_id, flag.key] = flag
    gone = [flag.pk for identity, flag in stored.items() if identity not in wanted and flag.dismissed_at is None]
    GoldFlag.objects.filter(pk__in=gone).delete()
    GoldFlag.objects.bulk_create([flag for flag in flags if (flag.gold.pk, flag.key) not in stored], batch_size=500)


def import_gold(parsed: GoldFile, *, file_name: str, annotator: str, status: str = GoldStatus.APPROVED,
                benchmark: str = "webarena", imported_by=None, create_annotator: bool = False, strict: bool = False,
                reference: bool = False) -> GoldImportReport:
    """Store parsed gold under `annotator`; all of the file or nothing, in a few bulk statements.

    `imported_by` is the reviewer importing it (None: the operator's command); `create_annotator`
    lets the command create a missing annotator account."""
    if status not in GoldStatus.values:
        raise ValueError(f"unknown status {status!r}; expected one of {', '.join(GoldStatus.values)}")
    if reference and status != GoldStatus.APPROVED:
        raise ValueError("only approved gold can become the reference: import it with status approved")
    if strict:
        refuse_anomalies(parsed, file_name)
    report = GoldImportReport(
        file=file_name, format=parsed.format, annotator=annotator, status=status, benchmark=benchmark,
        imported_by=imported_by.get_username() if imported_by else "", unplaced=list(parsed.unplaced),
        anomalies=list(parsed.anomalies), reference=reference,
    )
    with transaction.atomic():
        if parsed.tasks:
            report.benchmark = parsed.tasks[0].benchmark
            report.defined_tasks = import_task_configs(parsed.tasks, source=file_name).to_dict()
        user = _annotator_user(annotator, create=create_annotator and imported_by is None)
        _check_importer(imported_by, user, status)
        placed = _placed_blocks(parsed.blocks, file_name, user, report)
        existing = _existing_golds([key for *_, key in placed])
        outcomes = _write_golds(placed, existing, user, status, imported_by, file_name)
        for block, task, content, key in placed:
            report.gold.append(ImportedGold(block.task_id, block.ordinal, block.where, len(content.steps),
                                            outcomes[key], existing[key].pk))
        _store_anomaly_flags([existing[key] for *_, key in placed], _anomaly_flags(placed, existing, parsed.anomalies))
        if reference:
            # The file's first gold of each task becomes that task's reference.
            make_reference([existing[key] for block, *_, key in placed if block.ordinal == 1])
        assign_missing_references({task.pk for _, task, _, _ in placed})
        if placed:
            start_quality_checks_after_import({task.benchmark for _, task, _, _ in placed})
    return report


def _placed_blocks(blocks: list[GoldBlock], file_name: str, user, report: GoldImportReport) -> list[tuple]:
    """(block, task, content, source key) of each block whose task the platform holds; the rows of
    the others go to the report as unplaced, their task as missing."""
    tasks = {}
    for bench in {block.benchmark for block in blocks}:
        ids = list({block.task_id for block in blocks if block.benchmark == bench})
        for chunk in _in_chunks(ids):
            for task in Task.objects.filter(benchmark=bench, task_id__in=chunk):
                tasks[bench, task.task_id] = task
    placed = []
    for block in blocks:
        task = tasks.get((block.benchmark, block.task_id))
        if task is None:
            if block.task_id not in report.missing_tasks:
                report.missing_tasks.append(block.task_id)
            reason = unplaced_reason("missing_task", task_id=block.task_id, benchmark=block.benchmark)
            report.unplaced.extend(UnplacedRow(where, reason) for where in block.rows or [block.where])
            continue
        placed.append((block, task, _block_content(block, file_name), _source_key(file_name, user.username, block)))
    return placed


def _existing_golds(keys: list[str]) -> dict[str, GoldTrajectory]:
    existing = {}
    for chunk in _in_chunks(keys):
        for gold in GoldTrajectory.objects.filter(source_key__in=chunk).prefetch_related("steps"):
            existing[gold.source_key] = gold
    return existing


def _write_golds(placed: list[tuple], existing: dict[str, GoldTrajectory], user, status: str, imported_by,
                 file_name: str) -> dict[str, str]:
    """Create the new golds and rewrite the changed ones with their steps (and, approved by a
    reviewer, their review), in bulk; `existing` gains the created ones. Source key -> created,
    updated or unchanged."""
    now = timezone.now()
    outcomes, created, updated = {}, [], []
    for _, task, content, key in placed:
        gold = existing.get(key)
        if gold is None:
            gold = GoldTrajectory(task=task, annotator=user, source=file_name, source_key=key)
            _apply(gold, content, status, now, imported_by)
            created.append(gold)
            existing[key] = gold
            outcomes[key] = "created"
        elif _stored_state(gold) == _wanted_state(content, status):
            outcomes[key] = "unchanged"
        else:
            gold.version += 1
            _apply(gold, content, status, now, imported_by)
            updated.append(gold)
            outcomes[key] = "updated"
    GoldTrajectory.objects.bulk_create(created, batch_size=500)
    GoldTrajectory.objects.bulk_update(
        updated, ["version", "status", "submitted_at", "cannot_complete", "cannot_complete_reason",
                  "final_answer", "is_reference", "imported_by", "imported_at", "updated_at"], batch_size=500)
    for chunk in _in_chunks(updated):
        GoldStep.objects.filter(gold__in=chunk).delete()
    written = {gold.source_key for gold in created + updated}
    if imported_by is not None and status == GoldStatus.APPROVED:
        GoldReview.objects.bulk_create(
            [GoldReview(gold=gold, reviewer=imported_by, decision=GoldReview.Decision.APPROVED,
                        comment=f"Approved on import of {file_name}", gold_version=gold.version)
             for gold in created + updated], batch_size=500)
    GoldStep.objects.bulk_create(
        [step for *_, content, key in placed if key in written for step in _steps_of(existing[key], content)],
        batch_size=1000,
    )
    return outcomes

def import_gold_file(path: Path, *, annotator: str, status: str = GoldStatus.APPROVED,
                     benchmark: str = "webarena", imported_by=None, create_annotator: bool = False,
                     strict: bool = False, reference: bool = False) -> GoldImportReport:
    """Read and import one gold file; raises GoldFormatError (naming file and row) on unreadable input."""
    path = Path(path)
    return import_gold(read_gold_file(path, benchmark=benchmark), file_name=path.name, annotator=annotator,
                       status=status, benchmark=benchmark, imported_by=imported_by,
                       create_annotator=create_annotator, strict=strict, reference=reference)
