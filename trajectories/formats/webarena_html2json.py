"""WebArena's `scripts/html2json.py` output: `{"example_<id>": {..., "messages": [...], "success": ...}}`.

That script keeps each step's URL, observation and raw model output but drops the executed
action (`parsed_action`), keeping it only where the model output was empty, i.e. for the
harness's forced stops. The executed action is therefore the action the reasoning states when
it is in the action grammar (a `type` completed with the harness's default Enter flag `[1]`),
else `none` (the harness could not have parsed it either). Its
image paths point at files the script never writes, so screenshots are not taken.
"""

import re
from collections.abc import Iterator

from .actions import extract_planned_action, parse_action, with_enter_flag
from .agent_steps import action_parts, agent_outcome, forced_stop
from .canonical import Step, TaskRef, Trajectory, TrajectoryFormatError

FORMAT = "webarena_html2json"
NOTE = "html2json keeps no executed actions: each step's action is the one its reasoning states"
_KEY = re.compile(r"example_(\w+)\Z")
_OBSERVATION_SEPARATOR = "\n\nobservation:\n"


def looks_like_html2json(document: object) -> bool:
    return isinstance(document, dict) and bool(document) and all(_KEY.match(str(key)) for key in document)


def _message_text(message: object, role: str, where: str) -> str:
    if not isinstance(message, dict) or not isinstance(message.get(role), str):
        raise TrajectoryFormatError(f"expected an object with a string '{role}'", where=where)
    return message[role]


def parse_example(key: str, example: object) -> Trajectory:
    if not isinstance(example, dict):
        raise TrajectoryFormatError("expected an object", where=key)
    messages = example.get("messages")
    if not isinstance(messages, list):
        raise TrajectoryFormatError("expected a list of messages", where=f"{key}.messages")
    if len(messages) % 2:
        raise TrajectoryFormatError("expected user/assistant pairs, got an odd number of messages",
                                    where=f"{key}.messages")

    steps: list[Step] = []
    stopped_by_harness = None
    for position in range(0, len(messages), 2):
        page = _message_text(messages[position], "user", f"{key}.messages[{position}]")
        reasoning = _message_text(messages[position + 1], "assistant", f"{key}.messages[{position + 1}]")
        stopped_by_harness = forced_stop(reasoning)
        if stopped_by_harness is not None:
            break
        heading, _, observation = page.partition(_OBSERVATION_SEPARATOR)
        planned = extract_planned_action(reasoning)
        action = with_enter_flag(planned) if planned and parse_action(planned).valid else "none"
        steps.append(
            Step(
                index=len(steps) + 1,
                action=action,
                url=heading.strip().removeprefix("URL:").strip(),
                observation=observation,
                reasoning=reasoning,
                planned_action=planned,
                prev_action=steps[-1].action if steps else "",
                action_parts=action_parts(action, observation),
            )
        )

    outcome, final_answer = agent_outcome(steps, stopped_by_harness)
    success = example.get("success")
    outcome.success = success if isinstance(success, bool) else None
    intent = example.get("intent")
    return Trajectory(
        task=TaskRef(task_id=str(example.get("task_id", _KEY.match(key).group(1))),
                     intent=intent if isinstance(intent, str) else ""),
        steps=steps,
        outcome=outcome,
        final_answer=final_answer,
    )


def parse_html2json(document: dict) -> Iterator[tuple[str, Trajectory | TrajectoryFormatError]]:
    """Each example as (its key, its trajectory or the error that stopped it), in file order."""
    for key, example in document.items():
        try:
            yield key, parse_example(key, example)
        except TrajectoryFormatError as error:
            yield key, error
