"""Search of steps by keyword and by meaning together (Django-free).

A step's keyword score is how many of the query's words its texts hold; its meaning score the cosine
between the query's sentence vector and the step's stored one. The two rankings are merged by
reciprocal rank fusion (the sum of 1 / (FUSION_K + rank) over the rankings a step is in), so that a
step both lists place high comes first without weighing a word count against a cosine.
"""

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

FUSION_K = 60
SNIPPET_CONTEXT = 80  # characters shown either side of the match
QUERY_LENGTH = 500  # characters of a query read, as the search box takes
_WORD = re.compile(r"\w{2,}")
# Words matched inside others and found in nearly every text: left to the search by meaning.
_STOP = frozenset("the and for with that this from was were are not but into onto its has had have".split())


def query_terms(query: str) -> tuple[str, ...]:
    """The query's distinct words of three letters or more, lowercased, in order, common ones left out;
    a query of only short or common words keeps them."""
    words = [word.lower() for word in _WORD.findall(query)]
    kept = [word for word in words if len(word) > 2 and word not in _STOP] or words
    return tuple(dict.fromkeys(kept))


def matched_terms(terms: Sequence[str], texts: Sequence[str]) -> int:
    """How many of `terms` occur in any of `texts`, case ignored."""
    lowered = [text.lower() for text in texts]
    return sum(any(term in text for text in lowered) for term in terms)


@dataclass(frozen=True)
class Snippet:
    """A piece of a step's text around the match: shown escaped, the match marked."""

    field: str
    before: str
    match: str
    after: str


def snippet(terms: Sequence[str], texts: Mapping[str, str]) -> Snippet | None:
    """Around the first term found, the fields tried in their order; the head of the first text when
    no term is found (a match by meaning only); None when every text is empty."""
    for field, text in texts.items():
        lowered = text.lower()
        found = [(lowered.find(term), term) for term in terms if term in lowered]
        if found:
            start, term = min(found)
            end = start + len(term)
            head = max(0, start - SNIPPET_CONTEXT)
            return Snippet(field, ("…" if head else "") + text[head:start], text[start:end],
                           text[end:end + SNIPPET_CONTEXT] + ("…" if len(text) > end + SNIPPET_CONTEXT else ""))
    for field, text in texts.items():
        if text.strip():
            cut = 2 * SNIPPET_CONTEXT
            return Snippet(field, "", "", text[:cut] + ("…" if len(text) > cut else ""))
    return None


def found_words(params: Mapping[str, str]) -> dict:
    """What a trajectory page opened from a search result marks: the query's words (`find`) and the step the
    result is (`find_step`), from the page's query parameters; nothing when they are absent or bad."""
    step = (params.get("find_step") or "").strip()
    return {"found_terms": query_terms((params.get("find") or "")[:QUERY_LENGTH]),
            "found_step": int(step) if step.isdigit() else None}


def marked(text: str, terms: Sequence[str]) -> list[tuple[str, bool]]:
    """The text in pieces, each occurrence of a term (case ignored; the longer where two start together) a
    piece of its own: (piece, whether it is a match). The pieces join back into the text."""
    if not terms or not text:
        return [(text, False)] if text else []
    pattern = re.compile("|".join(re.escape(term) for term in sorted(terms, key=len, reverse=True)), re.IGNORECASE)
    pieces, end = [], 0
    for match in pattern.finditer(text):
        if match.start() > end:
            pieces.append((text[end:match.start()], False))
        pieces.append((match.group(), True))
        end = match.end()
    if end < len(text):
        pieces.append((text[end:], False))
    return pieces


def quantize(vectors: np.ndarray) -> np.ndarray:
    """Unit-length float vectors as int8 (each component times 127), a quarter of the bytes."""
    return np.clip(np.rint(vectors * 127), -127, 127).astype(np.int8)


def dequantize(vectors: np.ndarray) -> np.ndarray:
    """`quantize`d vectors back as float32, ready for `nearest`."""
    return vectors.astype(np.float32) / np.float32(127)


def nearest(query: np.ndarray, vectors: np.ndarray, limit: int) -> list[tuple[int, float]]:
    """Rows of float32 `vectors` nearest the unit-length `query`: (row, cosine), nearest first."""
    if not len(vectors):
        return []
    cosines = vectors @ query.astype(np.float32)
    limit = min(limit, len(cosines))
    top = np.argpartition(-cosines, limit - 1)[:limit]
    top = top[np.argsort(-cosines[top], kind="stable")]
    return [(int(row), float(cosines[row])) for row in top]


def fuse(*rankings: Sequence) -> list:
    """Items of the rankings (each best first) by reciprocal rank fusion, best first; ties keep the
    order in which items were first seen."""
    scores: dict = {}
    for ranking in rankings:
        for rank, item in enumerate(ranking, start=1):
            scores[item] = scores.get(item, 0.0) + 1.0 / (FUSION_K + rank)
    return sorted(scores, key=lambda item: -scores[item])
