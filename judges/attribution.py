"""The questions an LLM is asked to name why a trajectory failed (Django-free), one kind per
method Who&When compares (Zhang et al., ICML 2025):

- **All at once** (`WHOLE`): the whole log in one request; the answer names the decisive step, the
  responsible agent, the failure type and why.
- **Step by step** (`STEP`): the log up to step i, asked whether step i is the decisive error; the
  caller walks i = 1, 2, ... and stops at the first step judged decisive.
- **Binary search** (`HALVES`): a part of the log cut in two halves, asked which half holds the
  decisive error; the caller halves again until one step is left.

Every question carries the task, its reference answer when the task has one, the failure types to
choose from (key, name, definition) and the steps shown, each step as its number, its agent and
its text cut to STEP_HEAD + STEP_TAIL characters. Answers are read by their schemas
(`judges.schema`), with the step numbers, agents and type keys of the request as their bounds.
"""

from .questions import Question

WHOLE = "attribution_whole"
STEP = "attribution_step"
HALVES = "attribution_halves"
KINDS = (WHOLE, STEP, HALVES)
FIRST, SECOND = "first", "second"

STEP_HEAD = 1_200
STEP_TAIL = 300
NO_REFERENCE = "(not given)"


def step_text(text: str) -> str:
    """A step's text as shown to the model: its head and tail when it is long."""
    text = text.strip()
    if len(text) <= STEP_HEAD + STEP_TAIL:
        return text
    cut = len(text) - STEP_HEAD - STEP_TAIL
    return f"{text[:STEP_HEAD]}\n[... {cut} characters cut ...]\n{text[-STEP_TAIL:]}"


def shown_step(number: int, agent: str, text: str) -> dict:
    return {"step": number, "agent": agent, "text": step_text(text)}


def _common(task: str, reference: str, steps: list[dict], types: list[dict]) -> dict:
    return {"task": task.strip(), "reference": reference.strip(), "steps": steps,
            "types": [{"key": item["key"], "name": item["name"], "definition": item["definition"]} for item in types]}


def whole_question(task: str, reference: str, steps: list[dict], types: list[dict]) -> Question:
    return Question(WHOLE, _common(task, reference, steps, types))


def step_question(task: str, reference: str, steps: list[dict], types: list[dict]) -> Question:
    """Is the last of `steps` (the log up to it) the decisive error?"""
    return Question(STEP, _common(task, reference, steps, types))


def halves_question(task: str, reference: str, steps: list[dict], types: list[dict]) -> Question:
    """Which half of `steps` (a part of the log, at least two steps) holds the decisive error? The
    first half is the first ceil(len / 2) steps."""
    if len(steps) < 2:
        raise ValueError("a binary search question needs at least two steps")
    return Question(HALVES, _common(task, reference, steps, types))


def halves(steps: list[dict]) -> tuple[list[dict], list[dict]]:
    middle = (len(steps) + 1) // 2
    return steps[:middle], steps[middle:]


def agents_of(steps: list[dict]) -> list[str]:
    """The agents that speak in the steps, in order of first appearance; [""] when none is named."""
    return list(dict.fromkeys(step["agent"] for step in steps if step["agent"])) or [""]


def bounds(question: Question) -> dict:
    """The answer schema's bounds of one question: its step numbers, agents and failure type keys."""
    steps = question.inputs["steps"]
    return {"steps": [step["step"] for step in steps], "agents": agents_of(steps),
            "types": [item["key"] for item in question.inputs["types"]], "halves": [FIRST, SECOND]}


def _render(steps: list[dict]) -> str:
    return "\n\n".join(f"Step {step['step']} ({step['agent'] or 'agent'}):\n{step['text'] or '(empty)'}"
                       for step in steps)


def _range(steps: list[dict]) -> str:
    return f"steps {steps[0]['step']} to {steps[-1]['step']}" if len(steps) > 1 else f"step {steps[0]['step']}"


def prompt_fields(question: Question) -> dict:
    """The prompt's fields for a question of one of KINDS."""
    inputs = question.inputs
    fields = {"task": inputs["task"], "reference": inputs["reference"] or NO_REFERENCE,
              "types": "\n".join(f"- {item['key']}: {item['name']}. {item['definition']}" for item in inputs["types"]),
              "agents": ", ".join(agent for agent in agents_of(inputs["steps"]) if agent) or "(not named)",
              "log": _render(inputs["steps"])}
    if question.kind == STEP:
        fields["step"] = str(inputs["steps"][-1]["step"])
    if question.kind == HALVES:
        first, second = halves(inputs["steps"])
        fields.update(first=_range(first), second=_range(second))
    return fields
