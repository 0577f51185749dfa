"""What every metric result shares, and the checks on what callers pass in.

Results are frozen dataclasses so a computed score cannot drift from the inputs that explain
it; `to_dict()` gives the plain JSON that TrajectoryScore.details stores. Step numbers in
results are 1-based, like `Step.index` and `GoldStep.index`.
"""

from judges.matching import check_count, check_score, check_tau  # noqa: F401  (the checks every metric applies)

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


def has_final_answer(final_answer: str | None) -> bool:
    """An empty `stop []` gives nothing to judge, so it counts as no final answer."""
    return final_answer is not None and final_answer.strip() != ""
