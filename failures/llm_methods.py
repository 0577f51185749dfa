"""The three ways Who&When asks an LLM for a failure's decisive step (Django-free), each walking a
failed trajectory's log with the questions of `judges.attribution`:

- **all at once**: one request naming step, agent, type and reason.
- **step by step**: the log up to step 1, 2, ... until the first step judged decisive; the agent is
  that step's speaker. No step judged decisive: no attribution.
- **binary search**: the part of the log still in question cut in two, the half named kept, until
  one step is left: ceil(log2 n) requests for n steps; the agent is that step's speaker, the type
  and reason those of the last answer. A log of one step needs no request (and names no type).

`ask(question)` answers one question with its answer's fields (the schema's reading), or raises
Unanswered naming why (the request failed, or its answer could not be read after one repair).
"""

from collections.abc import Callable
from dataclasses import dataclass

from judges import attribution
from judges.questions import Question

ALL_AT_ONCE, STEP_BY_STEP, BINARY_SEARCH = "all_at_once", "step_by_step", "binary_search"
METHODS = {ALL_AT_ONCE: "all at once", STEP_BY_STEP: "step by step", BINARY_SEARCH: "binary search"}


class Unanswered(Exception):
    """A question of the walk got no usable answer: the trajectory stays without an attribution."""


@dataclass(frozen=True)
class Case:
    """What every question about one failed trajectory shows: `steps` as `attribution.shown_step`."""

    task: str
    reference: str
    steps: list[dict]
    types: list[dict]


@dataclass(frozen=True)
class Found:
    step: int | None  # None: the method named no step (step by step found none decisive)
    agent: str = ""
    failure_type: str = ""
    reason: str = ""
    requests: int = 0  # questions asked (cached or not)


Ask = Callable[[Question], dict]


def _agent(case: Case, number: int) -> str:
    return next(step["agent"] for step in case.steps if step["step"] == number)


def all_at_once(case: Case, ask: Ask) -> Found:
    answer = ask(attribution.whole_question(case.task, case.reference, case.steps, case.types))
    return Found(answer["step"], answer["agent"], answer["failure_type"], answer["reason"], 1)


def step_by_step(case: Case, ask: Ask) -> Found:
    for count in range(1, len(case.steps) + 1):
        answer = ask(attribution.step_question(case.task, case.reference, case.steps[:count], case.types))
        if answer["decisive"]:
            step = case.steps[count - 1]
            return Found(step["step"], step["agent"], answer["failure_type"], answer["reason"], count)
    return Found(None, reason=f"none of the {len(case.steps)} steps was judged decisive", requests=len(case.steps))


def binary_search(case: Case, ask: Ask) -> Found:
    shown, answer, requests = case.steps, None, 0
    while len(shown) > 1:
        answer = ask(attribution.halves_question(case.task, case.reference, shown, case.types))
        requests += 1
        first, second = attribution.halves(shown)
        shown = first if answer["half"] == attribution.FIRST else second
    number = shown[0]["step"]
    if answer is None:
        return Found(number, _agent(case, number), "", "the log has one step", 0)
    return Found(number, _agent(case, number), answer["failure_type"], answer["reason"], requests)


WALKS = {ALL_AT_ONCE: all_at_once, STEP_BY_STEP: step_by_step, BINARY_SEARCH: binary_search}


def attribute(method: str, case: Case, ask: Ask) -> Found:
    """The method's decisive step of a failed trajectory with at least one step."""
    if not case.steps:
        raise ValueError("a trajectory without steps has no decisive step")
    return WALKS[method](case, ask)
