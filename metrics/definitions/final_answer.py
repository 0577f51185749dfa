"""Metrics of the final answer: Partial Success (METRICS.md section 5) and SimuRA's
groundedness and relevance (section 6).

The judge is asked only what a string check cannot settle: a caller first gets the
requirements that need the judge from `requirements_needing_judge`, asks the judge about
those alone, and passes the scores to `partial_success`.
"""

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from .base import DEFAULT_TAU, MetricResult, check_score, check_tau, has_final_answer

BY_SUBSTRING = "substring"
BY_JUDGE = "judge"
BY_NO_ANSWER = "no_answer"
BY_LABELS = {BY_SUBSTRING: "found in the answer", BY_JUDGE: "judge", BY_NO_ANSWER: "no final answer"}


def _requirements(requirements: Iterable[str]) -> tuple[str, ...]:
    """A blank phrase asks nothing of an answer, so it is not a requirement."""
    return tuple(text.strip() for text in requirements if text.strip())


def _substring_hit(requirement: str, final_answer: str) -> bool:
    return requirement.casefold() in final_answer.casefold()


def requirements_needing_judge(requirements: Iterable[str], final_answer: str | None) -> tuple[str, ...]:
    """The requirements whose presence in the answer only a judge can tell (no substring hit)."""
    requirements = _requirements(requirements)
    if len(requirements) < 2 or not has_final_answer(final_answer):
        return ()
    return tuple(text for text in requirements if not _substring_hit(text, final_answer))


@dataclass(frozen=True)
class RequirementCheck:
    requirement: str
    satisfied: bool
    by: str
    judge_score: float | None = None


NOT_APPLICABLE = "not applicable: the task has fewer than two requirements"
NO_ANSWER = "no final answer"
NOT_OBSERVED = "the trajectory records no observation text to ground the answer in"
NOT_GROUNDED_KNOWN = "groundedness is unknown: " + NOT_OBSERVED


@dataclass(frozen=True)
class PartialSuccess(MetricResult):
    value: float | None
    applicable: bool
    satisfied: int
    requirements: tuple[RequirementCheck, ...]
    tau: float
    null_reason: str = ""


def partial_success(
    requirements: Iterable[str],
    final_answer: str | None,
    judge_scores: Mapping[str, float] | None = None,
    *,
    tau: float = DEFAULT_TAU,
) -> PartialSuccess:
    """Satisfied requirements / requirements, for tasks with two or more requirements.

    `judge_scores` maps each requirement returned by `requirements_needing_judge` to the
    judge's score; a requirement counts as satisfied at score >= tau.
    """
    tau = check_tau(tau)
    requirements = _requirements(requirements)
    if len(requirements) < 2:
        return PartialSuccess(value=None, applicable=False, satisfied=0, requirements=(), tau=tau,
                              null_reason=NOT_APPLICABLE)
    judge_scores = judge_scores or {}
    checks = []
    for text in requirements:
        if not has_final_answer(final_answer):
            checks.append(RequirementCheck(text, satisfied=False, by=BY_NO_ANSWER))
        elif _substring_hit(text, final_answer):
            checks.append(RequirementCheck(text, satisfied=True, by=BY_SUBSTRING))
        elif text not in judge_scores:
            raise ValueError(f"no judge score for requirement {text!r}")
        else:
            score = check_score(judge_scores[text], f"requirement {text!r}")
            checks.append(RequirementCheck(text, satisfied=score >= tau, by=BY_JUDGE, judge_score=score))
    satisfied = sum(check.satisfied for check in checks)
    return PartialSuccess(
        value=satisfied / len(checks), applicable=True, satisfied=satisfied, requirements=tuple(checks), tau=tau
    )


@dataclass(frozen=True)
class AnswerQuality(MetricResult):
    grounded: bool | None
    relevant: bool | None
    correct: bool | None
    grounded_score: float | None
    relevant_score: float | None
    tau: float
    # Why each of grounded, relevant and correct is None, by its name.
    null_reasons: dict = field(default_factory=dict)


def answer_quality(
    final_answer: str | None,
    grounded_score: float | None = None,
    relevant_score: float | None = None,
    *,
    tau: float = DEFAULT_TAU,
    observed: bool = True,
) -> AnswerQuality:
    """Grounded, relevant and correct (both) from the judge's two scores; all None without an answer.

    `observed`: the judge had something the answer could be grounded in (observation text, or
    screenshots it sees). Without it groundedness is unknown, not false: grounded is None (no
    `grounded_score` is asked for), and so is correct; relevance is judged all the same.
    """
    tau = check_tau(tau)
    if not has_final_answer(final_answer):
        return AnswerQuality(None, None, None, None, None, tau, dict.fromkeys(("grounded", "relevant", "correct"),
                                                                              NO_ANSWER))
    if relevant_score is None or (observed and grounded_score is None):
        raise ValueError("a final answer needs both judge scores: grounded_score and relevant_score")
    relevant_score = check_score(relevant_score, "relevant_score")
    relevant = relevant_score >= tau
    if not observed:
        return AnswerQuality(None, relevant, None, None, relevant_score, tau,
                             {"grounded": NOT_OBSERVED, "correct": NOT_GROUNDED_KNOWN})
    grounded_score = check_score(grounded_score, "grounded_score")
    grounded = grounded_score >= tau
    return AnswerQuality(
        grounded=grounded,
        relevant=relevant,
        correct=grounded and relevant,
        grounded_score=grounded_score,
        relevant_score=relevant_score,
        tau=tau,
    )
