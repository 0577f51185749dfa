"""Online-Mind2Web (github.com/OSU-NLP-Group/Online-Mind2Web): its task list and its result folders.

- The task list `Online_Mind2Web.json`, entries `{task_id, confirmed_task, website,
  reference_length, level}`: tasks of the benchmark `online-mind2web`. Updated tasks carry a date
  suffix (`<id>_110325`) and a changed text; both versions are tasks of their own.
- A result folder `<task_id>/result.json` (+ `trajectory/<N>_full_screenshot.png`), as every
  agent submitted to the leaderboard writes it: `task`, `final_result_response`, and where the
  runner kept them `action_history` (one string per action) with `thoughts[i]` beside it. Some
  runners add `result_status` (how the agent's session ended: `success` is the session finishing,
  not the task being done) or `judge {score 0-100, reasoning}` (browser-use's own judge).
- The task list and the evaluation's verdict files (`human_label.json`, WebJudge's
  `*_auto_eval_results.json`) are recognised, so that an upload holding them says what they are
  instead of failing them.
"""

import re
import urllib.parse
from collections.abc import Callable

from . import values
from .actions import scroll_direction
from .canonical import (TASK_ID_MAX_LENGTH, ActionParts, Outcome, RunInfo, Step, TaskRef, Trajectory,
                        TrajectoryFormatError, Verdict)
from .values import load_json
from .webarena_tasks import BenchmarkTasks, TaskConfig, TaskEntries, _Checker, checked_entries

BENCHMARK = "online-mind2web"
RESULTS_FORMAT = "online_mind2web_result"
OTHER_FORMAT = "online_mind2web_other"
LEVELS = ("easy", "medium", "hard")
SCREENSHOT = "trajectory/{}_full_screenshot.png"
JUDGE_NAME = "browser-use judge"
# browser-use's judge scores 0-100 and its published results hold only 0 and 100; half-way is the
# default pass mark, kept with every verdict so that a reader can apply another.
JUDGE_THRESHOLD = 50.0
JUDGE_SCALE = (0.0, 100.0)
# `result_status` of runners built on an agent SDK: how the session ended, not whether the task was done.
_ENDED = {"success": "answered", "error_max_turns": "early_stop"}
_VERSION_SUFFIX = re.compile(r"_\d{6}\Z")


def original_task_id(task_id: str) -> str:
    """The id a task had before it was updated (`<id>_110325` -> `<id>`): what its versions share."""
    return _VERSION_SUFFIX.sub("", task_id)


# Tasks come from the task list or from the result folders, which name the version they ran with its text.
TASKS = BenchmarkTasks(BENCHMARK, from_task_list=False, named_by_results=True, original_task_id=original_task_id)


def host_of(url: str) -> str:
    """The URL's host without `www.`; empty for what is not a URL."""
    try:
        return (urllib.parse.urlparse(url).hostname or "").removeprefix("www.")
    except ValueError:
        return ""


def is_task_entry(raw) -> bool:
    return isinstance(raw, dict) and "confirmed_task" in raw and "website" in raw


def parse_tasks(entries: list) -> TaskEntries:
    """The task list as TaskConfigs, with every entry left out named with its field."""
    result = TaskEntries()

    def check_fields(check: _Checker, raw: dict) -> None:
        if isinstance(raw.get("task_id"), str) and not raw["task_id"].strip():
            check.fail("task_id", "empty")
        if isinstance(raw.get("task_id"), str) and len(raw["task_id"]) > TASK_ID_MAX_LENGTH:
            check.fail("task_id", f"longer than {TASK_ID_MAX_LENGTH} characters")
        check.expect(raw, "confirmed_task", (str,), "a string", required=True)
        if isinstance(raw.get("confirmed_task"), str) and not raw["confirmed_task"].strip():
            check.fail("confirmed_task", "empty")
        check.expect(raw, "website", (str,), "a string", required=True)
        check.expect(raw, "reference_length", (int,), "an integer")
        if isinstance(raw.get("reference_length"), int) and raw["reference_length"] < 0:
            check.fail("reference_length", "negative")
        if "level" in raw and raw["level"] not in LEVELS:
            check.fail("level", f"expected one of {', '.join(LEVELS)}, got {raw['level']!r}")

    for raw, key in checked_entries(entries, check_fields, result, id_types=(str,), id_expected="a string"):
        website = raw["website"].strip()
        host = host_of(website)
        result.configs.append(TaskConfig(
            benchmark=BENCHMARK, task_id=key, number=None, old_task_id="", intent=raw["confirmed_task"].strip(),
            intent_template="", intent_template_id=None, instantiation={},
            sites=[host] if host else [], start_url=website, require_login=False,
            require_reset=False, eval_types=[], eval_config={}, config=raw,
            reference_length=raw.get("reference_length"),
        ))
    return result


def looks_like_result(document) -> bool:
    """A `result.json` of the Online-Mind2Web layout (not WebArena-Infinity's, which has
    `instruction` and `passed`), without the judge's own fields (a WebJudge record)."""
    return (isinstance(document, dict) and isinstance(document.get("task"), str) and "task_id" in document
            and ("final_result_response" in document or "action_history" in document)
            and "predicted_label" not in document)


def not_trajectories(document) -> str:
    """Why the benchmark's task list or a file of its evaluation's verdicts is not read as
    trajectories; empty for any other file."""
    first = document[0] if isinstance(document, list) and document else None
    if is_task_entry(first):
        return "Online-Mind2Web task list: tasks, not trajectories; import it with manage.py import_tasks"
    if isinstance(document, dict) and "predicted_label" in document and "task_id" in document:
        return ("Online-Mind2Web WebJudge results (predicted_label per task): an LLM judge's verdicts on a "
                "run's trajectories, not trajectories; import them with manage.py import_verdicts")
    if isinstance(first, dict) and "confirmed_task" in first and any(
            key.endswith("_human_label") for key in first):
        return ("Online-Mind2Web human labels (one column per agent: 1 success, 0 failure, 2 not executable): "
                "human verdicts on runs' trajectories, not trajectories; import them with manage.py import_verdicts")
    return ""


def not_trajectory_lines(text: str) -> str:
    """`not_trajectories` for WebJudge's results, written one JSON object per line in a `.json` file."""
    first = text.lstrip().split("\n", 1)[0]
    try:
        return not_trajectories(load_json(first))
    except ValueError:
        return ""


_ELEMENT = re.compile(r"\A<(?P<element>.*)>\s*->\s*(?P<verb>[A-Za-z_ ]+?)(?::\s*|\s+|\Z)(?P<value>.*)\Z", re.S)
_NUMBER = r"-?\d+(?:\.\d+)?"
_POINT = rf"\((?P<{{0}}x>{_NUMBER}),\s*(?P<{{0}}y>{_NUMBER})\)"
_CLICK_AT = re.compile(rf"\A(?:Click|Double click|Right click) at {_POINT.format('')}\Z", re.I)
_TYPE = re.compile(r"\AType (?P<value>\".*\"|'.*')\Z", re.S)
_PRESS = re.compile(r"\APress (?P<key>\S.*)\Z")
_NAVIGATE = re.compile(r"\ANavigate to (?P<url>\S+)\Z")
_SCROLL = re.compile(rf"\AScroll \(delta_x=(?P<x>{_NUMBER}), delta_y=(?P<y>{_NUMBER})\)\Z")
_SELECT = re.compile(r"\ASelect (?P<element>.+?) -> Select option\(s\) (?P<value>.*)\Z", re.S)
_DRAG = re.compile(rf"\ADrag from {_POINT.format('from_')} to {_POINT.format('to_')}\Z")
# `<input#q>`: the runner named the element by a CSS selector (tag, then #id or .class parts).
_CSS_SELECTOR = re.compile(r"\A[A-Za-z][\w-]*(?:[#.][\w-]+)+\Z")
# Verbs of the `<element> -> VERB value` form (SeeAct, the official example, WebJudge's records).
_VERBS = {"CLICK": "click", "TYPE": "type", "HOVER": "hover", "SELECT": "select", "PRESS": "press",
          "PRESS ENTER": "press", "ENTER": "press", "NAVIGATE": "goto", "GOTO": "goto", "SCROLL": "scroll"}


def _unquoted(value: str) -> str:
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value


def action_parts(action: str) -> ActionParts:
    """An `action_history` string as its parts: the element is the tag or selector in `<...>`, as
    the runner wrote it; a click at a point keeps the point, a scroll or drag how far it moved;
    forms it does not know keep their text as `none`."""
    text = action.strip()
    if match := _ELEMENT.match(text):
        verb = " ".join(match["verb"].upper().split())
        kind = _VERBS.get(verb, "none")
        element, value = match["element"].strip(), _unquoted(match["value"])
        if kind == "goto":
            return ActionParts(type=kind, value=value or element)
        selector = element if _CSS_SELECTOR.match(element) else ""
        if verb == "PRESS ENTER" or verb == "ENTER":
            return ActionParts(type=kind, element_label=f"<{element}>", selector=selector, value="Enter")
        return ActionParts(type=kind, element_label=f"<{element}>", selector=selector, value=value)
    if match := _CLICK_AT.match(text):
        return ActionParts(type="click", x=float(match["x"]), y=float(match["y"]))
    if match := _TYPE.match(text):
        return ActionParts(type="type", value=_unquoted(match["value"]))
    if match := _PRESS.match(text):
        return ActionParts(type="press", value=match["key"].strip())
    if match := _NAVIGATE.match(text):
        return ActionParts(type="goto", value=match["url"])
    if text == "Navigate back":
        return ActionParts(type="go_back")
    if text == "Navigate forward":
        return ActionParts(type="go_forward")
    if match := _SCROLL.match(text):
        dx, dy = float(match["x"]), float(match["y"])
        return ActionParts(type="scroll", value=scroll_direction(dx, dy), delta_x=dx, delta_y=dy)
    if match := _SELECT.match(text):
        return ActionParts(type="select", element_label=match["element"], value=match["value"].strip())
    if match := _DRAG.match(text):
        x, y = float(match["from_x"]), float(match["from_y"])
        return ActionParts(type="drag", x=x, y=y, delta_x=float(match["to_x"]) - x, delta_y=float(match["to_y"]) - y)
    return ActionParts(type="none")


def _task_id(document: dict, name: str) -> str:
    """The result's own `task_id`, else its folder's name."""
    value = document.get("task_id")
    parts = name.replace("\\", "/").split("/")
    if isinstance(value, (str, int)) and not isinstance(value, bool) and str(value).strip():
        task_id = str(value).strip()
    elif len(parts) >= 2 and parts[-2].strip():
        task_id = parts[-2].strip()
    else:
        raise TrajectoryFormatError("no task id: neither a task_id nor a folder named after the task",
                                    where="task_id")
    if len(task_id) > TASK_ID_MAX_LENGTH:
        raise TrajectoryFormatError(f"a task id of more than {TASK_ID_MAX_LENGTH} characters", where="task_id")
    return task_id


def _run_name(name: str) -> str:
    """The folder holding the task folders (`abp_run/<task_id>/result.json`): the results of one agent."""
    parts = name.replace("\\", "/").split("/")
    return parts[-3] if len(parts) >= 3 else ""


def judge_score(judge: dict, threshold: float = JUDGE_THRESHOLD) -> values.Score:
    """The browser-use judge's score (0 to 100) of a result, as both readers of these results read it."""
    score = values.graded_score(judge, "score", "judge.score", scale=JUDGE_SCALE, threshold=threshold)
    if score is None:
        raise TrajectoryFormatError("expected a number from 0 to 100, got None", where="judge.score")
    return score


def _judge(document: dict, threshold: float) -> tuple[list[Verdict], list[str]]:
    judge = document.get("judge")
    if judge is None:
        return [], []
    if not isinstance(judge, dict):
        raise TrajectoryFormatError(f"expected an object, got {type(judge).__name__}", where="judge")
    score = judge_score(judge, threshold)
    verdict = Verdict(kind="llm_judge", name=JUDGE_NAME, score=float(score.value), threshold=threshold,
                      success=score.success, label=score.label,
                      explanation=values.text(judge, "reasoning") if "reasoning" in judge else "")
    return [verdict], [score.problem] if score.problem else []


def _outcome(document: dict, answer: str) -> Outcome:
    status = document.get("result_status")
    if status is None:
        return Outcome(status="answered" if answer.strip() else "no_stop")
    if not isinstance(status, str):
        raise TrajectoryFormatError(f"expected a string, got {type(status).__name__}", where="result_status")
    ended = _ENDED.get(status, "crashed" if status.startswith("error") else "answered")
    if ended == "answered" and not answer.strip():
        ended = "no_stop"
    return Outcome(status=ended, reason="max_steps" if ended == "early_stop" else None,
                   message=f"result_status: {status}")


def parse_result(document: dict, name: str, read_sibling: Callable[[str], bytes] | None = None, *,
                 judge_threshold: float = JUDGE_THRESHOLD) -> tuple[Trajectory, list[str]]:
    """One `result.json`, and what of it was read as unsure (a judge's score off its scale);
    screenshots `trajectory/<i>_full_screenshot.png` beside it go with step i+1."""
    actions, thoughts = values.strings(document, "action_history"), values.strings(document, "thoughts")
    if thoughts and len(thoughts) != len(actions):
        raise TrajectoryFormatError(f"{len(thoughts)} thoughts for {len(actions)} actions; they go in pairs",
                                    where="thoughts")
    answer = values.text(document, "final_result_response")
    steps = [Step(index=position + 1, action=action, reasoning=thoughts[position] if thoughts else "",
                  action_parts=action_parts(action), screenshot=_screenshot(read_sibling, position))
             for position, action in enumerate(actions)]
    verdicts, problems = _judge(document, judge_threshold)
    trajectory = Trajectory(
        task=TaskRef(task_id=_task_id(document, name), benchmark=BENCHMARK,
                     intent=values.text(document, "task").strip()),
        steps=steps,
        outcome=_outcome(document, answer),
        run=RunInfo(name=_run_name(name)),
        final_answer=answer if answer.strip() else None,
        verdicts=verdicts,
    )
    return trajectory, problems


def _screenshot(read_sibling: Callable[[str], bytes] | None, position: int) -> str | None:
    if read_sibling is None:
        return None
    path = SCREENSHOT.format(position)
    try:
        read_sibling(path)
    except (OSError, ValueError):
        return None
    return path
