"""Mind2Web human demonstrations as gold: `[{website, task, actions: [[op, "[tag]", text]]}]`.

Each entry is a task of the `mind2web` benchmark (intent = `task`, site = `website`) and one
gold trajectory of structured steps: `CLICK`, `HOVER` and `ENTER` (a press of Enter), and
`TYPE: value` / `SELECT: value`; the bracketed tag is the element's role, the text its name.
A task's id is the entry's `annotation_id` when the file has one (upstream Mind2Web does),
else a digest of website and task, so importing the same file again finds the same tasks.
Django-free; `formats.read_gold_bytes` hands JSON of this shape here.
"""

import hashlib
import re

from trajectories.formats.canonical import TASK_ID_MAX_LENGTH
from trajectories.formats.webarena_tasks import TaskConfig

from .gold_records import GoldBlock, GoldFile, GoldFormatError, GoldStepRecord
from .sentences import step_sentence

BENCHMARK = "mind2web"
FORMAT = "mind2web"
MAX_PROBLEMS = 20
_OPERATION = re.compile(r"\A(CLICK|HOVER|ENTER|TYPE|SELECT)(?::\s?(.*))?\Z", re.DOTALL)
_ACTION_TYPE = {"CLICK": "click", "HOVER": "hover", "ENTER": "press", "TYPE": "type", "SELECT": "select"}
_TAG = re.compile(r"\A\[([^\[\]]*)\]\Z")


def is_mind2web_actions(document) -> bool:
    """A list whose first object has `website`, `task` and `actions`."""
    if not isinstance(document, list) or not document:
        return False
    first = document[0]
    return isinstance(first, dict) and {"website", "task", "actions"} <= first.keys()


def task_id_of(entry: dict) -> str:
    annotation_id = entry.get("annotation_id")
    if isinstance(annotation_id, str) and annotation_id.strip():
        return annotation_id.strip()
    digest = hashlib.sha256(f"{entry['website']}\n{entry['task']}".encode()).hexdigest()
    return f"m2w-{digest[:16]}"


def _step(action, number: int, entry: str, problems: list[str]) -> GoldStepRecord | None:
    field = f"actions[{number - 1}]"
    if not isinstance(action, list) or len(action) != 3 or not all(isinstance(part, str) for part in action):
        problems.append(f"{entry}: field '{field}': expected [operation, \"[tag]\", text], three strings")
        return None
    operation, tag, text = action
    match = _OPERATION.match(operation.strip())
    if not match:
        problems.append(f"{entry}: field '{field}[0]': unknown operation {operation!r} "
                        "(known: CLICK, HOVER, ENTER, TYPE: v, SELECT: v)")
        return None
    op, value = match.group(1), (match.group(2) or "").strip()
    if op in ("TYPE", "SELECT") and match.group(2) is None:
        problems.append(f"{entry}: field '{field}[0]': {op} needs its value, as '{op}: value'")
        return None
    tag_match = _TAG.match(tag.strip())
    if not tag_match:
        problems.append(f"{entry}: field '{field}[1]': expected the element's tag in brackets, e.g. \"[button]\", "
                        f"got {tag!r}")
        return None
    action_type = _ACTION_TYPE[op]
    if op == "ENTER":
        value = "Enter"
    role, name = tag_match.group(1).strip(), text.strip()
    return GoldStepRecord(text=step_sentence(action_type, role, name, value), label=str(number),
                          action_type=action_type, element_role=role, element_name=name, value=value)


def read_mind2web_actions(document: list) -> GoldFile:
    """GoldFile of `mind2web` blocks with the tasks they belong to in `tasks`; GoldFormatError names entry and field."""
    result, problems, seen = GoldFile(format=FORMAT), [], {}
    for position, entry in enumerate(document):
        where = f"entry {position + 1}"
        if not isinstance(entry, dict):
            problems.append(f"{where}: expected an object")
            continue
        entry_problems = []
        for name in ("website", "task"):
            if not isinstance(entry.get(name), str) or not entry[name].strip():
                entry_problems.append(f"{where}: field '{name}': expected a non-empty string")
        if "annotation_id" in entry and not isinstance(entry["annotation_id"], str):
            entry_problems.append(f"{where}: field 'annotation_id': expected a string")
        actions = entry.get("actions")
        if not isinstance(actions, list) or not actions:
            entry_problems.append(f"{where}: field 'actions': expected a non-empty list of actions")
            actions = []
        steps = [_step(action, index + 1, where, entry_problems)
                 for index, action in enumerate(actions)]
        if entry_problems:
            problems.extend(entry_problems)
            continue
        task_id = task_id_of(entry)
        if len(task_id) > TASK_ID_MAX_LENGTH:
            problems.append(f"{where}: field 'annotation_id': longer than {TASK_ID_MAX_LENGTH} characters")
            continue
        if task_id in seen:
            problems.append(f"{where}: the same task as entry {seen[task_id]} (task id {task_id})")
            continue
        seen[task_id] = position + 1
        result.tasks.append(TaskConfig(
            benchmark=BENCHMARK, task_id=task_id, number=None, old_task_id="", intent=entry["task"].strip(),
            intent_template="", intent_template_id=None, instantiation={}, sites=[entry["website"].strip()],
            start_url="", require_login=False, require_reset=False, eval_types=[], eval_config={},
            config={key: value for key, value in entry.items() if key != "actions"},
        ))
        result.blocks.append(GoldBlock(
            task_id=task_id, benchmark=BENCHMARK, where=where, steps=steps,
            rows=[f"{where} actions[{index}]" for index in range(len(steps))],
        ))
    if problems:
        more = len(problems) - MAX_PROBLEMS
        raise GoldFormatError("; ".join(problems[:MAX_PROBLEMS]) + (f"; and {more} more" if more > 0 else ""))
    return result
