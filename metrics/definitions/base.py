"""What every metric result shares, and the checks on what callers pass in.

Results are frozen dataclasses so a computed score cannot drift from the inputs that explain
it; `to_dict()` gives the plain JSON that TrajectoryScore.details stores. Step numbers in
results are 1-based, like `Step.index` and `GoldStep.index`.
"""

import math
from numbers import Real

DEFAULT_TAU = 0.7


class MetricResult:
    """Mixin for the frozen result dataclasses."""

    def to_dict(self) -> dict:
        return _plain(self)


def _plain(value):
    """JSON-ready copy: dataclasses become dicts, tuples lists (`dataclasses.asdict` would also
    deep-copy every leaf, which costs more than the metrics themselves)."""
    if hasattr(value, "__dataclass_fields__"):
        return {name: _plain(getattr(value, name)) for name in value.__dataclass_fields__}
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    return value


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


def has_final_answer(final_answer: str | None) -> bool:
    """An empty `stop []` gives nothing to judge, so it counts as no final answer."""
    return final_answer is not None and final_answer.strip() != ""
