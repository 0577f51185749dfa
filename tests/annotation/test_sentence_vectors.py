"""Stored sentence vectors: each text is encoded once, whatever the process, and read back in order."""

import numpy as np

from annotation.models import SentenceVector
from annotation.services.sentence_vectors import StoredEncoder


class CountingEncoder:
    def __init__(self):
        self.asked = []

    def encode(self, texts):
        self.asked.append(list(texts))
        return np.array([[len(text), 1.0] for text in texts], dtype=np.float32)


def test_a_text_is_encoded_once_and_its_vector_read_back_in_place(db):
    first, second = CountingEncoder(), CountingEncoder()

    vectors = StoredEncoder(first).encode(["a kettle", "a red teapot", "a kettle"])
    again = StoredEncoder(second).encode(["a red teapot", "a cup", "a kettle"])

    assert first.asked == [["a kettle", "a red teapot"]] and second.asked == [["a cup"]]
    assert vectors.tolist() == [[8, 1], [12, 1], [8, 1]]
    assert again.tolist() == [[12, 1], [5, 1], [8, 1]]
    assert SentenceVector.objects.count() == 3
    assert StoredEncoder(CountingEncoder()).encode([]).shape == (0, 0)
