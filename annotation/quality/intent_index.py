"""Which intents of a benchmark hold a term, and how rare the term is among them (Django-free)."""

import math
from collections import Counter, defaultdict

from .records import TaskRecord
from .terms import words


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
