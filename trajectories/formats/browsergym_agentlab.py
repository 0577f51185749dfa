"""BrowserGym / AgentLab episode folders: `summary_info.json` with `exp_args.pkl`, `goal_object.pkl.gz`,
`step_N.pkl.gz` and `screenshot_step_N.png` beside it (BrowserGym's `ExpArgs.run`, the layout every
AgentLab study writes, whatever the benchmark: WebArena, WorkArena, VisualWebArena, AssistantBench,
MiniWoB).

The reader is keyed on `summary_info.json` and reads the rest as its siblings; the pickles only
through `safe_pickle`, which never runs them. `step_N.pkl.gz` holds BrowserGym's `StepInfo`: the
observation the agent saw at step N and the action it chose on it (the last file has the final
observation and no action). The task is `env_args.task_name`, whose prefix names the benchmark
(`miniwob.click-dialog` is task `click-dialog` of `miniwob`, `webarena.310` WebArena's task 310).
Benchmarks whose tasks are drawn anew from a seed (MiniWoB, WorkArena ...) get one task per seed,
`click-dialog_28`, as AgentLab names its episodes: the goal differs from seed to seed. The harness
verdict is the episode's reward (`cum_reward > 0`), source "BrowserGym reward".
"""

import ast
import base64
import csv
import io
import posixpath
import re

from PIL import Image

from .actions import resolve_element_label, scroll_direction
from .canonical import (TASK_ID_MAX_LENGTH, ActionParts, Outcome, RunInfo, RunSummary, Step, SummaryEntry, TaskRef,
                        Trajectory, TrajectoryFormatError, one_step_per_action)
from .safe_pickle import Array, PickledObject, PickleError, load_file
from .text import CsvFieldTooLong, csv_rows, storable_text_of
from .values import lenient_number, lenient_quantity, lenient_text

FORMAT = "browsergym_agentlab"
SUMMARY_FILE = "summary_info.json"
SOURCE = "BrowserGym reward"
# Benchmarks whose task ids name one fixed task, whatever the seed.
FIXED_TASK_BENCHMARKS = ("webarena", "visualwebarena", "assistantbench", "weblinx")
# A step pickle decompressed is refused beyond this (its DOM snapshot is the largest part).
MAX_STEP_BYTES = 256 << 20
MAX_STEPS = 10_000
STUDY_FORMAT = "agentlab_study_results"
_STEP_FILE = re.compile(r"\Astep_\d+\.pkl\.gz\Z")
_COMPANIONS = ("exp_args.pkl", "goal_object.pkl.gz", "package_versions.txt")
_STUDY_RESULTS = re.compile(r"\Aresult_df.*\.csv\Z")
_STUDY_FILES = (
    (re.compile(r"\Asummary_df.*\.csv\Z"), "an AgentLab study's summary (averages over its episodes): not read; "
                                           "result_df has the episodes' verdicts"),
    (re.compile(r"\Aerror_report.*\.md\Z"), "an AgentLab study's error report: not read"),
)


def looks_like_summary_info(name: str, document: object) -> bool:
    return (posixpath.basename(name) == SUMMARY_FILE and isinstance(document, dict)
            and "n_steps" in document and "cum_reward" in document)


def companion_reason(name: str) -> str | None:
    """Why a file of an AgentLab study or episode folder is not read on its own; None for other files."""
    base = posixpath.basename(name)
    if base in _COMPANIONS or _STEP_FILE.match(base):
        return f"part of a BrowserGym episode folder: read with its {SUMMARY_FILE}"
    return next((reason for pattern, reason in _STUDY_FILES if pattern.match(base)), None)


def is_study_results(name: str) -> bool:
    return _STUDY_RESULTS.match(posixpath.basename(name)) is not None


# BrowserGym's action functions, by the platform's action kinds; the rest keep their own name.
_KINDS = {
    "click": "click", "dblclick": "click", "mouse_click": "click", "mouse_dblclick": "click",
    "hover": "hover", "mouse_move": "hover",
    "fill": "type", "clear": "type", "keyboard_type": "type", "keyboard_insert_text": "type",
    "select_option": "select",
    "press": "press", "keyboard_press": "press",
    "scroll": "scroll", "goto": "goto", "go_back": "go_back", "go_forward": "go_forward",
    "new_tab": "new_tab", "tab_close": "close_tab", "tab_focus": "tab_focus",
    "drag_and_drop": "drag", "mouse_drag_and_drop": "drag",
    "send_msg_to_user": "stop", "report_infeasible": "stop",
}
_ELEMENT_FIRST = frozenset({"click", "dblclick", "hover", "fill", "clear", "select_option", "press", "focus",
                            "upload_file", "drag_and_drop"})
# Functions acting at a point of the page: their first two arguments are its x and y.
_AT_POINT = frozenset({"mouse_click", "mouse_dblclick", "mouse_move", "mouse_down", "mouse_up",
                       "mouse_drag_and_drop"})


def _literal(node: ast.expr):
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None


def _call_parts(call: ast.Call, observation: str) -> ActionParts:
    """One call (`click('30')`, `fill('12', 'text')`, `mouse_click(120, 48)`) in its parts. The
    element label is the element's line of the step's accessibility tree."""
    name = call.func.id
    args = [_literal(arg) for arg in call.args]
    kwargs = {item.arg: _literal(item.value) for item in call.keywords if item.arg}
    kind = _KINDS.get(name, name)[:32]
    element = lenient_text(args[0] if args else kwargs.get("bid")) if name in _ELEMENT_FIRST else ""
    rest = args[1:] if name in _ELEMENT_FIRST else args
    label = resolve_element_label(observation, element)
    if name in _AT_POINT:
        x, y = (lenient_number(item) for item in (rest + [None, None])[:2])
        if name == "mouse_drag_and_drop":
            end_x, end_y = (lenient_number(item) for item in (rest + [None] * 4)[2:4])
            moved = None not in (x, y, end_x, end_y)
            return ActionParts(type=kind, x=x, y=y, delta_x=end_x - x if moved else None,
                               delta_y=end_y - y if moved else None)
        return ActionParts(type=kind, x=x, y=y)
    if name == "scroll":
        dx, dy = (lenient_number(item) for item in (rest + [None, None])[:2])
        return ActionParts(type=kind, value=scroll_direction(dx or 0.0, dy or 0.0), delta_x=dx, delta_y=dy)
    if name == "drag_and_drop":
        return ActionParts(type=kind, element_id=element, element_label=label,
                           value=lenient_text(rest[0] if rest else ""))
    if name == "goto":
        value = lenient_text(rest[0] if rest else kwargs.get("url"))
    else:
        value = lenient_text(rest[0] if rest else kwargs.get("value", kwargs.get("text", kwargs.get("options", ""))))
    return ActionParts(type=kind, element_id=element, element_label=label, value=value,
                       press_enter=False if kind == "type" else None)


def actions(action: str, observation: str) -> list[tuple[str, ActionParts]]:
    """Each call of a step's action string (BrowserGym runs several in one step when its action set
    allows it), as its own text and its parts; read with `ast`, never run. A string that is not
    calls of BrowserGym's functions is one `none` action."""
    try:
        module = ast.parse(action.strip(), mode="exec")
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return [(action, ActionParts(type="none"))]
    calls = [node.value for node in module.body
             if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Name)]
    if not calls or len(calls) != len(module.body):
        return [(action, ActionParts(type="none"))]
    if len(calls) == 1:
        return [(action, _call_parts(calls[0], observation))]
    text = action.strip()
    return [(ast.get_source_segment(text, call) or "", _call_parts(call, observation)) for call in calls]


def split_task_name(task_name: str, seed) -> TaskRef:
    """`miniwob.click-dialog` (seed 28) -> task `click-dialog_28` of benchmark `miniwob`."""
    benchmark, dot, task_id = task_name.partition(".")
    benchmark = benchmark.lower()
    if not dot or not benchmark or not task_id:
        raise TrajectoryFormatError(f"task name {task_name!r} does not start with its benchmark "
                                    "('miniwob.click-dialog', 'webarena.310')", where="exp_args.env_args.task_name")
    if benchmark not in FIXED_TASK_BENCHMARKS and isinstance(seed, int) and not isinstance(seed, bool):
        task_id = f"{task_id}_{seed}"
    if len(task_id) > TASK_ID_MAX_LENGTH:
        raise TrajectoryFormatError(f"task id {task_id[:40]!r}... is longer than {TASK_ID_MAX_LENGTH} characters",
                                    where="exp_args.env_args.task_name")
    return TaskRef(task_id=task_id, benchmark=benchmark)


def _fields(value, where: str) -> dict:
    """The attributes of a pickled record (an empty dict for None)."""
    if value is None:
        return {}
    if isinstance(value, PickledObject):
        return value.fields()
    if isinstance(value, dict):
        return value
    raise TrajectoryFormatError(f"expected a record, got {type(value).__name__}", where=where)


def _read_pickle(read_sibling, name: str, *, required: bool):
    try:
        data = read_sibling(name)
    except FileNotFoundError:
        if required:
            raise TrajectoryFormatError(f"{name} not found beside {SUMMARY_FILE}: {SUMMARY_FILE} is read with the "
                                        "other files of its episode folder; import the folder (or a zip of it)"
                                        ) from None
        return None
    except (OSError, ValueError) as error:
        raise TrajectoryFormatError(f"{name}: {error}") from None
    try:
        return load_file(name, data, MAX_STEP_BYTES)
    except PickleError as error:
        raise TrajectoryFormatError(f"{name}: {error}") from None


def _png(array: Array) -> str | None:
    """An RGB(A) screenshot array (height x width x 3 or 4 bytes) as a PNG `data:` URI."""
    shape = array.shape
    if array.dtype.name != "u1" or array.fortran or len(shape) != 3 or shape[2] not in (3, 4) or 0 in shape:
        return None
    image = Image.frombytes("RGB" if shape[2] == 3 else "RGBA", (shape[1], shape[0]), array.data)
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def _screenshot(read_sibling, step: int, obs: dict) -> str | None:
    """The step's `screenshot_step_N.png` (AgentLab saves it beside the pickle and leaves it out of
    the observation), else the observation's own screenshot array (older BrowserGym versions)."""
    name = f"screenshot_step_{step}.png"
    try:
        read_sibling(name)
    except FileNotFoundError:
        return _png(obs["screenshot"]) if isinstance(obs.get("screenshot"), Array) else None
    except (OSError, ValueError) as error:
        raise TrajectoryFormatError(f"{name}: {error}") from None
    return name


def _steps(info: dict, position: int, read_sibling) -> list[Step]:
    where = f"step_{position}.pkl.gz"
    obs = _fields(info.get("obs"), f"{where}.obs")
    observation = obs.get("axtree_txt") or obs.get("pruned_html") or ""
    action = info.get("action")
    if not isinstance(action, str):
        raise TrajectoryFormatError("expected the action as a string", where=f"{where}.action")
    agent_info = _fields(info.get("agent_info"), f"{where}.agent_info")
    stats = next((item for item in (info.get("stats"), agent_info.get("stats")) if isinstance(item, dict)), {})
    elapsed = [stats.get(key) for key in ("step_elapsed", "agent_elapsed")]
    observation = observation if isinstance(observation, str) else ""
    step = Step(
        index=position + 1,
        action=action,
        url=obs.get("url") if isinstance(obs.get("url"), str) else "",
        observation=observation,
        reasoning=agent_info.get("think") if isinstance(agent_info.get("think"), str) else "",
        prev_action=obs.get("last_action") if isinstance(obs.get("last_action"), str) else "",
        screenshot=_screenshot(read_sibling, position, obs),
        tokens_in=lenient_quantity(stats.get("input_tokens"), integer=True),
        tokens_out=lenient_quantity(stats.get("output_tokens"), integer=True),
        cost=lenient_quantity(stats.get("cost")),
        duration=sum(elapsed) if all(isinstance(item, (int, float)) and item >= 0 for item in elapsed) else None,
    )
    return one_step_per_action(step, actions(action, observation))


def _goal(goal, goal_object) -> str:
    """The goal as the first observation states it, else as `goal_object.pkl.gz` holds it."""
    if isinstance(goal, str) and goal.strip():
        return goal.strip()
    if isinstance(goal_object, list):
        return "\n".join(part["text"] for part in goal_object
                         if isinstance(part, dict) and isinstance(part.get("text"), str)).strip()
    return ""


def _outcome(summary: dict, steps: list[Step]) -> tuple[Outcome, str | None]:
    reward = summary.get("cum_reward")
    success = None if isinstance(reward, bool) or not isinstance(reward, (int, float)) else reward > 0
    last = steps[-1].action_parts if steps else None
    if summary.get("err_msg"):
        return Outcome(status="crashed", success=success, message=str(summary["err_msg"]), source=SOURCE), None
    if last is not None and last.type == "stop":
        infeasible = steps[-1].action.lstrip().startswith("report_infeasible")
        return Outcome(status="na" if infeasible else "answered", success=success, source=SOURCE), last.value
    if summary.get("truncated"):
        return Outcome(status="early_stop", reason="max_steps", success=success, source=SOURCE,
                       message="truncated: the episode reached its step limit"), None
    message = "terminated by the environment" if summary.get("terminated") else ""
    return Outcome(status="no_stop", success=success, message=message, source=SOURCE), None


def _run(exp_args: dict) -> RunInfo:
    agent_args = exp_args.get("agent_args")
    agent = agent_args.fields() if isinstance(agent_args, PickledObject) else {}
    model_args = agent.get("chat_model_args")
    model = model_args.fields() if isinstance(model_args, PickledObject) else {}
    agent_name, model_name = agent.get("agent_name"), model.get("model_name")
    return RunInfo(agent=agent_name if isinstance(agent_name, str) else "",
                   model=model_name if isinstance(model_name, str) else "")


def _total(summary: dict, key: str, *, integer: bool = False):
    return lenient_quantity(summary.get(f"stats.cum_{key}"), integer=integer)


def parse_episode(summary: dict, read_sibling) -> Trajectory:
    """The episode of the folder whose `summary_info.json` is `summary`; `read_sibling` reads the
    folder's other files."""
    n_steps = summary.get("n_steps")
    if not isinstance(n_steps, int) or isinstance(n_steps, bool) or not 0 <= n_steps <= MAX_STEPS:
        raise TrajectoryFormatError(f"expected a number of steps from 0 to {MAX_STEPS}", where="n_steps")
    exp_args = _fields(_read_pickle(read_sibling, "exp_args.pkl", required=True), "exp_args.pkl")
    env_args = _fields(exp_args.get("env_args"), "exp_args.env_args")
    if not isinstance(env_args.get("task_name"), str):
        raise TrajectoryFormatError("expected the task's name", where="exp_args.env_args.task_name")
    task = split_task_name(env_args["task_name"], env_args.get("task_seed"))
    # Read whether or not its goal is needed: every pickle of the episode is checked, and one refused fails
    # the episode with its name rather than lying unnoticed in the folder.
    goal_object = _read_pickle(read_sibling, "goal_object.pkl.gz", required=False)
    steps, goal = [], None
    # One step pickle at a time: each holds a DOM snapshot, only the step made of it is kept.
    for position in range(n_steps + 1):
        info = _read_pickle(read_sibling, f"step_{position}.pkl.gz", required=False)
        if info is None:
            break
        info = _fields(info, f"step_{position}.pkl.gz")
        if position == 0:
            goal = _fields(info.get("obs"), "step_0.pkl.gz.obs").get("goal")
        if info.get("action") is not None:
            steps.extend(_steps(info, position, read_sibling))
    for number, step in enumerate(steps, start=1):
        step.index = number
    task.intent = _goal(goal, goal_object)
    outcome, answer = _outcome(summary, steps)
    elapsed = [_total(summary, key) for key in ("step_elapsed", "agent_elapsed")]
    return Trajectory(
        task=task,
        steps=steps,
        outcome=outcome,
        run=_run(exp_args),
        final_answer=answer,
        tokens_in=_total(summary, "input_tokens", integer=True),
        tokens_out=_total(summary, "output_tokens", integer=True),
        cost=_total(summary, "cost"),
        duration=sum(elapsed) if None not in elapsed else None,
    )


_STUDY_COLUMNS = ("env.task_name", "env.task_seed", "exp_dir", "cum_reward")


def parse_study_results(data: bytes, name: str) -> RunSummary:
    """The episodes of an AgentLab `result_df*.csv`, one per row, each with the name of its episode
    folder; the verdict is `cum_reward > 0` (none when the episode has no reward, e.g. it crashed
    before its end)."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise TrajectoryFormatError(f"not UTF-8 text (byte {error.start})") from None
    rows, header = csv_rows(storable_text_of(text)[0]), []
    try:
        _, header = next(rows, (0, []))
        missing = [column for column in _STUDY_COLUMNS if column not in header]
        if missing:
            raise TrajectoryFormatError(f"no column {missing[0]!r}: not an AgentLab result_df", line=1)
        table = [(line, dict(zip(header, cells))) for line, cells in rows if cells]
    except CsvFieldTooLong as error:
        raise TrajectoryFormatError(str(error), where=header[error.column] if error.column < len(header) else "",
                                    line=error.line) from None
    except csv.Error as error:
        raise TrajectoryFormatError(f"malformed CSV ({error})") from None
    entries = []
    for line, row in table:
        seed = row.get("env.task_seed", "").strip()
        reward = row.get("cum_reward", "").strip()
        try:
            success = float(reward) > 0 if reward else None
            task = split_task_name(row.get("env.task_name", ""), int(float(seed)) if seed else None)
        except TrajectoryFormatError as error:
            raise TrajectoryFormatError(error.message, where="env.task_name", line=line) from None
        except ValueError:
            raise TrajectoryFormatError(f"expected numbers, got {reward!r} and {seed!r}",
                                        where="cum_reward, env.task_seed", line=line) from None
        episode = posixpath.basename(row.get("exp_dir", "").replace("\\", "/").rstrip("/"))
        entries.append(SummaryEntry(task=task, folder=episode, success=success, line=line))
    return RunSummary(format=STUDY_FORMAT, entries=entries, folder_files=(SUMMARY_FILE,), noun="episodes")
