"""How well each gold fits every intent of its benchmark (Django-free): by the words it types and
names, weighted by their rarity over the intents, and by the meaning of its steps (MiniLM sentence
embeddings of its gist against each intent)."""

from collections import Counter
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from .intent_index import IntentIndex
from .records import GoldRecord, TaskRecord
from .step_text import LINK, NUMBER, quoted_values, typed_values
from .terms import terms

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
        for link in LINK.findall(text):
            add(link, 1.0)
        for number in NUMBER.findall(text):
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
