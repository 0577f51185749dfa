"""The checks of a gold's steps alone (Django-free): the same steps under two tasks, a length far from
its peers', one step only, the intent's quoted values never typed."""

from collections import defaultdict
from statistics import median

from .records import DUPLICATE, MISSING_VALUES, ONE_STEP, TOO_LONG, TOO_SHORT, Finding, GoldRecord, TaskRecord
from .step_text import fold_case_and_spacing, quoted_values

# Length checks need this many peers; a gold is too short under half their median (and 3 steps
# fewer), too long over twice it (and 4 steps more).
MIN_PEERS = 3


def check_duplicates(tasks: dict[int, TaskRecord], golds: list[GoldRecord]) -> list[Finding]:
    by_steps: dict[tuple[str, ...], list[GoldRecord]] = defaultdict(list)
    for gold in golds:
        if len(gold.steps) >= 2:
            by_steps[tuple(fold_case_and_spacing(text) for text in gold.steps)].append(gold)
    findings = []
    for group in by_steps.values():
        if len({gold.task_pk for gold in group}) < 2:
            continue
        # One flag per gold, naming the first copy under another task: a group of k copies gives k
        # flags, not k * (k - 1).
        for gold in group:
            others = [other for other in group if other.task_pk != gold.task_pk]
            if not others:
                continue
            other = others[0]
            more = len({copy.task_pk for copy in others}) - 1
            findings.append(Finding(
                gold.pk, DUPLICATE, f"gold:{other.pk}",
                f"the same {len(gold.steps)} steps are stored under task {tasks[other.task_pk].task_id} "
                f"(gold #{other.pk})" + (f" and {more} other task{'s' if more > 1 else ''}" if more else ""),
                related_gold_pk=other.pk, related_task_pk=other.task_pk,
            ))
    return findings


def check_lengths(tasks: dict[int, TaskRecord], golds: list[GoldRecord]) -> list[Finding]:
    by_task, by_template = defaultdict(list), defaultdict(list)
    for gold in golds:
        if gold.cannot_complete:
            continue
        by_task[gold.task_pk].append(gold)
        template = tasks[gold.task_pk].template_id
        if template is not None:
            by_template[template].append(gold)
    findings = []
    for gold in golds:
        if gold.cannot_complete or not gold.steps:
            continue
        n = len(gold.steps)
        if n == 1:
            findings.append(Finding(gold.pk, ONE_STEP, "", "a gold of one step: rarely the whole path of a task"))
        template = tasks[gold.task_pk].template_id
        peers = {peer.pk: peer for peer in by_task[gold.task_pk] + by_template.get(template, []) if peer.pk != gold.pk}
        if len(peers) < MIN_PEERS:
            continue
        m = median(len(peer.steps) for peer in peers.values())
        if n < m / 2 and m - n >= 3:
            findings.append(Finding(gold.pk, TOO_SHORT, "", f"{n} steps where the task's other golds and its "
                                    f"template siblings' have {m:g} (median of {len(peers)})"))
        elif n > 2 * m and n - m >= 4:
            findings.append(Finding(gold.pk, TOO_LONG, "", f"{n} steps where the task's other golds and its "
                                    f"template siblings' have {m:g} (median of {len(peers)})"))
    return findings


def check_intent_values(tasks: dict[int, TaskRecord], golds: list[GoldRecord]) -> list[Finding]:
    findings = []
    for gold in golds:
        if gold.cannot_complete or not gold.steps:
            continue
        text = fold_case_and_spacing(" ".join(gold.steps))
        missing = [value for value in quoted_values(tasks[gold.task_pk].intent) if fold_case_and_spacing(value) not in text]
        if missing:
            listed = ", ".join(f"“{value}”" for value in missing)
            plural = "s" if len(missing) > 1 else ""
            findings.append(Finding(gold.pk, MISSING_VALUES, "", f"never types the intent's quoted value{plural} {listed}"))
    return findings
