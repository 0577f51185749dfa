"""`exact`: equality after normalisation, for tests and sanity checks (Django-free).

Two WebArena actions are the same when their type, element id and argument agree
(`ParsedAction.same_target`); any other pair of texts, when `parsing.plain_text` makes them
equal. README's Judges section lists what that means, with examples checked by a test.
"""

from .. import questions as q
from ..parsing import plain_text, same_step
from ..answers import Answer
from .base import Backend

NOT_AN_ANSWER = {"", "n/a", "na", "none"}


def _yes(condition: bool, yes: str, no: str) -> Answer:
    return Answer(score=1.0 if condition else 0.0, rationale=yes if condition else no)


class ExactBackend(Backend):
    name = "exact"

    def version(self, kind: str) -> str:
        return "exact-1"

    def answer(self, questions: list[q.Question]) -> list[Answer]:
        return [self._answer(question.kind, question.inputs) for question in questions]

    def _answer(self, kind: str, inputs: dict) -> Answer:
        if kind == q.STEP_MATCH:
            return _yes(same_step(inputs["gold"]["text"], inputs["agent"]["text"]), "Identical.", "Different.")
        if kind == q.REPETITION:
            return _yes(same_step(inputs["previous"]["text"], inputs["step"]["text"]), "Identical.", "Different.")
        if kind == q.TRAJECTORY_MATCH:
            matrix = [
                [1.0 if same_step(gold["text"], agent["text"]) else 0.0 for agent in inputs["agent"]]
                for gold in inputs["gold"]
            ]
            best = [max(row, default=0.0) for row in matrix]
            return Answer(
                score=sum(best) / len(best) if best else 0.0,
                rationale=f"{int(sum(best))} of {len(best)} gold steps have an identical agent step.",
                output={"matrix": matrix},
            )
        answer = plain_text(inputs["answer"])
        if kind == q.REQUIREMENTS:
            return _yes(
                bool(answer) and plain_text(inputs["requirement"]) in answer,
                "The requirement is in the answer.",
                "The requirement is not in the answer.",
            )
        if kind == q.FUZZY_ANSWER:
            return _yes(answer == plain_text(inputs["reference"]), "Same as the reference.", "Not the reference.")
        if kind == q.GROUNDEDNESS:
            if inputs["aspect"] == "grounded":
                seen = " ".join(plain_text(o["text"]) for o in inputs["observations"])
                return _yes(bool(answer) and answer in seen, "The answer was observed.", "The answer was not observed.")
            return _yes(answer not in NOT_AN_ANSWER, "There is an answer.", "There is no answer.")
        raise ValueError(f"unknown question kind {kind!r}")
