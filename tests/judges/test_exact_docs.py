"""The README's examples of what the exact judge compares are what the code answers, row by row."""

import re

from django.conf import settings

from judges import questions as q
from judges.backends import BackendSpec
from judges.backends.exact import ExactBackend
from judges.steps import JudgeStep

INTENT = "What is the price of the cheapest band?"


def _examples() -> list[tuple[str, str, str, str]]:
    readme = (settings.BASE_DIR / "README.md").read_text(encoding="utf-8")
    block = readme.split("<!-- exact-judge-examples -->", 1)[1].split("<!-- /exact-judge-examples -->", 1)[0]
    rows = []
    for line in block.strip().splitlines()[2:]:
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        kind, first, second, says = cells
        rows.append((kind, re.fullmatch(r"`(.*)`", first).group(1), re.fullmatch(r"`(.*)`", second).group(1), says))
    return rows


def _question(kind: str, first: str, second: str) -> q.Question:
    if kind == "steps":
        return q.step_match(JudgeStep(text=first), JudgeStep(text=second))
    if kind == "requirement":
        return q.requirement(INTENT, second, first)
    assert kind == "reference answer", kind
    return q.fuzzy_answer(INTENT, second, first)


def test_every_readme_example_is_what_the_exact_judge_answers():
    examples = _examples()
    assert len(examples) >= 12 and {kind for kind, *_ in examples} == {"steps", "requirement", "reference answer"}
    backend = ExactBackend(BackendSpec(backend="exact"))
    answers = backend.answer([_question(kind, first, second) for kind, first, second, _ in examples])
    said = [(first, second, "same" if answer.score == 1.0 else "different") for answer, (_, first, second, _) in
            zip(answers, examples)]
    assert said == [(first, second, says) for _, first, second, says in examples]
