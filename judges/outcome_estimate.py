"""What the outcome judge will ask of a run, told before it starts (Django-free).

The requests are counted exactly from the decisions stored now: one per distinct task text whose
key points are not decided, one per distinct screenshot (the sha256 of its bytes) of a task text
not yet scored against its key points, and one per distinct verdict question not decided, each
answer taken to come at the first request (a retry or a repair request adds one). Two
trajectories ask the same verdict question when their task text, final answer, actions and
screenshots (at the same steps) are the same: its other inputs follow from those.

Tokens and cost are an estimate: a prompt's text at CHARS_PER_TOKEN characters a token, each
image by OpenAI's tile rule, each answer at ANSWER_TOKENS of its kind. What is not decided yet is
counted at its largest: key points not known yet at the size of a key-points answer, and a verdict
whose screenshots are not all scored with as many screenshots as it may be shown.
"""

import math
from collections import Counter
from dataclasses import dataclass

from . import outcome_questions
from .outcome_questions import OutcomeOptions, Shot
from .prompts import load_prompt
from .questions import Question

CHARS_PER_TOKEN = 4
ANSWER_TOKENS = {outcome_questions.KEY_POINTS: 150, outcome_questions.SCREENSHOT: 100, outcome_questions.VERDICT: 200}
# OpenAI's rule for an image of high detail (gpt-4o, gpt-4.1): scaled to fit 2048 x 2048, then to
# 768 pixels on its short side; `base` tokens plus `tile` per 512-pixel tile. A model that counts
# images otherwise names its own in the price table ("image_tokens": {"base": ..., "tile": ...}).
IMAGE_TOKENS = {"base": 85, "tile": 170}
# An image whose size cannot be read from its file is counted as a screen of this size.
ASSUMED_SIZE = (1280, 720)


@dataclass(frozen=True)
class PlannedShot:
    """A distinct screenshot of a trajectory, at the first step that shows it."""

    step: int
    sha256: str
    size: tuple[int, int] | None = None  # width and height in pixels; None: not readable from the file
    relevance: int | None = None  # 1-5, decided already; None: to be asked


@dataclass(frozen=True)
class PlannedTrajectory:
    """A trajectory as the outcome judge will ask about it, with what is decided already."""

    intent: str
    answer: str | None
    actions: tuple[str, ...]
    shots: tuple[PlannedShot, ...] = ()
    key_points: tuple[str, ...] | None = None  # decided already; None: to be asked
    verdict_decided: bool = False

    @property
    def verdict_inputs(self) -> tuple:
        """What makes its verdict question: the same for two trajectories that ask the same one."""
        return self.intent, self.answer or "", self.actions, tuple((shot.step, shot.sha256) for shot in self.shots)


@dataclass(frozen=True)
class Request:
    kind: str  # one of outcome_questions.KINDS
    text_chars: int
    images: tuple[tuple[int, int] | None, ...] = ()


@dataclass(frozen=True)
class Estimate:
    key_points: int
    screenshots: int
    verdicts: int
    images: int
    prompt_tokens: int
    completion_tokens: int

    @property
    def requests(self) -> int:
        return self.key_points + self.screenshots + self.verdicts


def requests_to_make(trajectories: list[PlannedTrajectory], options: OutcomeOptions) -> list[Request]:
    """The requests a pass over these trajectories will make, in the order the judge asks them."""
    requests = [Request(outcome_questions.KEY_POINTS, _chars(outcome_questions.key_points_question(intent)))
                for intent in dict.fromkeys(t.intent for t in trajectories if t.key_points is None)]
    screenshots = {}
    for trajectory in trajectories:
        for shot in trajectory.shots:
            if shot.relevance is None:
                screenshots.setdefault((trajectory.intent, shot.sha256), (trajectory, shot))
    requests += [
        Request(outcome_questions.SCREENSHOT,
                _chars(outcome_questions.screenshot_question(t.intent, list(t.key_points or ()), _shot(shot)), t),
                (shot.size,))
        for t, shot in screenshots.values()
    ]
    verdicts = {}
    for trajectory in trajectories:
        if not trajectory.verdict_decided:
            verdicts.setdefault(trajectory.verdict_inputs, trajectory)
    for t in verdicts.values():
        shown = _shown(t, options)
        question = outcome_questions.verdict_question(t.intent, list(t.key_points or ()), t.answer, list(t.actions),
                                            [_shot(shot) for shot in shown])
        requests.append(Request(outcome_questions.VERDICT, _chars(question, t), tuple(shot.size for shot in shown)))
    return requests


def estimate(trajectories: list[PlannedTrajectory], options: OutcomeOptions,
             image_rule: dict | None = None) -> Estimate:
    """The requests to make, their images, and their tokens by the rules above."""
    requests = requests_to_make(trajectories, options)
    kinds = Counter(request.kind for request in requests)
    rule = image_rule or IMAGE_TOKENS
    return Estimate(
        key_points=kinds[outcome_questions.KEY_POINTS], screenshots=kinds[outcome_questions.SCREENSHOT],
        verdicts=kinds[outcome_questions.VERDICT],
        images=sum(len(request.images) for request in requests),
        prompt_tokens=sum(math.ceil(request.text_chars / CHARS_PER_TOKEN)
                          + sum(image_tokens(size, rule) for size in request.images) for request in requests),
        completion_tokens=sum(ANSWER_TOKENS[request.kind] for request in requests),
    )


def image_tokens(size: tuple[int, int] | None, rule: dict | None = None) -> int:
    """An image's prompt tokens by the tile rule (IMAGE_TOKENS)."""
    rule = rule or IMAGE_TOKENS
    width, height = size if size and min(size) > 0 else ASSUMED_SIZE
    fit = min(1.0, 2048 / max(width, height))
    width, height = width * fit, height * fit
    short = min(1.0, 768 / min(width, height))
    tiles = math.ceil(width * short / 512) * math.ceil(height * short / 512)
    return rule["base"] + rule["tile"] * tiles


def estimate_basis(options: OutcomeOptions, image_rule: dict | None = None) -> str:
    """How the estimate is made, in words (the price is said by whoever prices it)."""
    rule = image_rule or IMAGE_TOKENS
    return (
        f"Requests are counted from the decisions stored now, each answer taken to come at the first try "
        f"(a retry or a repair request adds one). Tokens are estimated: a prompt's text at {CHARS_PER_TOKEN} "
        f"characters a token; each image at {rule['base']} tokens plus {rule['tile']} per 512-pixel tile once "
        f"scaled to fit 2048 x 2048 and then to 768 pixels on its short side (an image whose size cannot be "
        f"read as {ASSUMED_SIZE[0]} x {ASSUMED_SIZE[1]}); each answer at {ANSWER_TOKENS[outcome_questions.KEY_POINTS]} "
        f"tokens (key points), {ANSWER_TOKENS[outcome_questions.SCREENSHOT]} (screenshot) and "
        f"{ANSWER_TOKENS[outcome_questions.VERDICT]} (verdict). Key points not known yet count at the size of their "
        f"answer, and a verdict whose screenshots are not all scored yet with as many as it may be shown "
        f"({options.max_screenshots})."
    )


def _shot(shot: PlannedShot) -> Shot:
    return Shot(shot.step, shot.sha256, "")


def _shown(trajectory: PlannedTrajectory, options: OutcomeOptions) -> list[PlannedShot]:
    """The screenshots its verdict will be shown; at most `max_screenshots` while some are not scored."""
    if any(shot.relevance is None for shot in trajectory.shots):
        return list(trajectory.shots[:max(options.max_screenshots, 0)])
    by_step = {shot.step: shot for shot in trajectory.shots}
    scored = [(_shot(shot), shot.relevance) for shot in trajectory.shots]
    top = outcome_questions.top_screenshots(scored, options.threshold, options.max_screenshots)
    return [by_step[shot.step] for shot in top]


def _chars(question: Question, trajectory: PlannedTrajectory | None = None) -> int:
    """The characters of the question's prompt; key points not known yet at the size of their answer."""
    messages = load_prompt(question.kind).messages(**outcome_questions.prompt_fields(question))
    unknown = trajectory is not None and trajectory.key_points is None
    return sum(len(message["content"]) for message in messages) + (
        ANSWER_TOKENS[outcome_questions.KEY_POINTS] * CHARS_PER_TOKEN if unknown else 0)
