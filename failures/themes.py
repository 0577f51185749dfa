"""Failure themes (Django-free): failed trajectories grouped by what went wrong, from the sentence
vectors of their decisive steps and notes, each theme named by its most typical phrases.

Grouping is average-linkage agglomerative clustering on cosine distance (scipy), cut where groups
are further apart than DISTANCE, so the number of themes follows the failures rather than being
chosen beforehand. A theme's phrases are the words and word pairs found in most of its failures and
fewest of the others (the share of its failures that hold one, less the share of the others; the
longer phrase first on a tie, a phrase inside one already chosen left out); its
representatives are the failures nearest its centre.
"""

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.cluster.hierarchy import fcluster, linkage

DISTANCE = 0.55
PHRASES = 3
REPRESENTATIVES = 3
_WORD = re.compile(r"[a-z][a-z0-9'-]{2,}")
_STOP = frozenset("""the and for with that this from was were are but not have has had its into onto then than
which when where what who whom whose will would could should can may might did does doing done been being
step steps agent page task there their they them also only very more most some any all each other such via
""".split())


@dataclass(frozen=True)
class FailureText:
    trajectory_id: int
    text: str


@dataclass(frozen=True)
class Theme:
    phrases: tuple[str, ...]
    size: int
    representatives: tuple[int, ...]  # trajectory ids, nearest the centre first
    trajectories: tuple[int, ...]

    @property
    def label(self) -> str:
        return " · ".join(self.phrases) or "(no words in common)"


def _terms(text: str) -> set[str]:
    words = [word for word in _WORD.findall(text.lower()) if word not in _STOP]
    return set(words) | {f"{first} {second}" for first, second in zip(words, words[1:])}


def _phrases(members: Sequence[set[str]], document_frequency: Counter, total: int) -> tuple[str, ...]:
    inside = Counter(term for terms in members for term in terms)
    others = total - len(members)

    def distinctive(term: str) -> float:
        outside = (document_frequency[term] - inside[term]) / others if others else 0.0
        return inside[term] / len(members) - outside

    scored = sorted(inside, key=lambda term: (-distinctive(term), -len(term), term))
    chosen = []
    for term in scored:
        if inside[term] < 2 and len(members) > 1:
            break
        if not any(term in kept or kept in term for kept in chosen):
            chosen.append(term)
        if len(chosen) == PHRASES:
            break
    return tuple(chosen)


def themes(failures: Sequence[FailureText], vectors: np.ndarray, *, distance: float = DISTANCE) -> list[Theme]:
    """`vectors`: one unit-length row per failure, in order. Largest themes first."""
    if not failures:
        return []
    if len(failures) == 1:
        labels = np.array([1])
    else:
        labels = fcluster(linkage(vectors, method="average", metric="cosine"), t=distance, criterion="distance")
    terms = [_terms(failure.text) for failure in failures]
    document_frequency = Counter(term for found in terms for term in found)
    found = []
    for label in np.unique(labels):
        members = np.flatnonzero(labels == label)
        centre = vectors[members].mean(axis=0)
        nearest = members[np.argsort(-(vectors[members] @ centre), kind="stable")]
        found.append(Theme(
            phrases=_phrases([terms[index] for index in members], document_frequency, len(failures)),
            size=len(members),
            representatives=tuple(failures[index].trajectory_id for index in nearest[:REPRESENTATIVES]),
            trajectories=tuple(failures[index].trajectory_id for index in nearest),
        ))
    return sorted(found, key=lambda theme: (-theme.size, theme.representatives))
