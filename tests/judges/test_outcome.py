"""The outcome judge's questions and strict answer reading, without Django."""

import pytest

from judges import outcome
from judges.outcome import MalformedOutcome, Shot


def shot(step: int) -> Shot:
    return Shot(step, f"sha-{step}", f"data:image/png;base64,{step}")


def test_top_screenshots_keeps_the_best_at_or_above_the_threshold_in_step_order():
    scored = [(shot(1), 3), (shot(2), 5), (shot(3), 2), (shot(4), 4), (shot(5), 5)]
    assert [s.step for s in outcome.top_screenshots(scored, threshold=3, limit=3)] == [2, 4, 5]
    assert [s.step for s in outcome.top_screenshots(scored, threshold=3, limit=10)] == [1, 2, 4, 5]
    # Ties at the cut: the earlier screenshot is kept.
    assert [s.step for s in outcome.top_screenshots(scored, threshold=3, limit=2)] == [2, 5]
    assert outcome.top_screenshots(scored, threshold=3, limit=0) == []


def test_images_are_named_by_hash_in_the_inputs_and_not_hashed():
    first = outcome.screenshot_question("Find a hotel", ["a hotel"], Shot(1, "abc", "data:image/png;base64,AAAA"))
    same_image = outcome.screenshot_question("Find a hotel", ["a hotel"], Shot(4, "abc", "data:image/png;base64,AAAA"))
    assert first.inputs == {"intent": "Find a hotel", "key_points": ["a hotel"], "image": "abc"}
    assert first.images == ("data:image/png;base64,AAAA",)
    assert first.inputs_hash == same_image.inputs_hash


def test_verdict_prompt_fields_say_which_screenshots_are_attached():
    question = outcome.verdict_question("Buy milk", ["milk in the cart"], None, ["click [3]"], [shot(2), shot(7)])
    fields = outcome.prompt_fields(question)
    assert fields == {"intent": "Buy milk", "key_points": "1. milk in the cart", "answer": outcome.NO_ANSWER,
                      "actions": "1. click [3]", "screenshots": "2 attached, of steps 2, 7, in that order."}
    assert question.images == ("data:image/png;base64,2", "data:image/png;base64,7")


@pytest.mark.parametrize(
    ("reader", "data", "message"),
    [
        (outcome.read_key_points, {"key_points": []}, "key_points must be a list of 1 to 10 strings"),
        (outcome.read_key_points, {"key_points": ["a", " "]}, "every key point must be a non-empty string"),
        (outcome.read_relevance, {"relevance": 6, "reasoning": ""}, "relevance must be a whole number from 1 to 5"),
        (outcome.read_relevance, {"relevance": 4.5}, "relevance must be a whole number from 1 to 5"),
        (outcome.read_relevance, {"relevance": True}, "relevance must be a whole number from 1 to 5"),
        (outcome.read_verdict, {"success": "yes", "reasoning": ""}, "success must be true or false, not 'yes'"),
        (outcome.read_verdict, {"success": True, "reasoning": 3}, "reasoning must be a string"),
        (outcome.read_verdict, ["success"], "answer must be a JSON object"),
    ],
)
def test_answers_are_read_strictly(reader, data, message):
    with pytest.raises(MalformedOutcome, match=message):
        reader(data)


def test_well_formed_answers_are_read():
    assert outcome.read_key_points({"key_points": [" cheapest ", "under $50"]}) == ["cheapest", "under $50"]
    assert outcome.read_relevance({"relevance": 4, "reasoning": "Cart shown."}) == (4, "Cart shown.")
    assert outcome.read_verdict({"success": False}) == (False, "")
    assert [outcome.relevance_of(score) for score in (0, 0.25, 0.5, 0.75, 1)] == [1, 2, 3, 4, 5]
