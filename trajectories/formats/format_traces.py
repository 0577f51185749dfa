"""WebArena `format_traces/<id>.json` and `format_traces/task_<id>/<id>.json`.

Some harness forks write, beside the render files, the prompt and the model's raw output of
every step (`{"instruction", "input", "output"}` records, kept for fine-tuning), ending with the
harness verdict: `{"result": "PASS" | "FAIL"}` or `{"meta_data": {"intent", "result"}}`. Such a
file is not a trajectory: it gives the task's verdict and the model output of each of its steps.
The task id is only in the file's name.
"""

import posixpath
import re
from dataclasses import dataclass, field

from .agent_steps import forced_stop
from .canonical import TASK_ID_MAX_LENGTH, TrajectoryFormatError

FORMAT = "webarena_format_trace"
_RECORD_KEYS = frozenset({"instruction", "input", "output"})
_TASK_FOLDER = re.compile(r"task_(\w+)\Z")
_TASK_FILE = re.compile(r"(\w+)\.json\Z", re.I)


@dataclass
class HarnessTrace:
    """One task's prompt/response trace: its harness verdict and the model output of each step."""

    task_id: str
    success: bool | None
    model_outputs: list[str] = field(default_factory=list)
    intent: str = ""
    verdict_field: str = ""


def looks_like_trace(document: object) -> bool:
    """A JSON list of prompt/response records and/or a final verdict object, and nothing else."""
    if not isinstance(document, list) or not document or not all(isinstance(item, dict) for item in document):
        return False
    *records, last = document
    return all(item.keys() & _RECORD_KEYS for item in records) and bool(
        last.keys() & (_RECORD_KEYS | {"result", "meta_data"})
    )


def task_id_from_name(name: str) -> str:
    """`3` from `format_traces/3.json` or `format_traces/task_3/3.json` (the folder wins); '' if neither."""
    folder = _TASK_FOLDER.match(posixpath.basename(posixpath.dirname(name)))
    found = folder or _TASK_FILE.match(posixpath.basename(name))
    task_id = found.group(1) if found else ""
    return task_id if len(task_id) <= TASK_ID_MAX_LENGTH else ""


def _verdict(value: object, where: str) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().upper() in ("PASS", "FAIL"):
        return value.strip().upper() == "PASS"
    raise TrajectoryFormatError(f'expected "PASS" or "FAIL", got {str(value)[:40]!r}', where=where)


def parse_trace(document: list, name: str) -> HarnessTrace:
    """The trace in `document` (see `looks_like_trace`), for the task named by the file `name`."""
    task_id = task_id_from_name(name)
    if not task_id:
        raise TrajectoryFormatError("no task id in the file name (expected <id>.json or task_<id>/<id>.json)")
    *records, last = document
    success, intent, verdict_field = None, "", ""
    if "meta_data" in last:
        meta = last["meta_data"]
        where = f"[{len(records)}].meta_data"
        if not isinstance(meta, dict) or "result" not in meta:
            raise TrajectoryFormatError('expected an object with "intent" and "result"', where=where)
        success, verdict_field = _verdict(meta["result"], f"{where}.result"), "meta_data.result"
        intent = meta.get("intent") if isinstance(meta.get("intent"), str) else ""
    elif "result" in last:
        success, verdict_field = _verdict(last["result"], f"[{len(records)}].result"), "result"
    else:
        records.append(last)
    outputs = []
    for position, record in enumerate(records):
        output = record.get("output", "")
        if not isinstance(output, str):
            raise TrajectoryFormatError("expected the model output as a string", where=f"[{position}].output")
        outputs.append(output)
    return HarnessTrace(task_id=task_id, success=success, model_outputs=outputs, intent=intent,
                        verdict_field=verdict_field)


def align_outputs(outputs: list[str], step_count: int, stop_message: str) -> list[str] | None:
    """The model output of each agent step, by order, or None when the two cannot be aligned.

    The harness writes a record for its own forced stop, which ends the steps instead of being
    one (see `agent_steps.forced_stop`); that last record is dropped when the trajectory ended so.
    """
    if stop_message and len(outputs) == step_count + 1 and forced_stop(outputs[-1]) is not None:
        outputs = outputs[:-1]
    return list(outputs) if len(outputs) == step_count else None
