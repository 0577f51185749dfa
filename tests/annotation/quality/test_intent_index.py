"""The intent index: how rare a term is among intents, and how well a gold's terms fit each intent.
Expected values by hand: a term held by k of n intents weighs ln(n / k)."""

import math

from annotation.quality.intent_index import IntentIndex
from annotation.quality.records import TaskRecord

TASKS = [TaskRecord(1, "1", "Show the bestsellers of 2022"), TaskRecord(2, "2", "Show sales of 2022"),
         TaskRecord(3, "3", "Show orders")]


def test_rarity_is_the_log_of_intents_over_intents_holding_the_term():
    index = IntentIndex(TASKS)
    assert index.rarity("bestsell") == math.log(3)  # one intent of three
    assert index.rarity("2022") == math.log(3 / 2)
    assert index.rarity("show") == 0.0  # every intent
    assert index.rarity("kettle") == 0.0  # none
    # An index of one intent: its words tell nothing apart.
    assert IntentIndex(TASKS[:1]).rarity("bestsell") == 0.0


def test_a_words_fit_is_its_rarest_term_an_intent_holds_and_words_add_up():
    index = IntentIndex(TASKS)
    # "bestsellers" came as two terms, the rare one first; "2022" is typed at half weight.
    signal = {"bestsell": (1.0, "bestsellers"), "show": (1.0, "bestsellers"), "2022": (0.5, "2022")}

    fits = index.fits(signal)

    assert dict(fits) == {1: math.log(3) + 0.5 * math.log(3 / 2), 2: 0.5 * math.log(3 / 2), 3: 0.0}


def test_shared_words_come_the_most_telling_first_at_most_six():
    index = IntentIndex(TASKS)
    # "bestsellers" by its rarest term held (ln 3, not its "show": every intent says it), "in-2022"
    # (ln 1.5), then "alpha" and "beta", of no rarity, by name.
    signal = {"bestsell": (1.0, "bestsellers"), "show": (1.0, "bestsellers"), "2022": (1.0, "in-2022"),
              "beta": (1.0, "beta"), "alpha": (1.0, "alpha")}
    held = "Show the bestsellers of 2022 alpha beta"
    assert index.shared(signal, held) == ["bestsellers", "in-2022", "alpha", "beta"]

    many = {f"term{n}": (1.0, f"word{n}") for n in range(8)}
    assert index.shared(many, " ".join(many)) == [f"word{n}" for n in range(6)]
