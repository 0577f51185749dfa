"""Checks a reviewer runs over a benchmark's gold before trusting it (Django-free).

Each check turns plain task and gold records into findings; a finding names its gold, what is
wrong and a key that tells it apart from the gold's other findings of the same kind, so that
storing the findings of a later run updates the same flags.

- belongs to another task: the values a gold types, the links and numbers it names fit another
  task's intent clearly better than its own (rare words weigh more, by inverse document frequency
  over every intent of the benchmark);
- duplicate: the same steps (after normalising case, spaces and end punctuation) under two tasks;
- too short / too long: against the median of the task's other golds and its template siblings';
- one-step gold; a gold that never types the quoted values of its intent.
"""

import math
import re
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from statistics import median

OTHER_TASK = "other_task"
DUPLICATE = "duplicate"
TOO_SHORT = "too_short"
TOO_LONG = "too_long"
ONE_STEP = "one_step"
MISSING_VALUES = "missing_values"

# A gold belongs elsewhere when another intent holds two of its signal words or more, with a fit
# of at least this (about two rare words), more than twice its own task's.
OTHER_TASK_MIN_FIT = 8.0
OTHER_TASK_RATIO = 2.0
SIBLING_SHARE = 0.75
# Length checks need this many peers; a gold is too short under half their median (and 3 steps
# fewer), too long over twice it (and 4 steps more).
MIN_PEERS = 3


@dataclass(frozen=True)
class TaskRecord:
    pk: int
    task_id: str
    intent: str
    template_id: int | None = None


@dataclass(frozen=True)
class GoldRecord:
    pk: int
    task_pk: int
    steps: tuple[str, ...]
    cannot_complete: bool = False


@dataclass(frozen=True)
class Finding:
    gold_pk: int
    kind: str
    key: str
    message: str
    related_gold_pk: int | None = None
    related_task_pk: int | None = None


_QUOTED = re.compile(r"'([^']{2,}?)'|\"([^\"]{2,}?)\"|‘([^’]{2,}?)’|“([^”]{2,}?)”")
_WORD = re.compile(r"[a-z0-9][a-z0-9.$/-]*[a-z0-9]|[a-z0-9]")
_NUMBER = re.compile(r"\b\d[\d,./-]{2,}\b")
STOP_WORDS = frozenset(
    "the and for with from into this that what which when where who how are was were has have had not any all "
    "its his her their our your you him she they them then than there here can will would should could may might "
    "about after before over under more most less few one two via per out off our my me".split()
)


def normalise(text: str) -> str:
    return re.sub(r"\s+", " ", text.strip().lower()).strip(" .,:;!?")


def quoted_values(text: str) -> list[str]:
    return [next(group for group in match.groups() if group) for match in _QUOTED.finditer(text)]


def words(text: str) -> set[str]:
    return {word for word in _WORD.findall(text.lower()) if len(word) >= 3 and word not in STOP_WORDS}


_TYPING = re.compile(r"^\W*(type|enter|input|fill|search|write|paste)\b", re.IGNORECASE)
_LINK = re.compile(r"https?://\S+|\b[\w-]+\.(?:com|org|net|io)\b", re.IGNORECASE)


def gold_signal_words(steps: tuple[str, ...]) -> set[str]:
    """The words a gold types, the links and numbers it names: what ties it to its own task.
    The labels it clicks are left out, being shared by every task of a site."""
    found = set()
    for text in steps:
        if _TYPING.match(text):
            for value in quoted_values(text):
                found |= words(value)
        for link in _LINK.findall(text):
            found |= words(link)
        for number in _NUMBER.findall(text):
            found |= words(number)
    return found


class IntentIndex:
    """Which intents contain a word, and how rare the word is among intents."""

    def __init__(self, tasks: list[TaskRecord]):
        self.postings: dict[str, set[int]] = defaultdict(set)
        for task in tasks:
            for word in words(task.intent):
                self.postings[word].add(task.pk)
        self.size = max(len(tasks), 1)

    def fits(self, signal: set[str]) -> tuple[Counter, Counter]:
        """Task pk -> summed rarity of the signal words its intent contains, and how many they are."""
        scores: Counter = Counter()
        counts: Counter = Counter()
        for word in signal:
            tasks = self.postings.get(word)
            if tasks:
                weight = math.log(self.size / len(tasks))
                for pk in tasks:
                    scores[pk] += weight
                    counts[pk] += 1
        return scores, counts


def check_other_task(tasks: dict[int, TaskRecord], golds: list[GoldRecord], index: IntentIndex,
                     progress: Callable[[int], None] | None = None) -> list[Finding]:
    findings = []
    for position, gold in enumerate(golds, start=1):
        fits, counts = index.fits(gold_signal_words(gold.steps))
        own = fits.get(gold.task_pk, 0.0)
        others = [(score, pk) for pk, score in fits.items() if pk != gold.task_pk and counts[pk] >= 2]
        if others:
            best, pk = max(others, key=lambda item: (item[0], -item[1]))
            mine = tasks[gold.task_pk]
            # A template sibling that fits nearly as well is the likelier home: a copied gold.
            siblings = [(score, other) for score, other in others if mine.template_id is not None
                        and tasks[other].template_id == mine.template_id and score >= SIBLING_SHARE * best]
            if siblings:
                best, pk = max(siblings, key=lambda item: (item[0], -item[1]))
            if best >= OTHER_TASK_MIN_FIT and best > OTHER_TASK_RATIO * own:
                theirs = tasks[pk]
                sibling = (" (a sibling of the same template with a different target)"
                           if mine.template_id is not None and mine.template_id == theirs.template_id else "")
                findings.append(Finding(
                    gold.pk, OTHER_TASK, f"task:{pk}",
                    f"its typed values, links and numbers fit task {theirs.task_id}{sibling} better than its own task "
                    f"{mine.task_id} (fit {best:.1f} against {own:.1f}): “{theirs.intent[:160]}”",
                    related_task_pk=pk,
                ))
        if progress and position % 100 == 0:
            progress(position)
    return findings


def check_duplicates(tasks: dict[int, TaskRecord], golds: list[GoldRecord]) -> list[Finding]:
    by_steps: dict[tuple[str, ...], list[GoldRecord]] = defaultdict(list)
    for gold in golds:
        if len(gold.steps) >= 2:
            by_steps[tuple(normalise(text) for text in gold.steps)].append(gold)
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
        text = normalise(" ".join(gold.steps))
        missing = [value for value in quoted_values(tasks[gold.task_pk].intent) if normalise(value) not in text]
        if missing:
            listed = ", ".join(f"“{value}”" for value in missing)
            plural = "s" if len(missing) > 1 else ""
            findings.append(Finding(gold.pk, MISSING_VALUES, "", f"never types the intent's quoted value{plural} {listed}"))
    return findings


def check_gold(tasks: list[TaskRecord], golds: list[GoldRecord],
               progress: Callable[[int], None] | None = None) -> list[Finding]:
    """Every check over a benchmark's gold; `progress(n)` is told how many golds are done."""
    by_pk = {task.pk: task for task in tasks}
    golds = [gold for gold in golds if gold.task_pk in by_pk]
    findings = check_other_task(by_pk, golds, IntentIndex(tasks), progress)
    findings += check_duplicates(by_pk, golds)
    findings += check_lengths(by_pk, golds)
    findings += check_intent_values(by_pk, golds)
    if progress:
        progress(len(golds))
    return findings
