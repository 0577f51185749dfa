"""Sentence vectors for the gold checks, read from the database where an earlier run stored them.

The first quality job of a benchmark encodes its intents and golds with MiniLM (seconds of CPU);
later ones, in any process, encode only the texts that are new, such as the golds just imported.
"""

import hashlib

import numpy as np

from annotation.models import SentenceVector

# Part of every digest: vectors of another model never match.
MODEL_NAME = "all-MiniLM-L6-v2-int8"
_CHUNK = 500


def _digest(text: str) -> str:
    return hashlib.sha256(f"{MODEL_NAME}\n{text}".encode()).hexdigest()


class StoredEncoder:
    """The `encode` of judges.embeddings, through the stored vectors; new ones are stored."""

    def __init__(self, encoder=None):
        self._encoder = encoder

    def encode(self, texts: list[str]) -> np.ndarray:
        digests = {text: _digest(text) for text in dict.fromkeys(texts)}
        wanted = list(digests.values())
        stored: dict[str, bytes] = {}
        for start in range(0, len(wanted), _CHUNK):
            stored.update(SentenceVector.objects.filter(digest__in=wanted[start:start + _CHUNK])
                          .values_list("digest", "vector"))
        missing = [text for text, digest in digests.items() if digest not in stored]
        if missing:
            rows = [SentenceVector(digest=digests[text], vector=vector.astype(np.float32).tobytes())
                    for text, vector in zip(missing, self._model().encode(missing))]
            SentenceVector.objects.bulk_create(rows, batch_size=_CHUNK, ignore_conflicts=True)
            stored.update((row.digest, row.vector) for row in rows)
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        return np.stack([np.frombuffer(stored[digests[text]], dtype=np.float32) for text in texts])

    def _model(self):
        if self._encoder is None:
            from judges.embeddings import sentence_encoder

            self._encoder = sentence_encoder()
        return self._encoder
