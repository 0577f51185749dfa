"""How a gold fits the intents: the words it types and names, its gist, and the rival task, on a
GoldFit made by hand (word fits and similarities chosen, expected values computed from them)."""

from collections import Counter

import numpy as np
import pytest

from annotation.quality.fit import GoldFit, Rival, gold_gist, gold_signal_words
from annotation.quality.intent_index import IntentIndex
from annotation.quality.records import GoldRecord, TaskRecord


def test_typed_values_weigh_one_clicked_labels_half_and_a_term_keeps_its_first_word_at_its_best_weight():
    found = gold_signal_words(("Type 'Blue Kettle' into the 'Search' box", "Click the 'Kettle' button",
                               "Type 'best-selling'", "Type 'best'", "Open https://shop.com/item"))

    assert found["kettle"] == (1.0, "kettle")  # typed, then only clicked: the typed weight stays
    assert found["search"] == (0.5, "search")  # the field typed into is a label
    assert found["best"] == (1.0, "best-selling")  # the same weight again keeps the first word
    assert found["shop"] == (1.0, "shop.com/item")  # a link, typed or not


def test_a_gist_is_each_steps_quoted_values_or_the_step_once_each():
    steps = ("Click the 'Go' button", "  Scroll down ", "Type 'a b' into the 'To' box", "Click the 'Go' link")
    assert gold_gist(steps) == "Go; Scroll down; a b, To"


class _Recording:
    def __init__(self):
        self.texts = []

    def encode(self, texts: list[str]) -> np.ndarray:
        self.texts += texts
        return np.full((len(texts), 2), 2 ** -0.5, dtype=np.float32)


def test_measuring_encodes_the_intents_then_the_gists_and_a_gold_without_steps_as_such():
    tasks = {1: TaskRecord(1, "1", "Open the reports")}
    encoder = _Recording()

    GoldFit.measure(tasks, [GoldRecord(1, 1, ("Click 'Reports'",)), GoldRecord(2, 1, ())], encoder)

    assert encoder.texts == ["Open the reports", "Reports", "(no steps)"]


def test_without_tasks_nothing_is_encoded_and_every_similarity_is_absent():
    encoder = _Recording()
    fit = GoldFit.measure({}, [GoldRecord(1, 1, ("Click 'Reports'",))], encoder)
    assert encoder.texts == []
    assert fit.similarity.shape == (1, 0) and fit.similarity.dtype == np.float32


def _fit(word_fits: dict[int, float], similarity: list[float]) -> GoldFit:
    """Gold 1 of task 1, of two steps, among tasks 1 to 4 with the given word fits and similarities."""
    tasks = {pk: TaskRecord(pk, str(pk), f"intent {pk}") for pk in (1, 2, 3, 4)}
    golds = [GoldRecord(1, 1, ("Click 'a'", "Click 'b'"))]
    return GoldFit(tasks, golds, IntentIndex(list(tasks.values())), [{}], [Counter(word_fits)],
                   np.array([similarity], dtype=np.float64), {pk: pk - 1 for pk in tasks})


def test_the_rival_is_the_best_scoring_other_task_and_by_words_needs_a_fit_of_six_over_twice_the_own():
    # Scores (words + 10 x similarity): own 2 + 5 = 7, task 2 6 + 3 = 9, task 3 0 + 3.5 = 3.5, task 4 0.
    fit = _fit({1: 2.0, 2: 6.0}, [0.5, 0.3, 0.35, 0.0])
    assert fit.rival(0) == Rival(2, pytest.approx(2.0), True, pytest.approx(-0.2))  # 6 >= 6 and 6 > 2 x 2
    assert fit.rank_of_own(0) == 1  # only task 2 scores over 7
    # 7 is not over twice 3.5: not by words.
    assert _fit({1: 3.5, 2: 7.0}, [0.5, 0.3, 0.35, 0.0]).rival(0).by_words is False
    # Without a word of its own intent, any fit of six or more is by words.
    assert _fit({2: 6.0}, [0.5, 0.3, 0.35, 0.0]).rival(0).by_words is True


def test_intents_without_a_word_of_the_gold_rank_by_meaning_alone():
    # Task 3 holds no word of the gold: 0 + 6.5 stays under the own 7.
    assert _fit({1: 2.0, 2: 6.0}, [0.5, 0.3, 0.65, 0.0]).rank_of_own(0) == 1
