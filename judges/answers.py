"""What a judge answers (Django-free): a backend's raw answer and the verdicts metrics read."""

from dataclasses import dataclass, field
from decimal import Decimal


@dataclass(frozen=True)
class Answer:
    """One backend answer to one question, with what it cost to get it."""

    score: float | None
    rationale: str = ""
    output: dict = field(default_factory=dict)
    error: str = ""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: Decimal = Decimal(0)
    latency_ms: int = 0
    calls: int = 0
    # How the answer was read: what was read leniently (`judges.schema`), repair requests made,
    # and the structured-output mode it was asked with.
    coerced: tuple[str, ...] = ()
    repairs: int = 0
    structured_output: str = ""

    @classmethod
    def failed(cls, error: str, **usage) -> "Answer":
        return cls(score=None, error=error, **usage)


@dataclass(frozen=True)
class Verdict:
    """A judge's verdict as metrics use it; a human's score replaces the judge's when present.

    `score` is None exactly when the decision failed, and then `error` says why.
    """

    score: float | None
    rationale: str = ""
    decision_id: int | None = None
    error: str = ""


@dataclass(frozen=True)
class StepScores:
    """Scores of every gold step (rows) against every agent step (columns).

    `matrix[j][i]` is gold step j vs agent step i. When the question failed, `error` is set and
    the cells are None.
    """

    matrix: list[list[float | None]]
    decision_ids: list[int]
    error: str = ""
