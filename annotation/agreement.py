"""How much two annotators' gold for the same task agree (Django-free).

One gold trajectory is matched against the other exactly as Step Success matches agent steps
against gold (greedy, each step used at most once, judge score >= tau), so agreement reads on
the same scale as the metric it feeds. With k matched steps out of m and n:
`agreement = 2k / (m + n)` (symmetric), plus each side's coverage k/m and k/n and the length
difference |m - n|. Two empty gold trajectories (both "cannot complete") agree fully.

The matching is `judges.matching.match_steps`, the one Step Success itself uses: it sits in judges,
below both apps, rather than annotation importing metrics' definitions (a layer above) or keeping
a copy of it. Moving the agreement up to metrics instead would take the agreement page, the gold
checks and their jobs with it, though all of them are about gold, not about agent scores.
"""

from dataclasses import dataclass, field
from statistics import mean

from judges.matching import ScoreMatrix, match_steps


@dataclass(frozen=True)
class GoldSide:
    gold_id: int
    annotator: str
    steps: int
    cannot_complete: bool = False
    source: str = ""  # "web", or the imported file's name
    block: int = 1  # which of that annotator's golds for the task in that source

    @property
    def label(self) -> str:
        """Who, from where: two golds of one file read "paper, gold.xlsx block 1" and "... block 2"."""
        if self.source in ("", "web"):
            return f"{self.annotator}, web editor (#{self.gold_id})"
        return f"{self.annotator}, {self.source} block {self.block} (#{self.gold_id})"


@dataclass(frozen=True)
class PairAgreement:
    first: GoldSide
    second: GoldSide
    matched: int | None
    agreement: float | None
    first_coverage: float | None
    second_coverage: float | None
    matched_steps: tuple[tuple[int, int, float], ...] = ()
    error: str = ""

    @property
    def length_difference(self) -> int:
        return abs(self.first.steps - self.second.steps)


def pair_agreement(first: GoldSide, second: GoldSide, scores: list[list[float | None]], *, tau: float,
                   error: str = "") -> PairAgreement:
    """`scores[j][i]`: the judge's score of first's step j against second's step i."""
    if error or any(score is None for row in scores for score in row):
        return PairAgreement(first, second, None, None, None, None, error=error or "the judge gave no score")
    m, n = first.steps, second.steps
    if m == 0 or n == 0:
        agree = 1.0 if m == n == 0 else 0.0
        return PairAgreement(first, second, 0, agree, None if m == 0 else 0.0, None if n == 0 else 0.0)
    matched, _ = match_steps(ScoreMatrix(scores=tuple(map(tuple, scores)), agent_steps=n), tau=tau)
    k = len(matched)
    return PairAgreement(
        first, second, k, 2 * k / (m + n), k / m, k / n,
        tuple((pair.gold_step, pair.agent_step, pair.score) for pair in matched),
    )


@dataclass(frozen=True)
class TaskAgreement:
    task_pk: int
    benchmark: str
    task_id: str
    intent: str
    site: str
    pairs: tuple[PairAgreement, ...] = field(default_factory=tuple)

    @property
    def gold_count(self) -> int:
        return len({pair.first.gold_id for pair in self.pairs} | {pair.second.gold_id for pair in self.pairs})

    @property
    def agreement(self) -> float | None:
        values = [pair.agreement for pair in self.pairs if pair.agreement is not None]
        return mean(values) if values else None

    @property
    def length_difference(self) -> float:
        return mean(pair.length_difference for pair in self.pairs) if self.pairs else 0.0


@dataclass(frozen=True)
class GroupAgreement:
    """Agreement over a group of tasks (a site, or everything); unscored tasks are counted apart."""

    name: str
    tasks: int
    scored_tasks: int
    agreement: float | None
    length_difference: float | None


def group_agreement(name: str, tasks: list[TaskAgreement]) -> GroupAgreement:
    scored = [task.agreement for task in tasks if task.agreement is not None]
    return GroupAgreement(
        name=name,
        tasks=len(tasks),
        scored_tasks=len(scored),
        agreement=mean(scored) if scored else None,
        length_difference=mean(task.length_difference for task in tasks) if tasks else None,
    )


def by_site(tasks: list[TaskAgreement]) -> list[GroupAgreement]:
    """Per site; a multi-site task counts under its joined sites ("gitlab+reddit")."""
    sites: dict[str, list[TaskAgreement]] = {}
    for task in tasks:
        sites.setdefault(task.site, []).append(task)
    return [group_agreement(site, members) for site, members in sorted(sites.items())]


def most_disagreeing(tasks: list[TaskAgreement], limit: int = 20) -> list[TaskAgreement]:
    """Lowest agreement first; ties go to the larger length difference."""
    scored = [task for task in tasks if task.agreement is not None]
    return sorted(scored, key=lambda task: (task.agreement, -task.length_difference, task.task_id))[:limit]
