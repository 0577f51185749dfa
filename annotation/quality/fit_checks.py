"""The fit checks (Django-free), one reason per gold, the most specific first:
- a template sibling's values: it types the places, titles or products of another task of its
  template and misses one its own intent names;
- the worse version: of a task's golds that share few words, one fitting the intent far worse;
- belongs to another task: what a gold types and names and the meaning of its steps fit another
  task's intent clearly better than its own;
- fits its own task poorly: nothing it types is in its intent and most intents fit it better.
"""

import math
from collections import defaultdict

from .fit import (OTHER_TASK_MARGIN, POOR_FIT_RANK, POOR_FIT_SIMILARITY, POOR_FIT_WORDS, WORSE_VERSION_AGREEMENT,
                  WORSE_VERSION_MARGIN, GoldFit)
from .records import OTHER_TASK, POOR_FIT, SIBLING_VALUES, WORSE_VERSION, Finding, GoldRecord, TaskRecord
from .step_text import fold_case_and_spacing, holds, typed_values
from .terms import words


def _confidence(gap: float, scale: float) -> float:
    """A margin past its threshold, mapped into (0.5, 1): only used to order the flags."""
    return round(1.0 - 0.5 * math.exp(-max(gap, 0.0) / scale), 3)


def check_sibling_values(tasks: dict[int, TaskRecord], golds: list[GoldRecord]) -> list[Finding]:
    """A gold that types the values of another task of its template where its own intent names others:
    a gold recorded for, or copied from, that sibling."""
    by_template: dict[int, list[TaskRecord]] = defaultdict(list)
    for task in tasks.values():
        if task.template_id is not None and task.slots:
            by_template[task.template_id].append(task)
    findings = []
    for gold in golds:
        mine = tasks[gold.task_pk]
        if mine.template_id is None or not mine.slots or not gold.steps:
            continue
        text = fold_case_and_spacing(" ".join(gold.steps))
        own = dict(mine.slots)
        ours = {fold_case_and_spacing(value) for value in own.values()}
        best = None
        for sibling in by_template[mine.template_id]:
            if sibling.pk == mine.pk:
                continue
            # Slots are named differently across a template's tasks ("year", "period"): any of the
            # sibling's values counts, unless one of the task's own values holds it.
            typed = [(name, value) for name, value in sibling.slots
                     if not any(holds(mine_value, value) for mine_value in ours) and holds(text, value)]
            if typed and (best is None or len(typed) > len(best[1])):
                best = (sibling, typed)
        missing = [value for value in own.values() if len(fold_case_and_spacing(value)) >= 3 and not holds(text, value)]
        if best is None or not missing:
            continue
        sibling, typed = best
        theirs = ", ".join(f"‘{value}’" for _, value in typed)
        expected = ", ".join(f"‘{value}’" for value in missing)
        findings.append(Finding(
            gold.pk, SIBLING_VALUES, f"task:{sibling.pk}",
            f"types {theirs}, the {', '.join(name for name, _ in typed)} of task {sibling.task_id} (same template), "
            f"and never {expected} that its own intent names",
            related_task_pk=sibling.pk, confidence=_confidence(len(typed), 1.0),
        ))
    return findings


def check_other_task(fit: GoldFit, skip: set[int]) -> list[Finding]:
    """A gold that another task fits clearly better than its own, named with the evidence."""
    findings = []
    for row, gold in enumerate(fit.golds):
        rival = fit.clearly_better(row) if gold.pk not in skip else None
        if rival is None:
            continue
        findings.append(Finding(
            gold.pk, OTHER_TASK, f"task:{rival.task_pk}",
            f"fits task {fit.tasks[rival.task_pk].task_id} better than its own task "
            f"{fit.tasks[gold.task_pk].task_id}: {fit.evidence(row, rival.task_pk)} against "
            f"{fit.evidence(row, gold.task_pk)}",
            related_task_pk=rival.task_pk, confidence=_confidence(rival.gap - OTHER_TASK_MARGIN, OTHER_TASK_MARGIN),
        ))
    return findings


def check_poor_fit(fit: GoldFit, skip: set[int]) -> list[Finding]:
    """A gold sharing nothing with its own intent, which most intents of the benchmark fit better."""
    findings = []
    for row, gold in enumerate(fit.golds):
        if gold.pk in skip or not gold.steps or gold.cannot_complete:
            continue
        similarity = float(fit.similarity[row, fit.columns[gold.task_pk]])
        if fit.word_fits[row].get(gold.task_pk, 0.0) >= POOR_FIT_WORDS or similarity >= POOR_FIT_SIMILARITY:
            continue
        rank = fit.rank_of_own(row)
        if rank < POOR_FIT_RANK:
            continue
        closest = fit.rival(row).task_pk
        findings.append(Finding(
            gold.pk, POOR_FIT, "",
            f"fits its own task {fit.tasks[gold.task_pk].task_id} poorly ({fit.evidence(row, gold.task_pk)}): "
            f"{rank} of {len(fit.tasks)} intents fit its steps better, the closest task "
            f"{fit.tasks[closest].task_id} ({fit.evidence(row, closest)})",
            related_task_pk=closest, confidence=_confidence((rank - POOR_FIT_RANK) / len(fit.tasks), 0.25),
        ))
    return findings


def check_worse_version(fit: GoldFit, skip: set[int]) -> list[Finding]:
    """Of a task's golds that share few words, one fitting the intent far worse than another."""
    rows_by_task: dict[int, list[int]] = defaultdict(list)
    for row, gold in enumerate(fit.golds):
        if gold.steps and not gold.cannot_complete:
            rows_by_task[gold.task_pk].append(row)
    findings = []
    for task_pk, rows in rows_by_task.items():
        for row in rows if len(rows) > 1 else ():
            gold = fit.golds[row]
            better = max((other for other in rows if other != row), key=lambda other: fit.score(other, task_pk))
            gap = fit.score(better, task_pk) - fit.score(row, task_pk)
            agreement = _agreement(fit.signals[row], fit.signals[better])
            if gold.pk in skip or gap < WORSE_VERSION_MARGIN or agreement >= WORSE_VERSION_AGREEMENT:
                continue
            other = fit.golds[better]
            rival = fit.clearly_better(row)
            elsewhere = (f"; it fits task {fit.tasks[rival.task_pk].task_id} better "
                         f"({fit.evidence(row, rival.task_pk)})" if rival else "")
            unnamed = _unnamed_values(gold.steps, fit.tasks[task_pk].intent)
            typed = f"; it types {', '.join(unnamed)}, which the intent never names" if unnamed else ""
            findings.append(Finding(
                gold.pk, WORSE_VERSION, f"gold:{other.pk}",
                f"shares {agreement:.0%} of its words with gold #{other.pk} of the same task and fits the intent "
                f"far worse: {fit.evidence(row, task_pk)} against {fit.evidence(better, task_pk)}{typed}{elsewhere}",
                related_gold_pk=other.pk, related_task_pk=rival.task_pk if rival else None,
                confidence=_confidence(gap - WORSE_VERSION_MARGIN, WORSE_VERSION_MARGIN),
            ))
    return findings


def _unnamed_values(steps: tuple[str, ...], intent: str, limit: int = 4) -> list[str]:
    """The values a gold types that share no word with the intent, quoted for a message."""
    held = words(intent)
    values = [value for text in steps for value in typed_values(text)]
    return [f"‘{value}’" for value in dict.fromkeys(values) if not words(value) & held][:limit]


def _agreement(first: dict, second: dict) -> float:
    """Jaccard overlap of two golds' signal terms."""
    if not first and not second:
        return 1.0
    return len(first.keys() & second.keys()) / len(first.keys() | second.keys())
