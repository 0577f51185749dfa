"""A judge's score matrix and the greedy matching of steps it implies (Django-free).

Step Success and Recovery match agent steps against gold steps from the judge's scores, and the
agreement of two annotators' gold for one task matches one gold against the other in exactly the
same way, so that it reads on the scale of the metric it feeds. The matching and the checks on
its input live here, in judges, below the apps that use it: one matching, not two.
"""

import math
from dataclasses import dataclass
from numbers import Real


def _is_unit_number(value) -> bool:
    # bool is a Real; a True passed as a score is a caller's mistake, not a judge answer.
    return isinstance(value, Real) and not isinstance(value, bool) and not math.isnan(value) and 0 <= value <= 1


def check_tau(tau) -> float:
    if not _is_unit_number(tau):
        raise ValueError(f"tau must be a number in [0, 1], got {tau!r}")
    return float(tau)


def check_score(score, where: str) -> float:
    if not _is_unit_number(score):
        raise ValueError(f"{where}: a judge score must be a number in [0, 1], got {score!r}")
    return float(score)


def check_count(count, what: str) -> int:
    if isinstance(count, bool) or not isinstance(count, int) or count < 0:
        raise ValueError(f"{what} must be a non-negative integer, got {count!r}")
    return count


@dataclass(frozen=True)
class ScoreMatrix:
    """Judge scores of every gold step against every agent step: `scores[j][i]` is gold j vs agent i.

    `agent_steps` is given explicitly because a matrix without gold steps has no rows to
    count agent steps from.
    """

    scores: tuple[tuple[float, ...], ...]
    agent_steps: int

    def __post_init__(self):
        agent_steps = check_count(self.agent_steps, "agent_steps")
        rows = []
        for j, row in enumerate(self.scores):
            row = tuple(row)
            if len(row) != agent_steps:
                raise ValueError(
                    f"score matrix row of gold step {j + 1} has {len(row)} scores, "
                    f"expected {agent_steps} (one per agent step)"
                )
            rows.append(
                tuple(check_score(score, f"score matrix [gold step {j + 1}][agent step {i + 1}]")
                      for i, score in enumerate(row))
            )
        object.__setattr__(self, "scores", tuple(rows))

    @property
    def gold_steps(self) -> int:
        return len(self.scores)


@dataclass(frozen=True)
class MatchedPair:
    gold_step: int
    agent_step: int
    score: float


def match_steps(matrix: ScoreMatrix, *, tau: float, ordered: bool = False
                ) -> tuple[tuple[MatchedPair, ...], tuple[int, ...]]:
    """The matched pairs and the unmatched gold steps; each gold step and each agent step is used at most once.

    Greedy as in the published code: gold steps in order, each takes the first unused agent
    step scoring >= tau. With `ordered`, only agent steps after the previous match qualify.
    """
    tau = check_tau(tau)
    used = [False] * matrix.agent_steps
    matched, unmatched = [], []
    start = 0
    for j, row in enumerate(matrix.scores):
        for i in range(start, matrix.agent_steps):
            if not used[i] and row[i] >= tau:
                used[i] = True
                matched.append(MatchedPair(gold_step=j + 1, agent_step=i + 1, score=row[i]))
                if ordered:
                    start = i + 1
                break
        else:
            unmatched.append(j + 1)
    return tuple(matched), tuple(unmatched)
