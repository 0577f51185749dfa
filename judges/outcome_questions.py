"""The outcome judge's questions and answers (Django-free): did the agent accomplish its task?

Judged as WebJudge judges a whole trajectory, in three questions: the key points the task
asks for (one per task text), how relevant each screenshot is to them (1 to 5, one per
image), and a verdict from the task, its key points, the final answer, the actions and the
screenshots scored at or above a threshold (the best `max_screenshots`, shown in step order).

A screenshot enters a question's inputs by the sha256 of its bytes; the image itself travels
with the question as a data URI (`Question.images`), so that decisions are cached by image
without storing it in each of them. Each answer is read by its schema (`judges.schema`): what
does not fit is malformed (and the backend asks once for a repair).
"""

from dataclasses import dataclass

from .questions import Question

KEY_POINTS = "outcome_key_points"
SCREENSHOT = "outcome_screenshot"
VERDICT = "outcome_verdict"
KINDS = (KEY_POINTS, SCREENSHOT, VERDICT)

SOURCE_NAME = "Trajscope outcome judge"
DEFAULT_THRESHOLD = 3
DEFAULT_MAX_SCREENSHOTS = 5
MAX_KEY_POINTS = 10
NO_ANSWER = "(the agent gave no final answer)"


@dataclass(frozen=True)
class OutcomeOptions:
    """A judge configuration's options `screenshot_threshold` (1-5) and `max_screenshots`."""

    threshold: int = DEFAULT_THRESHOLD
    max_screenshots: int = DEFAULT_MAX_SCREENSHOTS

    @classmethod
    def of(cls, options: dict) -> "OutcomeOptions":
        """ValueError naming the option that is out of range."""
        threshold = options.get("screenshot_threshold", DEFAULT_THRESHOLD)
        limit = options.get("max_screenshots", DEFAULT_MAX_SCREENSHOTS)
        if isinstance(threshold, bool) or not isinstance(threshold, int) or not 1 <= threshold <= 5:
            raise ValueError(f"options.screenshot_threshold must be 1 to 5, not {threshold!r}")
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 0:
            raise ValueError(f"options.max_screenshots must be a whole number >= 0, not {limit!r}")
        return cls(threshold, limit)


@dataclass(frozen=True)
class Shot:
    """A step's screenshot: `data_uri` is what the model sees, `sha256` what the cache sees."""

    step: int
    sha256: str
    data_uri: str


def key_points_question(intent: str) -> Question:
    return Question(KEY_POINTS, {"intent": intent})


def screenshot_question(intent: str, key_points: list[str], shot: Shot) -> Question:
    return Question(SCREENSHOT, {"intent": intent, "key_points": key_points, "image": shot.sha256},
                    images=(shot.data_uri,))


def verdict_question(intent: str, key_points: list[str], answer: str | None, actions: list[str],
                     shown: list[Shot]) -> Question:
    return Question(
        VERDICT,
        {"intent": intent, "key_points": key_points, "answer": answer or "", "actions": actions,
         "screenshots": [{"step": shot.step, "image": shot.sha256} for shot in shown]},
        images=tuple(shot.data_uri for shot in shown),
    )


def top_screenshots(scored: list[tuple[Shot, int]], threshold: int, limit: int) -> list[Shot]:
    """The screenshots scored `threshold` or above, the `limit` best (earlier first on ties), in step order."""
    kept = sorted((item for item in scored if item[1] >= threshold), key=lambda item: (-item[1], item[0].step))
    return sorted((shot for shot, _ in kept[:max(limit, 0)]), key=lambda shot: shot.step)


def numbered(lines: list[str]) -> str:
    return "\n".join(f"{number}. {line}" for number, line in enumerate(lines, start=1))


def prompt_fields(question: Question) -> dict:
    """The prompt's fields for a question of one of KINDS."""
    inputs = question.inputs
    fields = {"intent": inputs["intent"]}
    if question.kind in (SCREENSHOT, VERDICT):
        fields["key_points"] = numbered(inputs["key_points"]) or "(none)"
    if question.kind == VERDICT:
        steps = [shot["step"] for shot in inputs["screenshots"]]
        fields.update(
            answer=inputs["answer"] or NO_ANSWER,
            actions=numbered(inputs["actions"]) or "(no actions)",
            screenshots=(f"{len(steps)} attached, of steps {', '.join(map(str, steps))}, in that order."
                         if steps else "None: judge from the text alone."),
        )
    return fields


def relevance_of(score: float) -> int:
    """A screenshot decision's score (relevance 1-5 mapped onto 0-1) as the relevance again."""
    return round(1 + 4 * score)
