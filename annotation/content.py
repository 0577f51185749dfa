"""What an annotator writes into one gold trajectory, checked before anything is stored."""

from dataclasses import dataclass, field, replace

from .errors import GoldValidationError
from .gold_records import GoldStepRecord
from .sentences import ACTION_TYPES, step_sentence

MAX_ROLE_LENGTH = 64
MAX_LABEL_LENGTH = 32


@dataclass
class GoldContent:
    steps: list[GoldStepRecord] = field(default_factory=list)
    cannot_complete: bool = False
    cannot_complete_reason: str = ""
    final_answer: str = ""


def clean_content(content: GoldContent) -> GoldContent:
    """Trimmed content, with the sentence filled in for structured steps written without text.

    Raises GoldValidationError naming every bad field. A draft may be incomplete (no steps, or
    "cannot complete" without its reason yet); `check_submittable` is the stricter test.
    """
    errors: dict[str, str] = {}
    steps = []
    for position, step in enumerate(content.steps):
        where = f"steps[{position}]"
        step = replace(
            step,
            text=step.text.strip(),
            label=str(step.label).strip(),
            action_type=step.action_type.strip().lower(),
            element_role=step.element_role.strip(),
            element_name=step.element_name.strip(),
            value=step.value.strip(),
        )
        if step.action_type and step.action_type not in ACTION_TYPES:
            errors[f"{where}.action_type"] = (
                f"unknown action type {step.action_type!r}; expected one of {', '.join(ACTION_TYPES)}"
            )
        elif step.action_type and not step.text:
            step.text = step_sentence(step.action_type, step.element_role, step.element_name, step.value)
        if not step.text:
            errors[f"{where}.text"] = "a step needs its text (or an action type to write it from)"
        if len(step.element_role) > MAX_ROLE_LENGTH:
            errors[f"{where}.element_role"] = f"at most {MAX_ROLE_LENGTH} characters"
        if len(step.label) > MAX_LABEL_LENGTH:
            errors[f"{where}.label"] = f"at most {MAX_LABEL_LENGTH} characters"
        steps.append(step)
    if errors:
        raise GoldValidationError(errors)
    return GoldContent(
        steps=steps,
        cannot_complete=bool(content.cannot_complete),
        cannot_complete_reason=content.cannot_complete_reason.strip() if content.cannot_complete else "",
        final_answer=content.final_answer.strip(),
    )


def check_submittable(content: GoldContent) -> None:
    if content.cannot_complete:
        if not content.cannot_complete_reason:
            raise GoldValidationError({"cannot_complete_reason": "say why the task cannot be completed"})
    elif not content.steps:
        raise GoldValidationError({"steps": "record at least one step, or mark the task as cannot be completed"})
