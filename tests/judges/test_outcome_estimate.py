"""What the outcome judge will ask, counted before it starts: requests on hand-counted cases, image tokens
by OpenAI's tile rule (the examples of its vision guide), and the tokens of a small pass."""

import math

import pytest

from judges.outcome_estimate import (
    ANSWER_TOKENS, CHARS_PER_TOKEN, PlannedShot, PlannedTrajectory, estimate, estimate_basis, image_tokens,
    requests_to_make,
)
from judges.outcome_questions import KEY_POINTS, KINDS, SCREENSHOT, VERDICT, OutcomeOptions
from judges.prompts import load_prompt

OPTIONS = OutcomeOptions(threshold=3, max_screenshots=2)
COFFEE, KETTLE = "Add two bags of coffee to the cart", "What is the price of the blue kettle?"
S1, S2, S3 = "1" * 64, "2" * 64, "3" * 64


def shot(step: int, sha: str, relevance: int | None = None, size=(1280, 720)) -> PlannedShot:
    return PlannedShot(step, sha, size, relevance)


def trajectory(intent: str, *shots: PlannedShot, answer: str = "Done", actions=("click [1]",),
               key_points=None, decided: bool = False) -> PlannedTrajectory:
    return PlannedTrajectory(intent, answer, tuple(actions), tuple(shots), key_points, decided)


def kinds(trajectories) -> tuple[int, int, int]:
    requests = requests_to_make(trajectories, OPTIONS)
    return tuple(sum(1 for request in requests if request.kind == kind) for kind in KINDS)


def test_nothing_decided_one_request_per_task_text_per_screenshot_of_a_text_and_per_trajectory():
    # Key points: two task texts. Screenshots: (coffee, S1), (coffee, S2), (coffee, S3) and (kettle, S1): the
    # first two trajectories share S2, and S1 is asked again for the kettle, its key points being others.
    # Verdicts: three trajectories.
    trajectories = [trajectory(COFFEE, shot(1, S1), shot(2, S2)),
                    trajectory(COFFEE, shot(1, S2), shot(3, S3), answer="Added"),
                    trajectory(KETTLE, shot(1, S1))]
    assert kinds(trajectories) == (2, 4, 3)


def test_what_is_decided_is_not_asked_again():
    # The coffee key points and S1, S2 scored against them are decided: key points for the kettle only;
    # screenshots (coffee, S3) and (kettle, S1); the first trajectory's verdict is decided: two verdicts.
    points = ("two bags of coffee",)
    trajectories = [trajectory(COFFEE, shot(1, S1, 4), shot(2, S2, 2), key_points=points, decided=True),
                    trajectory(COFFEE, shot(1, S2, 2), shot(3, S3), answer="Added", key_points=points),
                    trajectory(KETTLE, shot(1, S1))]
    assert kinds(trajectories) == (1, 2, 2)


def test_trajectories_asking_the_same_verdict_question_ask_it_once():
    # The first two are alike in text, answer, actions and screenshots at the same steps: one verdict. The
    # third shows the same image at step 2, the fourth answers otherwise: a verdict each. One screenshot.
    same = [trajectory(COFFEE, shot(1, S1)), trajectory(COFFEE, shot(1, S1)),
            trajectory(COFFEE, shot(2, S1)), trajectory(COFFEE, shot(1, S1), answer="Not found")]
    assert kinds(same) == (1, 1, 3)


def test_a_trajectory_without_screenshots_asks_key_points_and_a_verdict():
    assert kinds([trajectory(KETTLE)]) == (1, 0, 1)
    assert kinds([trajectory(KETTLE, key_points=("price",), decided=True)]) == (0, 0, 0)


def test_the_verdict_is_counted_with_the_screenshots_it_will_be_shown():
    points = ("two bags of coffee",)
    # All scored: S1 (2) is under the threshold 3, S2 (5) and S3 (3) are shown: two images.
    scored = trajectory(COFFEE, shot(1, S1, 2), shot(2, S2, 5), shot(3, S3, 3), key_points=points)
    [verdict] = requests_to_make([scored], OPTIONS)
    assert (verdict.kind, len(verdict.images)) == (VERDICT, 2)
    # One not scored yet: as many as it may be shown, max_screenshots = 2; plus the one screenshot request.
    pending = trajectory(COFFEE, shot(1, S1, 2), shot(2, S2, 5), shot(3, S3), key_points=points)
    screenshot, verdict = requests_to_make([pending], OPTIONS)
    assert (screenshot.kind, screenshot.images, len(verdict.images)) == (SCREENSHOT, ((1280, 720),), 2)


@pytest.mark.parametrize(("size", "tokens"), [
    ((1280, 720), 85 + 170 * 6),  # no scaling: 3 x 2 tiles of 512
    ((1024, 1024), 765),  # short side to 768: 768 x 768, 2 x 2 tiles (OpenAI's example)
    ((2048, 4096), 1105),  # fit 2048: 1024 x 2048; short side to 768: 768 x 1536, 2 x 3 tiles (OpenAI's example)
    ((4, 3), 85 + 170),  # one tile
    (None, 85 + 170 * 6),  # unreadable: counted as 1280 x 720
])
def test_image_tokens_by_the_tile_rule(size, tokens):
    assert image_tokens(size) == tokens


def test_a_model_that_counts_images_otherwise_names_its_rule():
    assert image_tokens((1024, 1024), {"base": 2833, "tile": 5667}) == 2833 + 4 * 5667


def test_the_tokens_of_a_pass_over_one_trajectory_without_screenshots():
    """Key points and a verdict: their prompts' characters / 4, the key points unknown yet counted at the size
    of their answer (150 tokens, 600 characters); answers 150 + 200 tokens."""
    kettle = trajectory(KETTLE, answer="$25", actions=("stop [$25]",))
    key_points, verdict = load_prompt(KEY_POINTS), load_prompt(VERDICT)
    key_points_chars = len(key_points.system) + len(f"Task: {KETTLE}")
    verdict_chars = len(verdict.system) + len(verdict.user.substitute(
        intent=KETTLE, key_points="(none)", answer="$25", actions="1. stop [$25]",
        screenshots="None: judge from the text alone.")) + 600

    found = estimate([kettle], OPTIONS)

    assert (found.key_points, found.screenshots, found.verdicts, found.requests, found.images) == (1, 0, 1, 2, 0)
    assert found.prompt_tokens == math.ceil(key_points_chars / 4) + math.ceil(verdict_chars / 4)
    assert found.completion_tokens == 150 + 200 == ANSWER_TOKENS[KEY_POINTS] + ANSWER_TOKENS[VERDICT]
    assert CHARS_PER_TOKEN == 4


def test_images_add_their_tokens_to_the_prompt():
    """One verdict, its key points known, S1 scored 4 and shown: its prompt's characters / 4 plus 765 tokens
    for a 1024 x 1024 image."""
    found = estimate([trajectory(COFFEE, shot(1, S1, 4, (1024, 1024)), key_points=("two bags of coffee",))],
                     OPTIONS)
    verdict = load_prompt(VERDICT)
    chars = len(verdict.system) + len(verdict.user.substitute(
        intent=COFFEE, key_points="1. two bags of coffee", answer="Done", actions="1. click [1]",
        screenshots="1 attached, of steps 1, in that order."))
    assert (found.requests, found.images) == (1, 1)
    assert found.prompt_tokens == math.ceil(chars / 4) + 765


def test_the_basis_says_how_the_estimate_is_made():
    basis = estimate_basis(OPTIONS, {"base": 2833, "tile": 5667})
    assert "4 characters a token" in basis and "2833 tokens plus 5667 per 512-pixel tile" in basis
    assert "150 tokens (key points), 100 (screenshot) and 200 (verdict)" in basis
    assert "as many as it may be shown (2)" in basis and "a retry or a repair request adds one" in basis
