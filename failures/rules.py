"""Offline rules that name a failed trajectory's decisive step without gold (Django-free): a
documented baseline for the attribution sources that cost something.

In order, the first that applies:
1. **First error**: the first step whose text reports a failure (an error, exception, traceback,
   non-zero exit code, "failed", "not found", "timed out"). A tool's output (a speaker named like a
   terminal, computer or tool) reports the failure of the step before it, which is named instead.
2. **Loop**: the first step that the next two steps repeat exactly (the same action on the same
   element with the same value, and for messages the same text): the start of the loop.
3. **Before the answer**: the step before the last, where the agent settled the answer it gave.
"""

import re
from collections.abc import Sequence
from dataclasses import dataclass

RULES_NAME = "offline rules"
RULES_VERSION = "rules/v1"
FIRST_ERROR, LOOP, BEFORE_ANSWER = "first_error", "loop", "before_answer"
_ERROR = re.compile(r"\b(error|exception|traceback|exit ?code:? ?[1-9]\d*|failed|not found|timed? ?out)\b",
                    re.IGNORECASE)
_TOOL = re.compile(r"terminal|computer|tool", re.IGNORECASE)
_LOOP_REPEATS = 2


@dataclass(frozen=True)
class StepText:
    """What the rules read of one step."""

    index: int
    action: str
    agent: str = ""
    action_type: str = ""
    element: str = ""
    value: str = ""
    text: str = ""  # the step's reasoning and page text, or the message


@dataclass(frozen=True)
class RuleAttribution:
    step: int
    agent: str
    rule: str
    reason: str


def _first_error(steps: Sequence[StepText]) -> RuleAttribution | None:
    for position, step in enumerate(steps):
        found = _ERROR.search(step.text) or _ERROR.search(step.action)
        if not found:
            continue
        if _TOOL.search(step.agent) and position > 0:
            cause = steps[position - 1]
            return RuleAttribution(cause.index, cause.agent, FIRST_ERROR,
                                   f"step {step.index} ({step.agent}) reports {found.group(0)!r} of this step's work")
        return RuleAttribution(step.index, step.agent, FIRST_ERROR, f"the step reports {found.group(0)!r}")
    return None


def _key(step: StepText) -> tuple:
    return (step.action, step.action_type, step.element, step.value,
            step.text if step.action_type == "message" else "")


def _loop(steps: Sequence[StepText]) -> RuleAttribution | None:
    for position in range(len(steps) - _LOOP_REPEATS):
        key = _key(steps[position])
        if all(_key(steps[position + offset]) == key for offset in range(1, _LOOP_REPEATS + 1)):
            step = steps[position]
            return RuleAttribution(step.index, step.agent, LOOP,
                                   f"steps {step.index} to {step.index + _LOOP_REPEATS} repeat the same action")
    return None


def attribute(steps: Sequence[StepText]) -> RuleAttribution | None:
    """The rules' decisive step of a failed trajectory; None for one without steps."""
    if not steps:
        return None
    found = _first_error(steps) or _loop(steps)
    if found:
        return found
    step = steps[-2] if len(steps) > 1 else steps[-1]
    return RuleAttribution(step.index, step.agent, BEFORE_ANSWER,
                           "the step before the last, where the answer was settled")
