"""The outcome judge's questions, without Django (its answers' schemas: test_schema.py)."""

from judges import outcome_questions
from judges.outcome_questions import Shot


def shot(step: int) -> Shot:
    return Shot(step, f"sha-{step}", f"data:image/png;base64,{step}")


def test_top_screenshots_keeps_the_best_at_or_above_the_threshold_in_step_order():
    scored = [(shot(1), 3), (shot(2), 5), (shot(3), 2), (shot(4), 4), (shot(5), 5)]
    assert [s.step for s in outcome_questions.top_screenshots(scored, threshold=3, limit=3)] == [2, 4, 5]
    assert [s.step for s in outcome_questions.top_screenshots(scored, threshold=3, limit=10)] == [1, 2, 4, 5]
    # Ties at the cut: the earlier screenshot is kept.
    assert [s.step for s in outcome_questions.top_screenshots(scored, threshold=3, limit=2)] == [2, 5]
    assert outcome_questions.top_screenshots(scored, threshold=3, limit=0) == []


def test_images_are_named_by_hash_in_the_inputs_and_not_hashed():
    first = outcome_questions.screenshot_question("Find a hotel", ["a hotel"], Shot(1, "abc", "data:image/png;base64,AAAA"))
    same_image = outcome_questions.screenshot_question("Find a hotel", ["a hotel"], Shot(4, "abc", "data:image/png;base64,AAAA"))
    assert first.inputs == {"intent": "Find a hotel", "key_points": ["a hotel"], "image": "abc"}
    assert first.images == ("data:image/png;base64,AAAA",)
    assert first.inputs_hash == same_image.inputs_hash


def test_verdict_prompt_fields_say_which_screenshots_are_attached():
    question = outcome_questions.verdict_question("Buy milk", ["milk in the cart"], None, ["click [3]"], [shot(2), shot(7)])
    fields = outcome_questions.prompt_fields(question)
    assert fields == {"intent": "Buy milk", "key_points": "1. milk in the cart", "answer": outcome_questions.NO_ANSWER,
                      "actions": "1. click [3]", "screenshots": "2 attached, of steps 2, 7, in that order."}
    assert question.images == ("data:image/png;base64,2", "data:image/png;base64,7")


def test_a_screenshot_decisions_score_is_its_relevance_again():
    assert [outcome_questions.relevance_of(score) for score in (0, 0.25, 0.5, 0.75, 1)] == [1, 2, 3, 4, 5]
