"""WebArena task configs (`test.raw.json`, per-task `config_files/<id>.json`, WebArena-Lite).

Every entry is checked before anything is stored, and each problem names the task id and
the field, so a broken file can be fixed in one pass. What the published files mean is read as
meant (a single string where a list of strings is expected is a one-item list, noted); an entry
that still cannot be read is left out and reported, and the file's other entries are kept. Strict
reading (`TaskEntries.checked`) refuses a file with anything reported, as a whole.
"""

from collections.abc import Callable
from dataclasses import dataclass, field

from .wording import count_of

EVAL_TYPES = ("string_match", "url_match", "program_html")


@dataclass(frozen=True)
class BenchmarkTasks:
    """Where a benchmark's tasks come from, as the reader of its task file declares it."""

    benchmark: str
    # Its tasks always come from its published task file (manage.py import_tasks): a trajectory
    # naming a task id the file does not hold is refused, never makes a task. Any other benchmark's
    # tasks are made from the trajectories that name them, until a task file of it is imported.
    from_task_list: bool = True
    # Its results name the version of the task they ran, with its text: such a task is made even
    # once the task list is imported.
    named_by_results: bool = False
    # The id its versions share, where updated tasks are kept under suffixed ids; None where it keeps no versions.
    original_task_id: Callable[[str], str] | None = None


BENCHMARK, LITE_BENCHMARK = "webarena", "webarena-lite"
TASKS = (BenchmarkTasks(BENCHMARK), BenchmarkTasks(LITE_BENCHMARK))


@dataclass(frozen=True)
class TaskProblem:
    entry: int
    task_id: object
    field: str
    message: str

    def __str__(self):
        return f"task {self.task_id!s} (entry {self.entry}): field '{self.field}': {self.message}"

    def to_dict(self) -> dict:
        return {"entry": self.entry, "task_id": str(self.task_id), "field": self.field, "message": self.message}


class TaskConfigError(ValueError):
    def __init__(self, source: str, problems: list[TaskProblem] | None = None, message: str = ""):
        self.source = source
        self.problems = problems or []
        if not message:
            count = len(self.problems)
            message = f"{count} invalid task entr{'y' if count == 1 else 'ies'}, nothing imported"
        if self.problems:
            message += ":\n" + "\n".join(f"  {problem}" for problem in self.problems)
        super().__init__(f"{source}: {message}")


READ_AS_LIST = "a single string where a list of strings is expected: read as a one-item list"


@dataclass
class TaskConfig:
    benchmark: str
    task_id: str
    number: int | None
    old_task_id: str
    intent: str
    intent_template: str
    intent_template_id: int | None
    instantiation: dict
    sites: list[str]
    start_url: str
    require_login: bool
    require_reset: bool
    eval_types: list[str]
    eval_config: dict
    config: dict
    requirements: list[str] = field(default_factory=list)
    requirements_source: str = ""
    unachievable: bool = False
    revision: int | None = None
    key_nodes: list[dict] = field(default_factory=list)
    reference_length: int | None = None


@dataclass
class TaskEntries:
    """The readable entries of a task file, and what was reported of the rest."""

    configs: list[TaskConfig] = field(default_factory=list)
    skipped: list[TaskProblem] = field(default_factory=list)  # why each left-out entry could not be read
    notes: list[TaskProblem] = field(default_factory=list)  # values read as meant, not as written

    def checked(self, source: str, *, strict: bool = False) -> "TaskEntries":
        check_reading(source, bool(self.configs), self.skipped, self.notes, strict=strict)
        return self


def check_reading(source: str, kept: bool, skipped: list[TaskProblem], notes: list[TaskProblem], *,
                  strict: bool) -> None:
    """TaskConfigError when no entry of the file could be read, and under `strict` when anything at
    all was reported: the file is then refused whole, as it is written."""
    if skipped and not kept:
        raise TaskConfigError(source, skipped)
    if strict and (skipped or notes):
        entries = len({problem.entry for problem in skipped + notes})
        raise TaskConfigError(source, skipped + notes,
                              message=f"{count_of(entries, 'entry', 'entries')} not read as written "
                                      f"(refused by --strict), nothing imported")


def _is_str_list(value) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


def _type_name(value) -> str:
    return "null" if value is None else type(value).__name__


class _Checker:
    def __init__(self, entry: int, task_id):
        self.entry, self.task_id, self.problems, self.notes = entry, task_id, [], []

    def fail(self, name: str, message: str):
        self.problems.append(TaskProblem(self.entry, self.task_id, name, message))

    def note(self, name: str, message: str):
        self.notes.append(TaskProblem(self.entry, self.task_id, name, message))

    def string_list(self, container: dict, key: str, name: str) -> bool:
        """Whether `container[key]` is a list of strings, once a single string is read as a one-item list."""
        if isinstance(container.get(key), str):
            container[key] = [container[key]]
            self.note(name, READ_AS_LIST)
        return _is_str_list(container.get(key))

    def expect(self, raw: dict, name: str, kinds: tuple, what: str, required: bool = False):
        if name not in raw:
            if required:
                self.fail(name, "missing")
            return
        value = raw[name]
        # bool is an int subclass: never accept it where a number is meant.
        if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
            self.fail(name, f"expected {what}, got {_type_name(value)}")


def _check_eval(check: _Checker, raw_eval) -> None:
    if not isinstance(raw_eval, dict):
        check.fail("eval", f"expected an object, got {_type_name(raw_eval)}")
        return
    if not check.string_list(raw_eval, "eval_types", "eval.eval_types") or not raw_eval["eval_types"]:
        check.fail("eval.eval_types", "expected a non-empty list of strings")
    else:
        unknown = [name for name in raw_eval["eval_types"] if name not in EVAL_TYPES]
        if unknown:
            check.fail("eval.eval_types", f"unknown evaluator {unknown[0]!r} (known: {', '.join(EVAL_TYPES)})")
    answers = raw_eval.get("reference_answers")
    if answers is None:
        return
    if not isinstance(answers, dict):
        check.fail("eval.reference_answers", f"expected an object or null, got {_type_name(answers)}")
        return
    if "exact_match" in answers and not isinstance(answers["exact_match"], str):
        check.fail("eval.reference_answers.exact_match", f"expected a string, got {_type_name(answers['exact_match'])}")
    if "must_include" in answers and not check.string_list(answers, "must_include",
                                                           "eval.reference_answers.must_include"):
        check.fail("eval.reference_answers.must_include", "expected a list of strings")
    # "N/A" is WebArena's word for a task that cannot be done, not a one-item list.
    if ("fuzzy_match" in answers and answers["fuzzy_match"] != "N/A"
            and not check.string_list(answers, "fuzzy_match", "eval.reference_answers.fuzzy_match")):
        check.fail("eval.reference_answers.fuzzy_match", "expected a list of strings or \"N/A\"")


def _requirements(reference_answers: dict) -> tuple[list[str], str]:
    """Partial Success keywords: `must_include`, else a list-valued `fuzzy_match`."""
    must_include = reference_answers.get("must_include")
    if must_include:
        return list(must_include), "must_include"
    fuzzy = reference_answers.get("fuzzy_match")
    if isinstance(fuzzy, list) and fuzzy:
        return list(fuzzy), "fuzzy_match"
    return [], ""


def checked_entries(entries: list, check_fields, result: TaskEntries, *, id_field: str = "task_id",
                    id_types: tuple = (int, str), id_expected: str = "an integer or string"):
    """Each well-formed task entry as (raw object, task id as text), in file order.

    Every format's entries are objects with a unique id (`id_field`); `check_fields(check, raw)`
    adds the format's own checks. An entry with a problem is left out and its problems go to
    `result.skipped`, naming every bad entry and field; a kept entry's notes go to `result.notes`.
    """
    seen = {}
    for entry, raw in enumerate(entries, start=1):
        if not isinstance(raw, dict):
            result.skipped.append(TaskProblem(entry, "?", "(entry)", f"expected an object, got {_type_name(raw)}"))
            continue
        task_id = raw.get(id_field)
        check = _Checker(entry, task_id)
        check.expect(raw, id_field, id_types, id_expected, required=True)
        check_fields(check, raw)
        key = str(task_id)
        if not check.problems and key in seen:
            check.fail(id_field, f"duplicate of entry {seen[key]}")
        seen.setdefault(key, entry)
        if check.problems:
            result.skipped.extend(check.problems)
            continue
        result.notes.extend(check.notes)
        yield raw, key


def parse_task_configs(data, source: str, benchmark: str | None = None) -> TaskEntries:
    """Decoded JSON (a list of task objects, or one object) as TaskConfigs and what was reported."""
    entries = [data] if isinstance(data, dict) else data
    if not isinstance(entries, list):
        raise TaskConfigError(source, message=f"expected a list of task objects, got {_type_name(data)}")
    if benchmark is None:
        is_lite = any(isinstance(raw, dict) and "old_task_id" in raw for raw in entries)
        benchmark = LITE_BENCHMARK if is_lite else BENCHMARK

    result = TaskEntries()

    def check_fields(check: _Checker, raw: dict) -> None:
        if isinstance(raw.get("task_id"), str) and not raw["task_id"].strip():
            check.fail("task_id", "empty")
        check.expect(raw, "intent", (str,), "a string", required=True)
        if isinstance(raw.get("intent"), str) and not raw["intent"].strip():
            check.fail("intent", "empty")
        check.expect(raw, "start_url", (str,), "a string")
        check.expect(raw, "intent_template", (str,), "a string")
        check.expect(raw, "intent_template_id", (int, type(None)), "an integer")
        check.expect(raw, "instantiation_dict", (dict, type(None)), "an object")
        check.expect(raw, "require_login", (bool,), "true or false")
        check.expect(raw, "require_reset", (bool,), "true or false")
        check.expect(raw, "old_task_id", (int, str), "an integer or string")
        if "sites" not in raw:
            check.fail("sites", "missing")
        elif not check.string_list(raw, "sites", "sites"):
            check.fail("sites", "expected a list of strings")
        if "eval" not in raw:
            check.fail("eval", "missing")
        else:
            _check_eval(check, raw["eval"])

    for raw, key in checked_entries(entries, check_fields, result):
        task_id = raw["task_id"]
        answers = raw["eval"].get("reference_answers") or {}
        requirements, requirements_source = _requirements(answers)
        result.configs.append(
            TaskConfig(
                benchmark=benchmark,
                task_id=key,
                number=task_id if isinstance(task_id, int) else (int(key) if key.isdigit() else None),
                old_task_id="" if raw.get("old_task_id") is None else str(raw["old_task_id"]),
                intent=raw["intent"].strip(),
                intent_template=raw.get("intent_template") or "",
                intent_template_id=raw.get("intent_template_id"),
                instantiation=raw.get("instantiation_dict") or {},
                sites=list(raw["sites"]),
                start_url=raw.get("start_url") or "",
                require_login=raw.get("require_login", False),
                require_reset=raw.get("require_reset", False),
                eval_types=list(raw["eval"]["eval_types"]),
                eval_config=raw["eval"],
                config=raw,
                requirements=requirements,
                requirements_source=requirements_source,
                unachievable=answers.get("fuzzy_match") == "N/A",
            )
        )
    return result
