"""What the gold checks read and say (Django-free): plain task and gold records in, findings out."""

from dataclasses import dataclass

# The kinds of finding, one per check (the fit checks' first).
OTHER_TASK = "other_task"
SIBLING_VALUES = "sibling_values"
POOR_FIT = "poor_fit"
WORSE_VERSION = "worse_version"
DUPLICATE = "duplicate"
TOO_SHORT = "too_short"
TOO_LONG = "too_long"
ONE_STEP = "one_step"
MISSING_VALUES = "missing_values"


@dataclass(frozen=True)
class TaskRecord:
    pk: int
    task_id: str
    intent: str
    template_id: int | None = None
    slots: tuple[tuple[str, str], ...] = ()  # the template's values for this task: (name, value)


def template_slots(instantiation) -> tuple[tuple[str, str], ...]:
    """A task's template values that a gold could type (text and numbers, not lists), as TaskRecord.slots."""
    if not isinstance(instantiation, dict):
        return ()
    return tuple((str(name), str(value)) for name, value in instantiation.items()
                 if isinstance(value, str | int) and not isinstance(value, bool))


@dataclass(frozen=True)
class GoldRecord:
    pk: int
    task_pk: int
    steps: tuple[str, ...]
    cannot_complete: bool = False


@dataclass(frozen=True)
class Finding:
    """A finding names its gold, what is wrong and a key that tells it apart from the gold's other
    findings of the same kind, so that storing the findings of a later run updates the same flags."""

    gold_pk: int
    kind: str
    key: str
    message: str
    related_gold_pk: int | None = None
    related_task_pk: int | None = None
    confidence: float | None = None  # orders the flags of the fit checks; None where a check has no measure
