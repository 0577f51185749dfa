"""Judge answers for tests: exact string equality, the `exact` backend's rule."""

from metrics.definitions import ScoreMatrix


def exact_matrix(gold: list[str], agent: list[str]) -> ScoreMatrix:
    return ScoreMatrix([[1.0 if g == a else 0.0 for a in agent] for g in gold], agent_steps=len(agent))


def neighbour_scores(agent: list[str]) -> list[float]:
    return [1.0 if agent[k + 1] == agent[k] else 0.0 for k in range(len(agent) - 1)]
