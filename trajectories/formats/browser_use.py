"""browser-use `AgentHistoryList` JSON (`agent.save_history()`, `history.json`), in both layouts.

Before early 2025 each history item holds `model_output.current_state` (evaluation, memory, next
goal), one action object, one result and a `state` with the page's base64 screenshot and its
indexed elements (`items`); after, `model_output` carries `thinking`, `evaluation_previous_goal`,
`memory`, `next_goal` and a list of actions, `result` is a list, and `state` names the clicked
element (`interacted_element`) and the screenshot file by the absolute path of the machine that ran
the agent (`screenshot_path`): it is looked up inside the upload by its file name only.

Each action of a model output is an agent step (browser-use runs several in one step when the
model gives several; see `canonical.one_step_per_action`): its action is the action as JSON
(`{"click": {"index": 459}}`), its parts the element it used (index, name, XPath), the point a
click landed on and what it typed, scrolled or went to.
A `done` action is the final answer; its `success` is the agent's word about itself, kept as a
verdict of kind `agent_self_report`, never as the harness's. WebArena-Infinity writes a
`result.json` beside the history with its verifier's verdict, the harness verdict of record; the
task is then that file's (`task_id`, `instruction`) in the benchmark `webarena-infinity`. Its apps
number their tasks alike (each has a `task_e1`) and the files do not name the app: a task id met
again with other text is reported as such by the import. The run folder's `results.json` is the
harness's summary of all its tasks (`parse_infinity_summary`), read as the verifier's verdicts of
the tasks whose folders are not uploaded. A history alone names no task: its folder
(or its file, unless generically named; a generically named file alone, a digest of its content) is the
task id, in the benchmark `browser-use`, and the task text is the history's `task`, else the request
the agent was shown, where the history keeps either.
"""

import hashlib
import json
import posixpath
import re
import urllib.parse
from collections.abc import Callable

from .agent_steps import is_not_available
from .canonical import (
    TASK_ID_MAX_LENGTH,
    ActionParts,
    Outcome,
    RunInfo,
    RunSummary,
    Step,
    SummaryEntry,
    TaskRef,
    Trajectory,
    TrajectoryFormatError,
    Verdict,
    check_depth,
    one_step_per_action,
)
from .text import decode_utf8
from .values import flag, lenient_number, lenient_quantity, lenient_text, load_json

FORMAT = "browser_use_history"
INFINITY_RESULT_FORMAT = "webarena_infinity_result"
INFINITY_SUMMARY_FORMAT = "webarena_infinity_summary"
BENCHMARK = "browser-use"
INFINITY_BENCHMARK = "webarena-infinity"
INFINITY_SOURCE = "WebArena-Infinity verifier"
SELF_REPORT = "agent self-report"
BROWSER_USE_JUDGE = "browser-use judge"
# Beside a history, the harness's result: WebArena-Infinity writes `result.json`, some runners `results.json`.
RESULT_FILES = ("result.json", "results.json")
HISTORY_FILES = ("history.json", "AgentHistoryList.json", "agent_history.json")
_INFINITY_KEYS = frozenset({"task_id", "instruction", "passed", "verifier_message"})
# File names that say nothing of the task: the folder holding them names it instead.
_GENERIC_STEMS = frozenset({"history", "agenthistorylist", "agent_history", "agenthistory"})
_SEARCH_URLS = {
    "google": "https://www.google.com/search?q=",
    "bing": "https://www.bing.com/search?q=",
    "duckduckgo": "https://duckduckgo.com/?q=",
}

ReadSibling = Callable[[str], bytes]


def looks_like_history(document: object) -> bool:
    if not isinstance(document, dict) or not isinstance(document.get("history"), list):
        return False
    history = document["history"]
    return not history or (isinstance(history[0], dict) and {"model_output", "state"} <= history[0].keys())


def looks_like_infinity_result(document: object) -> bool:
    return isinstance(document, dict) and _INFINITY_KEYS <= document.keys()


def looks_like_infinity_summary(document: object) -> bool:
    """WebArena-Infinity's `results.json` of a whole run: its totals and one entry per task."""
    return (isinstance(document, dict) and isinstance(document.get("tasks"), list)
            and {"total", "passed"} <= document.keys()
            and any(looks_like_infinity_result(item) for item in document["tasks"]))


def companion_history(read_sibling: ReadSibling) -> str | None:
    """The history file beside a WebArena-Infinity `result.json`, which reads the result with it."""
    for name in HISTORY_FILES:
        try:
            read_sibling(name)
        except (OSError, ValueError):
            continue
        return name
    return None


def _actions(model_output: dict, where: str) -> list[tuple[str, dict]]:
    """(name, params) of each action, in order: a list of `{name: params}` objects, or one object."""
    raw = model_output.get("action")
    if raw is None:
        return []
    items = raw if isinstance(raw, list) else [raw]
    actions = []
    for position, item in enumerate(items):
        if not isinstance(item, dict):
            raise TrajectoryFormatError("expected an action object {name: {params}}",
                                        where=f"{where}.action" + (f"[{position}]" if isinstance(raw, list) else ""))
        for name, params in item.items():
            if params is None:
                continue
            actions.append((name, params if isinstance(params, dict) else {"value": params}))
    return actions


def _element_label(element) -> str:
    """An interacted element as the accessibility tree would name it: `button '☆'`."""
    if not isinstance(element, dict):
        return ""
    role = lenient_text(element.get("node_name")).strip().lower()
    attributes = element.get("attributes") if isinstance(element.get("attributes"), dict) else {}
    names = (element.get("ax_name"), attributes.get("aria-label"), attributes.get("title"),
             attributes.get("placeholder"), attributes.get("name"))
    name = next((text for text in (lenient_text(value).strip() for value in names) if text), "")
    return f"{role} {name!r}" if role and name else role or name


def _items(state: dict) -> list:
    items = state.get("items")
    return items if isinstance(items, list) else []


def _legacy_labels(state: dict) -> dict[str, str]:
    """Element index -> its text, from the early layout's `state.items`."""
    labels = {}
    for item in _items(state):
        if isinstance(item, dict) and "index" in item and not item.get("is_text_only"):
            labels[str(item["index"])] = lenient_text(item.get("text")).strip()
    return labels


def _legacy_observation(state: dict) -> str:
    """The early layout's indexed page elements, one per line, indented by depth."""
    lines = []
    for item in _items(state):
        if not isinstance(item, dict):
            continue
        depth = item.get("depth") if isinstance(item.get("depth"), int) else 0
        text = lenient_text(item.get("text")).strip()
        prefix = "" if item.get("is_text_only") else f"[{item.get('index')}]"
        lines.append("\t" * min(max(depth, 0), 32) + prefix + text)
    return "\n".join(lines)


def _selector(element) -> str:
    """The XPath browser-use recorded for an interacted element."""
    return lenient_text(element.get("x_path")).strip() if isinstance(element, dict) else ""


def _point(params: dict, result: dict | None) -> tuple[float | None, float | None]:
    """Where a click landed: the point the action gave (`coordinate_x`, `coordinate_y`) or the one
    its result recorded (`metadata.click_x`, `click_y`)."""
    metadata = result.get("metadata") if isinstance(result, dict) and isinstance(result.get("metadata"), dict) else {}
    for x, y in ((params.get("coordinate_x"), params.get("coordinate_y")),
                 (metadata.get("click_x"), metadata.get("click_y"))):
        if lenient_number(x) is not None and lenient_number(y) is not None:
            return lenient_number(x), lenient_number(y)
    return None, None


def _parts(name: str, params: dict, element, result: dict | None, legacy_labels: dict[str, str]) -> ActionParts:
    """A browser-use action in the platform's action kinds (`formats.actions.ACTION_TYPES`): its
    element (index, name, XPath), where it clicked, what it typed or where it went; an action with
    no counterpart (extract, wait, files) is `none` with its raw form kept in the step."""
    index = params.get("index")
    element_id = str(index) if isinstance(index, int) and not isinstance(index, bool) else ""
    label = _element_label(element) or legacy_labels.get(element_id, "")
    on_element = {"element_id": element_id, "element_label": label, "selector": _selector(element)}
    if name in ("click", "click_element", "click_element_by_index"):
        x, y = _point(params, result)
        return ActionParts(type="click", x=x, y=y, **on_element)
    if name in ("input", "input_text"):
        return ActionParts(type="type", value=lenient_text(params.get("text")).strip(), press_enter=False, **on_element)
    if name in ("select_dropdown", "select_dropdown_option"):
        return ActionParts(type="select", value=lenient_text(params.get("text")).strip(), **on_element)
    if name in ("navigate", "go_to_url", "open_tab"):
        return ActionParts(type="goto", value=lenient_text(params.get("url")).strip())
    if name in ("search", "search_google"):
        engine = lenient_text(params.get("engine")).strip().lower()
        query = params.get("query") if isinstance(params.get("query"), str) else ""
        return ActionParts(type="goto", value=_SEARCH_URLS.get(engine, _SEARCH_URLS["google"])
                           + urllib.parse.quote(query))
    if name in ("scroll", "scroll_down", "scroll_up"):
        down = name == "scroll_down" or (name == "scroll" and params.get("down") is not False)
        amount = lenient_number(params.get("amount"))  # pixels, in the early layout; else pages, of unknown height
        delta = None if amount is None else amount if down else -amount
        return ActionParts(type="scroll", value="down" if down else "up", delta_x=None if delta is None else 0.0,
                           delta_y=delta, **on_element)
    if name == "send_keys":
        return ActionParts(type="press", value=lenient_text(params.get("keys")).strip())
    if name == "go_back":
        return ActionParts(type="go_back")
    if name in ("switch", "switch_tab"):
        tab = params.get("tab_id", params.get("page_id", ""))
        return ActionParts(type="tab_focus", value=str(tab))
    if name in ("close", "close_tab"):
        return ActionParts(type="close_tab")
    if name == "done":
        return ActionParts(type="stop", value=lenient_text(params.get("text")).strip())
    return ActionParts(type="none")


def _reasoning(model_output: dict) -> str:
    state = model_output.get("current_state") if isinstance(model_output.get("current_state"), dict) else model_output
    # The early layout wrote `valuation_previous_goal` for a while.
    evaluation = state.get("evaluation_previous_goal", state.get("valuation_previous_goal"))
    parts = (("", model_output.get("thinking")), ("Evaluation of the previous goal: ", evaluation),
             ("Memory: ", state.get("memory")), ("Next goal: ", state.get("next_goal")))
    return "\n".join(prefix + lenient_text(value).strip() for prefix, value in parts if lenient_text(value).strip())


def _screenshot(state: dict, read_sibling: ReadSibling, notes: list[str], position: int) -> str | None:
    """A data: URI (early layout) or the path inside the upload of the file the run's machine named."""
    inline = state.get("screenshot")
    if isinstance(inline, str) and inline:
        return inline if inline.startswith("data:") else f"data:image/png;base64,{inline}"
    path = state.get("screenshot_path")
    if not isinstance(path, str) or not path.strip():
        return None
    parts = [part for part in path.replace("\\", "/").split("/") if part]
    for candidate in ("/".join(parts[-2:]), parts[-1] if parts else ""):
        if not candidate or ".." in candidate.split("/"):
            continue
        try:
            read_sibling(candidate)
        except (OSError, ValueError):
            continue
        return candidate
    notes.append(f"history[{position}]: screenshot {posixpath.basename(path.replace(chr(92), '/'))!r} is not in "
                 "the upload (looked for beside the history and in its screenshots folder)")
    return None


def _results(item: dict) -> list[dict]:
    raw = item.get("result")
    items = raw if isinstance(raw, list) else [raw]
    return [result for result in items if isinstance(result, dict)]


def _steps(item: dict, position: int, read_sibling: ReadSibling, notes: list[str]) -> tuple[list[Step], list]:
    """The agent steps of one history item: one per action of its model output (see
    `one_step_per_action`), each with the element it used (`state.interacted_element[i]`) and
    its result (`result[i]`)."""
    where = f"history[{position}]"
    model_output = item.get("model_output")
    if model_output is not None and not isinstance(model_output, dict):
        raise TrajectoryFormatError("expected an object or null", where=f"{where}.model_output")
    model_output = model_output or {}
    # Its actions are written back as JSON: nesting is bounded before anything walks it.
    check_depth(model_output, f"{where}.model_output")
    state = item.get("state") if isinstance(item.get("state"), dict) else {}
    actions = _actions(model_output, f"{where}.model_output")
    interacted = state.get("interacted_element")
    interacted = interacted if isinstance(interacted, list) else [interacted]
    results = _results(item)
    labels = _legacy_labels(state)
    typed = [(json.dumps({name: params}, ensure_ascii=False),
              _parts(name, params, interacted[k] if k < len(interacted) else None,
                     results[k] if k < len(results) else None, labels))
             for k, (name, params) in enumerate(actions)] or [("", ActionParts(type="none"))]
    metadata = item.get("metadata") if isinstance(item.get("metadata"), dict) else {}
    start, end = lenient_number(metadata.get("step_start_time")), lenient_number(metadata.get("step_end_time"))
    observation = item.get("state_message")
    step = Step(
        index=position + 1,
        action="",
        url=lenient_text(state.get("url")).strip(),
        observation=observation if isinstance(observation, str) else _legacy_observation(state),
        reasoning=_reasoning(model_output),
        screenshot=_screenshot(state, read_sibling, notes, position),
        tokens_in=lenient_quantity(metadata.get("input_tokens"), integer=True),
        tokens_out=lenient_quantity(metadata.get("output_tokens"), integer=True),
        duration=round(end - start, 6) if start is not None and end is not None and end >= start else None,
    )
    return one_step_per_action(step, typed), actions


def _done(actions: list[tuple[str, dict]], results: list[dict]) -> tuple[str, bool | None] | None:
    """The `done` action's text and the agent's own success flag, if the step ended the run."""
    for name, params in actions:
        if name == "done":
            success = params.get("success")
            if not isinstance(success, bool):
                success = next((r["success"] for r in results if isinstance(r.get("success"), bool)), None)
            return (params.get("text") if isinstance(params.get("text"), str) else ""), success
    return None


# browser-use's judgement flags, by the label the platform keeps them under.
_JUDGEMENT_FLAGS = (("impossible_task", "not_executable"), ("reached_captcha", "reached_captcha"))


def _judge(results: list[dict]) -> Verdict | None:
    """browser-use's own LLM judge (`judgement` on the last result, in recent versions): its verdict and
    reasoning, its failure reason as the verdict's note, and whether it found the task impossible
    (kept as `not_executable`, the counterpart of a WebArena N/A answer) or met a CAPTCHA."""
    for result in results:
        judgement = result.get("judgement")
        if isinstance(judgement, dict) and isinstance(judgement.get("verdict"), bool):
            labels = {label: "yes" if judgement[field] else "no" for field, label in _JUDGEMENT_FLAGS
                      if isinstance(judgement.get(field), bool)}
            return Verdict(kind="llm_judge", name=BROWSER_USE_JUDGE, success=judgement["verdict"],
                           explanation=lenient_text(judgement.get("reasoning")).strip(),
                           note=lenient_text(judgement.get("failure_reason")).strip(),
                           labels=labels)
    return None


def _intent_from_state(history: list[dict]) -> str:
    """The task as the agent was given it, from the first prompt that shows it (recent layout)."""
    for item in history:
        message = item.get("state_message")
        if isinstance(message, str):
            match = re.search(r"<user_request>\s*(.*?)\s*</user_request>", message, re.S)
            if match:
                return match.group(1)
    return ""


def _task_id(name: str, document: dict) -> str:
    """The history's folder (`task_e1/history.json`) or, for a file named after its task, its stem; a history
    uploaded alone under a generic name (`AgentHistoryList.json`) is named by its content, so that two such
    files never land on one task."""
    parts = [part for part in name.replace("\\", "/").split("/") if part]
    stem = posixpath.splitext(parts[-1])[0] if parts else ""
    if stem.lower() in _GENERIC_STEMS:
        if len(parts) > 1:
            return parts[-2]
        content = json.dumps(document, sort_keys=True, ensure_ascii=False).encode("utf-8", "surrogatepass")
        return f"{stem}-{hashlib.sha256(content).hexdigest()[:12]}"
    return stem


def _checked_task_id(task_id: str, where: str) -> str:
    if not task_id:
        raise TrajectoryFormatError("no task id: name the file or its folder after the task", where=where)
    if len(task_id) > TASK_ID_MAX_LENGTH:
        raise TrajectoryFormatError(f"task id longer than {TASK_ID_MAX_LENGTH} characters: {task_id[:40]}...",
                                    where=where)
    return task_id


def _infinity_result(read_sibling: ReadSibling) -> tuple[str, dict] | None:
    for name in RESULT_FILES:
        try:
            data = read_sibling(name)
        except (OSError, ValueError):
            continue
        try:
            document = load_json(decode_utf8(data)[0])
        except TrajectoryFormatError as error:
            raise TrajectoryFormatError(f"the harness result beside the history is not JSON: {error.message}",
                                        where=name) from None
        if looks_like_infinity_result(document):
            return name, document
    return None


def _infinity_outcome(result: dict, where: str) -> tuple[bool | None, str]:
    passed = flag(result, "passed", f"{where}.passed")
    return passed, lenient_text(result.get("verifier_message")).strip()


def parse_history(document: dict, name: str, read_sibling: ReadSibling) -> tuple[Trajectory, list[str]]:
    """The trajectory of a browser-use history file `name`, and notes on what was not found."""
    notes: list[str] = []
    history = document["history"]
    steps, finish, judge = [], None, None
    for position, item in enumerate(history):
        if not isinstance(item, dict):
            raise TrajectoryFormatError("expected a history item object", where=f"history[{position}]")
        item_steps, actions = _steps(item, position, read_sibling, notes)
        steps.extend(item_steps)
        results = _results(item)
        finish = _done(actions, results) or finish
        judge = _judge(results) or judge

    for number, step in enumerate(steps, start=1):
        step.index = number
    found = _infinity_result(read_sibling)
    result_name, result = found if found else ("", {})
    task_id = _checked_task_id(str(result.get("task_id") or _task_id(name, document)),
                               f"{result_name}.task_id" if found else "(file name)")
    intent = (lenient_text(result.get("instruction")).strip() or lenient_text(document.get("task")).strip()
              or _intent_from_state(history))
    verdicts = [judge] if judge else []
    if finish is not None and finish[1] is not None:
        verdicts.insert(0, Verdict(kind="agent_self_report", name=SELF_REPORT, success=finish[1]))
    if finish is not None:
        answer = finish[0]
        outcome = Outcome(status="na" if is_not_available(answer) else "answered")
    else:
        answer = None
        outcome = Outcome(status="no_stop" if steps else "crashed")
    if found:
        outcome.success, outcome.message = _infinity_outcome(result, result_name)
        outcome.source = INFINITY_SOURCE
    usage = document.get("usage") if isinstance(document.get("usage"), dict) else {}
    trajectory = Trajectory(
        task=TaskRef(task_id=task_id, benchmark=INFINITY_BENCHMARK if found else BENCHMARK, intent=intent),
        steps=steps,
        outcome=outcome,
        run=RunInfo(agent="browser-use"),
        final_answer=answer,
        verdicts=verdicts,
        tokens_in=lenient_quantity(usage.get("total_prompt_tokens"), integer=True),
        tokens_out=lenient_quantity(usage.get("total_completion_tokens"), integer=True),
        cost=lenient_quantity(usage.get("total_cost")),
        duration=lenient_quantity(result.get("elapsed")),
    )
    if found:
        notes.append(f"harness verdict from {result_name} ({INFINITY_SOURCE})")
    return trajectory, notes


def parse_infinity_result(document: dict) -> Trajectory:
    """A WebArena-Infinity `result.json` without its history: the final answer and the verdict only."""
    task_id = _checked_task_id(str(document.get("task_id") or ""), "task_id")
    passed, message = _infinity_outcome(document, "(document)")
    answer = document.get("final_result") if isinstance(document.get("final_result"), str) else None
    if answer is not None and document.get("is_done") is not False:
        status = "na" if is_not_available(answer) else "answered"
    else:
        answer, status = None, "no_stop"
    return Trajectory(
        task=TaskRef(task_id=task_id, benchmark=INFINITY_BENCHMARK,
                     intent=lenient_text(document.get("instruction")).strip()),
        steps=[],
        outcome=Outcome(status=status, success=passed, message=message, source=INFINITY_SOURCE),
        run=RunInfo(agent="browser-use"),
        final_answer=answer,
        duration=lenient_quantity(document.get("elapsed")),
    )


def parse_infinity_summary(document: dict) -> RunSummary:
    """The verifier's verdict on every task of a WebArena-Infinity run (`results.json`), each task's
    folder named by its id (`task_e1/`). An entry that cannot be read is named among the summary's
    problems; the others are read."""
    entries, problems = [], []
    for position, item in enumerate(document["tasks"]):
        where = f"tasks[{position}]"
        try:
            if not isinstance(item, dict):
                raise TrajectoryFormatError(f"expected a task object, got {json.dumps(item)[:80]}", where=where)
            task_id = _checked_task_id(lenient_text(item.get("task_id")).strip(), f"{where}.task_id")
            passed, _ = _infinity_outcome(item, where)
        except TrajectoryFormatError as error:
            problems.append(f"{error.where}: {error.message}")
            continue
        task = TaskRef(task_id=task_id, benchmark=INFINITY_BENCHMARK, intent=lenient_text(item.get("instruction")).strip())
        entries.append(SummaryEntry(task=task, folder=task_id, success=passed, line=where))
    return RunSummary(format=INFINITY_SUMMARY_FORMAT, entries=entries, folder_files=HISTORY_FILES + RESULT_FILES,
                      run=RunInfo(agent="browser-use", model=lenient_text(document.get("model")).strip()), problems=problems)
