"""Checks a reviewer runs over a benchmark's gold before trusting it (Django-free).

Each check turns plain task and gold records into findings; a finding names its gold, what is
wrong and a key that tells it apart from the gold's other findings of the same kind, so that
storing the findings of a later run updates the same flags.

How a gold fits its task, one reason per gold, the most specific first:
- a template sibling's values: it types the places, titles or products of another task of its
  template and misses one its own intent names;
- the worse version: of a task's golds that share few words, one fitting the intent far worse;
- belongs to another task: what a gold types and names (values, places, links, numbers; rare words
  weigh more, by inverse document frequency over every intent of the benchmark) and the meaning of
  its steps (MiniLM sentence embeddings) fit another task's intent clearly better than its own;
- fits its own task poorly: nothing it types is in its intent and most intents fit it better.
Then:
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
from typing import Protocol

import numpy as np

OTHER_TASK = "other_task"
SIBLING_VALUES = "sibling_values"
POOR_FIT = "poor_fit"
WORSE_VERSION = "worse_version"
DUPLICATE = "duplicate"
TOO_SHORT = "too_short"
TOO_LONG = "too_long"
ONE_STEP = "one_step"
MISSING_VALUES = "missing_values"

# Fit of a gold to an intent: summed rarity of the words both hold (a word found in one intent of
# 800 weighs about 6.7) plus MEANING_WEIGHT times the cosine similarity of gist and intent. The
# thresholds below were chosen on the tuning part of benchmarks/gold_fit_labels.py.
NAMED_WEIGHT = 0.5
MEANING_WEIGHT = 10.0
GIST_CHARS = 200
NEAREST_BY_MEANING = 5
# Another task fits clearly better: by this much, and by its words (at least this fit, more than
# twice the own task's) or, for a gold of several steps, by meaning (this much closer, with this
# many intents fitting better than the own one).
OTHER_TASK_MARGIN = 4.0
OTHER_TASK_MIN_FIT = 6.0
OTHER_TASK_RATIO = 2.0
OTHER_TASK_CLOSER = 0.25
OTHER_TASK_RANK = 30
# Fits its own task poorly: word fit and similarity under these, and this many intents fit better.
POOR_FIT_WORDS = 1.0
POOR_FIT_SIMILARITY = 0.2
POOR_FIT_RANK = 200
# The worse of two versions: fit this much worse than the other gold, sharing less than this of its words.
WORSE_VERSION_MARGIN = 4.0
WORSE_VERSION_AGREEMENT = 0.5
# Length checks need this many peers; a gold is too short under half their median (and 3 steps
# fewer), too long over twice it (and 4 steps more).
MIN_PEERS = 3


@dataclass(frozen=True)
class TaskRecord:
    pk: int
    task_id: str
    intent: str
    template_id: int | None = None
    slots: tuple[tuple[str, str], ...] = ()  # the template's values for this task: (name, value)


def template_slots(instantiation) -> tuple[tuple[str, str], ...]:
    """A task's template values that a gold could type (text and numbers, not lists), as TaskRecord.slots."""
    if not isinstance(instantiation, dict):
        return ()
    return tuple((str(name), str(value)) for name, value in instantiation.items()
                 if isinstance(value, str | int) and not isinstance(value, bool))


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
    confidence: float | None = None  # orders the flags of the fit checks; None where a check has no measure


_QUOTED = re.compile(r"'([^']{2,}?)'|\"([^\"]{2,}?)\"|‘([^’]{2,}?)’|“([^”]{2,}?)”")
_WORD = re.compile(r"[a-z0-9][a-z0-9.$/-]*[a-z0-9]|[a-z0-9]")
_NUMBER = re.compile(r"\b\d[\d,./-]{2,}\b")
STOP_WORDS = frozenset(
    "the and for with from into this that what which when where who how are was were has have had not any all "
    "its his her their our your you him she they them then than there here can will would should could may might "
    "about after before over under more most less few one two via per out off our my me com www http https".split()
)


def normalise(text: str) -> str:
    return re.sub(r"\s+", " ", text.strip().lower()).strip(" .,:;!?")


def quoted_values(text: str) -> list[str]:
    return [next(group for group in match.groups() if group) for match in _QUOTED.finditer(text)]


_SUFFIXES = ("ings", "ing", "ers", "er", "ies", "es", "ed", "s")


def _stem(word: str) -> str:
    """Bestsellers and best-selling, reports and report: one term each."""
    if not word.isalpha():
        return word
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 4:
            return word[: -len(suffix)]
    return word


def terms(text: str) -> dict[str, str]:
    """The terms of a text, each with the word it came from: words of three letters or more,
    stemmed; a compound (a date, a hyphenated word, a domain) also gives its parts and its letters
    run together, all counted as that one word when fits are summed."""
    found = {}
    for word in _WORD.findall(text.lower()):
        parts = re.split(r"[./-]", word)
        for part in ([word, "".join(parts), *parts] if len(parts) > 1 else [word]):
            if len(part) >= 3 and part not in STOP_WORDS:
                found.setdefault(_stem(part), word)
    return found


def words(text: str) -> set[str]:
    return set(terms(text))


_TYPING = re.compile(r"^\W*(type|enter|input|fill|search|write|paste)\b", re.IGNORECASE)
_LINK = re.compile(r"https?://\S+|\b[\w-]+\.(?:com|org|net|io)\b", re.IGNORECASE)
_INTO = ("into the", "in the", "into", "in")


def is_typing(text: str) -> bool:
    return _TYPING.match(text) is not None


def typed_values(text: str) -> list[str]:
    """The quoted values a step types; the field it types into ("into the 'To' textbox") is not one."""
    if not is_typing(text):
        return []
    return [next(group for group in match.groups() if group) for match in _QUOTED.finditer(text)
            if not text[: match.start()].lower().rstrip().endswith(_INTO)]



def gold_signal_words(steps: tuple[str, ...]) -> dict[str, tuple[float, str]]:
    """The terms a gold types, the links and numbers it names (weight 1) and the labels it clicks
    or picks (weight NAMED_WEIGHT: many are shared by every task of a site, and rarity over the
    intents already tells the telling ones apart), each with the word it was written as."""
    found: dict[str, tuple[float, str]] = {}

    def add(text: str, weight: float) -> None:
        for term, word in terms(text).items():
            if weight > found.get(term, (0.0, ""))[0]:
                found[term] = (weight, word)

    for text in steps:
        typed = typed_values(text)
        for value in quoted_values(text):
            add(value, 1.0 if value in typed else NAMED_WEIGHT)
        for link in _LINK.findall(text):
            add(link, 1.0)
        for number in _NUMBER.findall(text):
            add(number, 1.0)
    return found


def gold_gist(steps: tuple[str, ...]) -> str:
    """What a gold's steps are about, short enough to embed fast: the quoted labels and values of a
    step, or the step itself when it quotes nothing."""
    parts = []
    for text in steps:
        values = quoted_values(text)
        parts.append(", ".join(values) if values else text.strip())
    return "; ".join(dict.fromkeys(part for part in parts if part))[:GIST_CHARS]


class IntentIndex:
    """Which intents contain a word, and how rare the word is among intents."""

    def __init__(self, tasks: list[TaskRecord]):
        self.postings: dict[str, set[int]] = defaultdict(set)
        for task in tasks:
            for word in words(task.intent):
                self.postings[word].add(task.pk)
        self.size = max(len(tasks), 1)

    def rarity(self, word: str) -> float:
        tasks = self.postings.get(word)
        return math.log(self.size / len(tasks)) if tasks else 0.0

    def fits(self, signal: dict[str, tuple[float, str]]) -> Counter:
        """Task pk -> summed weighted rarity of the gold's words its intent contains (a word's
        rarest term held by the intent: a date's year, a domain's name)."""
        best: dict[tuple[int, str], float] = {}
        for term, (weight, word) in signal.items():
            value = weight * self.rarity(term)
            for pk in self.postings.get(term, ()):
                best[pk, word] = max(best.get((pk, word), 0.0), value)
        scores: Counter = Counter()
        for (pk, _), value in best.items():
            scores[pk] += value
        return scores

    def shared(self, signal: dict[str, tuple[float, str]], intent: str, limit: int = 6) -> list[str]:
        """The gold's words an intent holds, the most telling first: the evidence a reviewer reads."""
        held = words(intent)
        telling: dict[str, float] = {}
        for term, (weight, word) in signal.items():
            if term in held:
                telling[word] = max(telling.get(word, 0.0), weight * self.rarity(term))
        return sorted(telling, key=lambda word: (-telling[word], word))[:limit]


class Encoder(Protocol):
    def encode(self, texts: list[str]) -> np.ndarray: ...


@dataclass
class GoldFit:
    """How well each gold fits every intent of its benchmark, by the words it types and names and
    by the meaning of its steps."""

    tasks: dict[int, TaskRecord]
    golds: list[GoldRecord]
    index: IntentIndex
    signals: list[dict[str, tuple[float, str]]]
    word_fits: list[Counter]  # per gold: task pk -> word fit
    similarity: np.ndarray  # golds x tasks, cosine of the gist and the intent
    columns: dict[int, int]  # task pk -> column

    @classmethod
    def measure(cls, tasks: dict[int, TaskRecord], golds: list[GoldRecord], encoder: Encoder) -> "GoldFit":
        index = IntentIndex(list(tasks.values()))
        signals = [gold_signal_words(gold.steps) for gold in golds]
        columns = {pk: column for column, pk in enumerate(tasks)}
        if golds and tasks:
            intents = encoder.encode([task.intent for task in tasks.values()])
            gists = encoder.encode([gold_gist(gold.steps) or "(no steps)" for gold in golds])
            similarity = gists @ intents.T
        else:
            similarity = np.zeros((len(golds), len(tasks)), dtype=np.float32)
        return cls(tasks, golds, index, signals, [index.fits(signal) for signal in signals], similarity, columns)

    def score(self, row: int, task_pk: int) -> float:
        """Word fit plus the weighted similarity of meaning: one scale for ranking tasks."""
        meaning = float(self.similarity[row, self.columns[task_pk]])
        return self.word_fits[row].get(task_pk, 0.0) + MEANING_WEIGHT * meaning

    def rival(self, row: int) -> "Rival":
        """The other task the gold fits best, among the intents holding its words and the closest in meaning."""
        own = self.golds[row].task_pk
        near = set(np.argsort(-self.similarity[row])[:NEAREST_BY_MEANING + 1].tolist())
        candidates = {pk for pk in self.word_fits[row] if pk != own} | {
            pk for pk, column in self.columns.items() if column in near and pk != own}
        best = max(candidates, key=lambda pk: (self.score(row, pk), -pk))
        own_words, their_words = self.word_fits[row].get(own, 0.0), self.word_fits[row].get(best, 0.0)
        return Rival(best, self.score(row, best) - self.score(row, own),
                     their_words >= OTHER_TASK_MIN_FIT and their_words > OTHER_TASK_RATIO * own_words,
                     float(self.similarity[row, self.columns[best]] - self.similarity[row, self.columns[own]]))

    def clearly_better(self, row: int) -> "Rival | None":
        """The rival, when it fits clearly better: by the words the gold types and names, or, for a
        gold of several steps its own intent ranks far down for, by meaning."""
        if not self.golds[row].steps or len(self.tasks) < 2:
            return None
        rival = self.rival(row)
        if rival.gap < OTHER_TASK_MARGIN:
            return None
        by_meaning = (rival.closer >= OTHER_TASK_CLOSER and len(self.golds[row].steps) > 1
                      and self.rank_of_own(row) >= OTHER_TASK_RANK)
        return rival if rival.by_words or by_meaning else None

    def rank_of_own(self, row: int) -> int:
        """How many intents fit the gold better than its own task's."""
        word_fits = np.array([self.word_fits[row].get(pk, 0.0) for pk in self.columns])
        scores = word_fits + MEANING_WEIGHT * self.similarity[row]
        return int((scores > self.score(row, self.golds[row].task_pk) + 1e-9).sum())

    def evidence(self, row: int, task_pk: int) -> str:
        shared = self.index.shared(self.signals[row], self.tasks[task_pk].intent)
        said = ", ".join(f"‘{word}’" for word in shared) if shared else "no word of it"
        return (f"word fit {self.word_fits[row].get(task_pk, 0.0):.1f} ({said}), "
                f"similarity {float(self.similarity[row, self.columns[task_pk]]):.2f}")


@dataclass(frozen=True)
class Rival:
    task_pk: int
    gap: float  # its fit minus the own task's
    by_words: bool  # its intent holds the gold's words, clearly more than the own intent
    closer: float  # its similarity minus the own task's


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
        text = normalise(" ".join(gold.steps))
        own = dict(mine.slots)
        ours = {normalise(value) for value in own.values()}
        best = None
        for sibling in by_template[mine.template_id]:
            if sibling.pk == mine.pk:
                continue
            # Slots are named differently across a template's tasks ("year", "period"): any of the
            # sibling's values counts, unless one of the task's own values holds it.
            typed = [(name, value) for name, value in sibling.slots
                     if not any(_holds(mine_value, value) for mine_value in ours) and _holds(text, value)]
            if typed and (best is None or len(typed) > len(best[1])):
                best = (sibling, typed)
        missing = [value for value in own.values() if len(normalise(value)) >= 3 and not _holds(text, value)]
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


def _holds(text: str, value: str) -> bool:
    value = normalise(value)
    return len(value) >= 3 and re.search(rf"(?<![a-z0-9]){re.escape(value)}(?![a-z0-9])", text) is not None


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
               progress: Callable[[int], None] | None = None, encoder: Encoder | None = None) -> list[Finding]:
    """Every check over a benchmark's gold; `progress(n)` is told how many golds are done. The
    encoder defaults to the MiniLM model the offline judge uses."""
    by_pk = {task.pk: task for task in tasks}
    golds = [gold for gold in golds if gold.task_pk in by_pk]
    if encoder is None and golds:
        from judges.embeddings import sentence_encoder

        encoder = sentence_encoder()
    findings = check_sibling_values(by_pk, golds)
    fit = GoldFit.measure(by_pk, golds, encoder)
    if progress:
        progress(len(golds) // 2)
    # One reason per gold, the most specific first: a sibling's values, then a better version beside it.
    for check in (check_worse_version, check_other_task, check_poor_fit):
        findings += check(fit, {finding.gold_pk for finding in findings})
    findings += check_duplicates(by_pk, golds)
    findings += check_lengths(by_pk, golds)
    findings += check_intent_values(by_pk, golds)
    if progress:
        progress(len(golds))
    return findings
