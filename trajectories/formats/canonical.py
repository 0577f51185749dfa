"""`trajectory/v1`: the one shape every importer produces and users' own agents can write.

Plain dataclasses (no Django) so parsers, metrics and tests can use them anywhere. The JSON
Schema beside this module (`schemas/trajectory-v1.schema.json`) is the published contract;
`from_dict` validates against it and names the path of the first bad field.
"""

import hashlib
import json
from dataclasses import dataclass, field, fields
from functools import cache
from pathlib import Path

import jsonschema

from .actions import forced_stop_reason, parse_action

SCHEMA_ID = "trajectory/v1"
SCHEMA_PATH = Path(__file__).parent / "schemas" / "trajectory-v1.schema.json"

# Nesting of objects and arrays, counting the document itself: deeper documents are refused before
# anything walks them recursively (schema validation, dataclass conversion, JSON encoding).
MAX_DEPTH = 32
TASK_ID_MAX_LENGTH = 255  # as the schema's maxLength, and the database's column
PARADIGMS = ("step_by_step", "tree_search", "full_plan", "other")
# Who gave a verdict on a trajectory's success: the benchmark's harness (its reward or evaluator),
# a rule check, human graders, an LLM judge, or the agent about itself.
VERDICT_KINDS = ("harness", "rule_check", "human", "llm_judge", "agent_self_report")
OUTCOME_STATUSES = ("answered", "na", "early_stop", "no_stop", "crashed")
EARLY_STOP_REASONS = ("repeated_action", "invalid_actions", "max_steps", "other")


class TrajectoryFormatError(ValueError):
    """Input that is not a valid trajectory; `where` names the field path, `line` the line."""

    def __init__(self, message: str, where: str = "", line: int | None = None):
        self.message = message
        self.where = where
        self.line = line
        prefix = ", ".join(part for part in (f"line {line}" if line else "", where) if part)
        super().__init__(f"{prefix}: {message}" if prefix else message)


@dataclass
class RunInfo:
    name: str = ""
    agent: str = ""
    model: str = ""
    paradigm: str = "step_by_step"
    meta: dict = field(default_factory=dict)


@dataclass
class TaskRef:
    task_id: str
    benchmark: str = "webarena"
    intent: str = ""
    # The task's reference answer where the file gives it (Who&When's ground truth), for a task the
    # platform makes from the file.
    reference_answer: str = ""


@dataclass
class ActionParts:
    """What an executed action did, in its parts (see `formats.actions.ParsedAction`), whatever
    the tool wrote.

    `value` is the action's argument by kind: the typed text (`type`), the keys (`press`), the
    URL (`goto`), the option (`select`), the direction (`scroll`: down, up, left, right), the
    answer (`stop`). The element, where the tool records one, is its id (`element_id`: the
    accessibility tree's id, BrowserGym's bid, browser-use's index, a set-of-marks label), what
    names it (`element_label`) and its CSS selector or XPath (`selector`). An agent that acts by
    screen coordinates records the point instead (`x`, `y`, in the screenshot's pixels; a drag's
    start), and a scroll or drag how far it moved (`delta_x`, `delta_y`, in pixels, positive
    right and down)."""

    type: str
    element_id: str = ""
    element_label: str = ""
    value: str = ""
    press_enter: bool | None = None
    selector: str = ""
    x: float | None = None
    y: float | None = None
    delta_x: float | None = None
    delta_y: float | None = None

    @property
    def has_element(self) -> bool:
        return bool(self.element_id or self.selector or self.element_label)

    @property
    def has_point(self) -> bool:
        return self.x is not None and self.y is not None


@dataclass
class Step:
    index: int
    action: str
    url: str = ""
    observation: str = ""
    reasoning: str = ""
    planned_action: str | None = None
    prev_action: str = ""
    # A `data:image/...;base64,` URI or a path relative to the uploaded file.
    screenshot: str | None = None
    action_parts: ActionParts | None = None
    # What the step cost, where the file records it (model tokens, money in USD, seconds).
    tokens_in: int | None = None
    tokens_out: int | None = None
    cost: float | None = None
    duration: float | None = None
    # Who spoke at this step, in multi-agent logs (Magentic-One's WebSurfer, an expert of a team).
    agent: str = ""


def one_step_per_action(step: Step, actions: list[tuple[str, ActionParts]]) -> list[Step]:
    """The agent steps of one model output that ran several actions (browser-use's action list,
    BrowserGym's multi-action): one per action, in order, each with its own action text and parts,
    since each is something the agent did (a gold step, a repeat, an element); one action is the
step itself, with its parts. The first keeps
    what the output had once (reasoning, screenshot, tokens, cost and time, so that the trajectory's
    sums stay as they were); the others are on the same page. Indexes are the caller's to number."""
    (step.action, step.action_parts), *others = actions
    return [step] + [Step(index=step.index, action=text, url=step.url, action_parts=parts) for text, parts in others]


@dataclass
class Outcome:
    status: str
    reason: str | None = None
    success: bool | None = None
    message: str = ""
    # Who gave `success`, by name ("BrowserGym reward", "WebArena-Infinity verifier"); empty: the harness.
    source: str = ""


@dataclass
class Verdict:
    """A verdict on the trajectory's success from a source other than `outcome.success` (the
    harness of record): the agent's self-report, a published judge's score, a second harness.

    `success` is None when the source gave no yes/no (`label` then says what it gave, e.g.
    "not_executable"); `score` with `threshold` keeps a judge's graded answer as it was given."""

    kind: str
    name: str
    success: bool | None = None
    model: str = ""
    score: float | None = None
    threshold: float | None = None
    label: str = ""
    explanation: str = ""
    # What the source noted beside its verdict (browser-use's judge: why the task failed).
    note: str = ""
    # Further labels of the same judgement, by name: `not_executable`, `reached_captcha` ("yes" / "no").
    labels: dict = field(default_factory=dict)


@dataclass(frozen=True)
class SummaryEntry:
    """One task of a run summary that a harness writes beside its trajectories (AgentLab's `result_df`,
    WebArena-Infinity's `results.json`): the task, the folder its trajectory is kept in, and the harness
    verdict (None when the summary gives none)."""

    task: TaskRef
    folder: str
    success: bool | None
    line: int | str  # where in the file: a line, or `tasks[3]`


@dataclass
class RunSummary:
    """A harness's summary of a whole run: one entry per task, whether or not the task's folder is in
    the upload; `problems` name the entries that could not be read (the others are)."""

    format: str
    entries: list[SummaryEntry]
    # The files that mark a task's folder as present in the upload (`summary_info.json`, `history.json`).
    folder_files: tuple[str, ...]
    noun: str = "tasks"  # what the summary calls its entries: AgentLab's are episodes
    run: RunInfo = field(default_factory=RunInfo)
    problems: list[str] = field(default_factory=list)


@dataclass
class FailureLabel:
    """A published account of why the trajectory failed, by the data set's annotators: the decisive
    step (1-based, None when they named none), the agent that erred, the failure type and why."""

    source: str
    step: int | None = None
    agent: str = ""
    failure_type: str = ""
    reason: str = ""


@dataclass
class Trajectory:
    task: TaskRef
    steps: list[Step]
    outcome: Outcome
    run: RunInfo = field(default_factory=RunInfo)
    plan: list[str] = field(default_factory=list)
    final_answer: str | None = None
    schema: str = SCHEMA_ID
    verdicts: list[Verdict] = field(default_factory=list)
    failure_labels: list[FailureLabel] = field(default_factory=list)
    # Totals of the whole trajectory, where the file gives them rather than per step.
    tokens_in: int | None = None
    tokens_out: int | None = None
    cost: float | None = None
    duration: float | None = None

    def to_dict(self) -> dict:
        return _plain(self)

    def content_hash(self) -> str:
        """Identity of the trajectory's content, independent of the run it is imported into.
        Stored with every trajectory: the text hashed must never change."""
        body = self.to_dict()
        body.pop("run")
        _drop_unset(body, _UNHASHED_WHEN_UNSET)
        for step in body["steps"]:
            _drop_unset(step, _UNHASHED_WHEN_UNSET)
            if step.get("action_parts"):
                _drop_unset(step["action_parts"], _UNHASHED_PARTS_WHEN_UNSET)
        _drop_unset(body["outcome"], ("source",))
        for verdict in body.get("verdicts", ()):
            _drop_unset(verdict, _UNHASHED_VERDICT_FIELDS_WHEN_UNSET)
        _drop_unset(body["task"], ("reference_answer",))
        encoded = json.dumps(body, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
        return hashlib.sha256(encoded.encode("utf-8")).hexdigest()


# Fields added after hashes were first stored: left out of the hash while unset, so that a
# trajectory without them keeps the hash it was stored with.
_UNHASHED_WHEN_UNSET = ("verdicts", "failure_labels", "tokens_in", "tokens_out", "cost", "duration", "agent")
_UNHASHED_PARTS_WHEN_UNSET = ("selector", "x", "y", "delta_x", "delta_y")
_UNHASHED_VERDICT_FIELDS_WHEN_UNSET = ("note", "labels")


def _drop_unset(body: dict, names: tuple[str, ...]) -> None:
    for name in names:
        if body.get(name) in (None, [], "", {}):
            body.pop(name, None)


_SCALARS = frozenset({str, int, float, bool, type(None)})


@cache
def _field_names(cls: type) -> tuple[str, ...]:
    return tuple(item.name for item in fields(cls))


def _plain(value):
    """What `dataclasses.asdict` gives for the values a trajectory holds, without its deep copies
    of every string: the content hash of each imported trajectory walks all of its steps. Plain
    values, most of what it meets, are told apart first."""
    if type(value) in _SCALARS:
        return value
    if hasattr(type(value), "__dataclass_fields__"):
        return {name: _plain(getattr(value, name)) for name in _field_names(type(value))}
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    return value


@cache
def json_schema() -> dict:
    return json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))


def _path(error: jsonschema.ValidationError) -> str:
    parts = []
    for item in error.absolute_path:
        parts.append(f"[{item}]" if isinstance(item, int) else f".{item}")
    return "".join(parts).lstrip(".") or "(document)"


@cache
def _validator(part: str = "") -> jsonschema.Draft202012Validator:
    schema = json_schema()
    if part:
        schema = {**schema["properties"][part], "$defs": schema["$defs"]}
    return jsonschema.Draft202012Validator(schema)


def check_depth(document: object, prefix: str = "") -> None:
    """Refuse nesting deeper than MAX_DEPTH, naming the field (its first two parts) where it is.
    Iterative, so that the check itself cannot exhaust the stack."""
    pending = [(document, 1, ())]
    while pending:
        value, depth, path = pending.pop()
        children = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
        for key, child in children:
            if isinstance(child, (dict, list)):
                if depth + 1 > MAX_DEPTH:
                    where = "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in (*path, key)[:2])
                    where = where.lstrip(".") or "(document)"
                    raise TrajectoryFormatError(f"nested deeper than {MAX_DEPTH} levels",
                                                where=f"{prefix}.{where}" if prefix else where)
                pending.append((child, depth + 1, (*path, key)))


def _raise_first_error(validator: jsonschema.Draft202012Validator, document: object, prefix: str = "") -> None:
    check_depth(document, prefix)
    errors = sorted(validator.iter_errors(document), key=lambda e: [str(p) for p in e.absolute_path])
    if errors:
        where = _path(errors[0])
        if prefix:
            where = prefix if where == "(document)" else f"{prefix}.{where}"
        raise TrajectoryFormatError(errors[0].message, where=where)


def validate(document: object) -> None:
    _raise_first_error(_validator(), document)


def run_from_dict(document: object) -> RunInfo:
    """A `run` object on its own, as a run folder's `run.json` holds it."""
    _raise_first_error(_validator("run"), document, prefix="run")
    return RunInfo(**document)


def _check_consistency(document: dict) -> None:
    """Rules the JSON Schema cannot state: step order, a decisive step among the steps and one label
    per source, and a reason only for an early stop."""
    previous = 0
    for position, raw in enumerate(document["steps"]):
        if raw["index"] <= previous:
            raise TrajectoryFormatError(
                f"step index {raw['index']} does not follow {previous}; indexes must increase",
                where=f"steps[{position}].index",
            )
        previous = raw["index"]
    indexes = {raw["index"] for raw in document["steps"]}
    sources = {}
    for position, label in enumerate(document.get("failure_labels", [])):
        if label.get("step") is not None and label["step"] not in indexes:
            raise TrajectoryFormatError(f"decisive step {label['step']} is not one of the trajectory's steps",
                                        where=f"failure_labels[{position}].step")
        if label["source"] in sources:
            raise TrajectoryFormatError(f"a second label of source {label['source']!r}; failure_labels"
                                        f"[{sources[label['source']]}] is the first", where=f"failure_labels[{position}]")
        sources[label["source"]] = position
    outcome = document["outcome"]
    if outcome.get("reason") and outcome["status"] != "early_stop":
        raise TrajectoryFormatError(
            f"a reason is only allowed for status 'early_stop', not {outcome['status']!r}", where="outcome.reason"
        )


def _outcome(document: dict) -> tuple[list[dict], Outcome]:
    """The agent's steps and the outcome. A last step that is the harness's own forced stop
    (`stop [Early stop: ...]`) is not an agent step: it becomes the outcome, as the render
    importer reads it; a file that also says the agent answered contradicts itself and is refused."""
    steps, outcome = document["steps"], Outcome(**document["outcome"])
    for position, raw in enumerate(steps):
        stop = parse_action(raw["action"])
        reason = forced_stop_reason(stop)
        if reason is None:
            continue
        where = f"steps[{position}].action"
        if position != len(steps) - 1:
            raise TrajectoryFormatError(
                f"{raw['action']!r} is the harness's forced stop, which ends a trajectory, but "
                f"{len(steps) - 1 - position} step(s) follow it", where=where)
        answered = outcome.status in ("answered", "na")
        if answered or document.get("final_answer") is not None:
            said = f"outcome.status is {outcome.status!r}" if answered else "final_answer is given"
            raise TrajectoryFormatError(
                f"the last step {raw['action']!r} is the harness's forced stop (early stop, {reason}), "
                f"yet {said}: the agent cannot have answered; fix the outcome or the last step", where=where)
        if outcome.reason and reason != "other" and outcome.reason != reason:
            raise TrajectoryFormatError(
                f"outcome.reason {outcome.reason!r} contradicts the last step {raw['action']!r} ({reason})",
                where="outcome.reason")
        return steps[:-1], Outcome(status="early_stop", reason=outcome.reason or reason, success=outcome.success,
                                   message=outcome.message or stop.value.strip(), source=outcome.source)
    return steps, outcome


def from_dict(document: dict) -> Trajectory:
    validate(document)
    _check_consistency(document)
    agent_steps, outcome = _outcome(document)
    steps = []
    for raw in agent_steps:
        parts = raw.get("action_parts")
        steps.append(
            Step(
                index=raw["index"],
                action=raw["action"],
                url=raw.get("url", ""),
                observation=raw.get("observation", ""),
                reasoning=raw.get("reasoning", ""),
                planned_action=raw.get("planned_action"),
                prev_action=raw.get("prev_action", ""),
                screenshot=raw.get("screenshot"),
                action_parts=ActionParts(**parts) if parts else None,
                tokens_in=raw.get("tokens_in"),
                tokens_out=raw.get("tokens_out"),
                cost=raw.get("cost"),
                duration=raw.get("duration"),
                agent=raw.get("agent", ""),
            )
        )
    task = document["task"]
    return Trajectory(
        run=RunInfo(**document.get("run", {})),
        task=TaskRef(task_id=str(task["task_id"]), benchmark=task.get("benchmark", "webarena"),
                     intent=task.get("intent", ""), reference_answer=task.get("reference_answer", "")),
        steps=steps,
        plan=list(document.get("plan", [])),
        final_answer=document.get("final_answer"),
        outcome=outcome,
        verdicts=[Verdict(**item) for item in document.get("verdicts", [])],
        failure_labels=[FailureLabel(**item) for item in document.get("failure_labels", [])],
        tokens_in=document.get("tokens_in"),
        tokens_out=document.get("tokens_out"),
        cost=document.get("cost"),
        duration=document.get("duration"),
    )
