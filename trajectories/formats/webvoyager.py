"""WebVoyager task folders (github.com/MinorJerry/WebVoyager): `task<id>/interact_messages.json`
and `screenshot<N>.png`.

The messages are the chat with the model: a system prompt, the task in the first user message
(`Now given a task: <question>  Please interact with <site> and get the answer.`), then one
assistant message per iteration (`Thought: ... Action: ...`), each answering the observation
before it. The i-th assistant message is step i and `screenshot<i>.png` what it was shown.
Actions name the set-of-marks labels drawn on that screenshot (`Click [5]`): the label is kept
as the element id, named by the observation's list of labelled elements (`[5]: <button> "Search"`)
where the message before it has one (WebVoyager omits it from older messages: those steps name
none).
"""

import re
from collections.abc import Callable

from .canonical import (
    TASK_ID_MAX_LENGTH,
    ActionParts,
    Outcome,
    RunInfo,
    Step,
    TaskRef,
    Trajectory,
    TrajectoryFormatError,
)

FORMAT = "webvoyager_messages"
BENCHMARK = "webvoyager"
GOOGLE = "https://www.google.com/"

_TASK = re.compile(
    r"Now given a task:\s*(?P<question>.*?)\s*Please interact with\s+(?P<site>\S+?)\s+and get the answer", re.S)
_THOUGHT = re.compile(r"Thought:\s*(?P<thought>.*?)\s*(?=Action:|\Z)", re.S)
_ACTION = re.compile(r"Action:\s*(?P<action>.*)\Z", re.S)
# The harness's own patterns (run.py), anchored at the action's start.
_CLICK = re.compile(r"\AClick\s*\[?(\d+)\]?", re.I)
_TYPE = re.compile(r"\AType\s*\[?(\d+)\]?[; ]+\[?(.[^\]]*)\]?", re.I | re.S)
_SCROLL = re.compile(r"\AScroll\s*\[?(\d+|WINDOW)\]?[; ]+\[?(up|down)\]?", re.I)
_ANSWER = re.compile(r"\AANSWER[; ]+(.+)\Z", re.I | re.S)
_OMITTED = "(Omitted in context.)"


def _content_text(content) -> str:
    """A message's text: a string, or the text parts of a multimodal content list."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(part["text"] for part in content
                         if isinstance(part, dict) and isinstance(part.get("text"), str))
    return ""


def looks_like_interact_messages(document: object) -> bool:
    if not isinstance(document, list) or not document:
        return False
    if not all(isinstance(message, dict) and "role" in message and "content" in message for message in document):
        return False
    return any(message["role"] == "assistant" and "Action:" in _content_text(message["content"])
               for message in document)


def mark_label(observation: str, label: str) -> str:
    """What the observation lists for set-of-marks label `label` (`[5]: <button> "Search"`), if anything."""
    if not label:
        return ""
    match = re.search(rf"(?:\A|\s)\[{re.escape(label)}\]:[ \t]*(?P<text>[^\t\n]*?);?(?=\t|\n|\Z)", observation)
    return match.group("text").strip() if match else ""


def action_parts(action: str, observation: str = "") -> ActionParts:
    """A WebVoyager action in the platform's action kinds; `Type` is followed by Enter by the harness.
    The element is its set-of-marks label, named as the step's observation lists it, where it does."""
    text = action.strip()
    if match := _CLICK.match(text):
        mark = match.group(1)
        return ActionParts(type="click", element_id=mark, element_label=mark_label(observation, mark))
    if match := _TYPE.match(text):
        mark = match.group(1)
        return ActionParts(type="type", element_id=mark, element_label=mark_label(observation, mark),
                           value=match.group(2).strip(), press_enter=True)
    if match := _SCROLL.match(text):
        target = "" if match.group(1).upper() == "WINDOW" else match.group(1)
        return ActionParts(type="scroll", element_id=target, element_label=mark_label(observation, target),
                           value=match.group(2).lower())
    if match := _ANSWER.match(text):
        # The whole answer, brackets inside it too; only a pair around all of it is the format's.
        answer = match.group(1).strip()
        if answer.startswith("[") and answer.endswith("]"):
            answer = answer[1:-1].strip()
        return ActionParts(type="stop", value=answer)
    word = text.split(maxsplit=1)[0].lower() if text else ""
    if word == "goback":
        return ActionParts(type="go_back")
    if word == "google":
        return ActionParts(type="goto", value=GOOGLE)
    # `Wait` (five seconds) and anything the harness could not parse change nothing.
    return ActionParts(type="none")


def _task(name: str, first_user: str) -> TaskRef:
    parts = [part for part in name.replace("\\", "/").split("/") if part]
    folder = parts[-2] if len(parts) > 1 else ""
    task_id = folder[len("task"):] if folder.startswith("task") and len(folder) > len("task") else folder
    if not task_id:
        raise TrajectoryFormatError("no task id: WebVoyager names it in the folder, task<id>/interact_messages.json",
                                    where="(file name)")
    if len(task_id) > TASK_ID_MAX_LENGTH:
        raise TrajectoryFormatError(f"task id longer than {TASK_ID_MAX_LENGTH} characters", where="(file name)")
    match = _TASK.search(first_user)
    intent = match.group("question") if match else first_user.split("Observation:", 1)[0].strip()
    return TaskRef(task_id=task_id, benchmark=BENCHMARK, intent=intent)


def _observation(text: str) -> str:
    """The page elements a user message lists after `Observation:`, unless WebVoyager left them out."""
    observation = text.split("Observation:", 1)[1] if "Observation:" in text else ""
    return "" if _OMITTED in observation else observation.strip()


def parse_interact_messages(document: list, name: str, read_sibling: Callable[[str], bytes]
                            ) -> tuple[Trajectory, list[str]]:
    """The trajectory of `task<id>/interact_messages.json`, and notes on screenshots not found."""
    notes: list[str] = []
    first_user = next((_content_text(m["content"]) for m in document if m["role"] == "user"), "")
    task = _task(name, first_user)
    steps, observation = [], ""
    for position, message in enumerate(document):
        text = _content_text(message["content"])
        if message["role"] == "user":
            observation = _observation(text)
            continue
        if message["role"] != "assistant":
            continue
        index = len(steps) + 1
        thought, action = _THOUGHT.search(text), _ACTION.search(text)
        executed = action.group("action").strip() if action else ""
        screenshot = f"screenshot{index}.png"
        try:
            read_sibling(screenshot)
        except (OSError, ValueError):
            notes.append(f"step {index}: {screenshot} is not beside interact_messages.json")
            screenshot = None
        steps.append(Step(
            index=index,
            action=executed,
            observation=observation,
            reasoning=thought.group("thought").strip() if thought else text.strip(),
            screenshot=screenshot,
            action_parts=action_parts(executed, observation),
        ))
    last = steps[-1].action_parts if steps else None
    if last is not None and last.type == "stop":
        outcome, answer = Outcome(status="answered"), last.value
    else:
        outcome, answer = Outcome(status="no_stop" if steps else "crashed"), None
    return Trajectory(task=task, steps=steps, outcome=outcome, run=RunInfo(agent="WebVoyager"),
                      final_answer=answer), notes
