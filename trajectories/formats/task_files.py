"""Task files of every benchmark `import_tasks` reads, told apart by their entries.

- WebArena `test.raw.json` / `config_files/N.json`: `webarena` tasks;
- WebArena-Lite (entries with `old_task_id`): `webarena-lite` tasks, and the subset
  `webarena-lite` of WebArena made of their `old_task_id`s;
- WebArena-Verified (`start_urls`, an `eval` list): `webarena-verified` tasks;
- Mind2Web-Live (`evaluation`, `reference_task_length`): `mind2web-live` tasks;
- Online-Mind2Web (`confirmed_task`, `website`): `online-mind2web` tasks.
Also the id lists that define subsets (a JSON list of ids, `{"task_ids": [...]}` as
WebArena-Verified's subset files have, a list of task objects, or text with one id per line or
separated by commas).

Entries that cannot be read are left out and reported (`skipped`), values read as meant rather
than as written are reported too (`notes`); `strict` refuses such a file whole.
"""

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from . import mind2web_live, online_mind2web, webarena_tasks, webarena_verified
from .webarena_tasks import (
    READ_AS_LIST, BenchmarkTasks, TaskConfig, TaskConfigError, TaskEntries, TaskProblem, _type_name, check_reading,
    parse_task_configs,
)
from .wording import count_of
from .text import loads

LITE_SUBSET = "webarena-lite"
LITE_DESCRIPTION = "WebArena-Lite: the WebArena tasks of the Lite set, by their old_task_id."
# Where each benchmark's tasks come from, as its task file's reader declares it.
_BENCHMARK_TASKS = {declared.benchmark: declared for declared in (
    *webarena_tasks.TASKS, webarena_verified.TASKS, mind2web_live.TASKS, online_mind2web.TASKS)}


def benchmark_tasks(benchmark: str) -> BenchmarkTasks:
    """Where the benchmark's tasks come from: what its reader declares, else (a benchmark without a
    reader of its task file) from the trajectories that name them until a task file is imported."""
    return _BENCHMARK_TASKS.get(benchmark) or BenchmarkTasks(benchmark, from_task_list=False)


@dataclass(frozen=True)
class SubsetDefinition:
    name: str
    benchmark: str
    task_ids: tuple[str, ...]
    source: str
    description: str = ""


@dataclass
class TaskFile:
    kind: str  # webarena | webarena-lite | webarena-verified | mind2web-live | online-mind2web
    configs: list[TaskConfig]
    subsets: list[SubsetDefinition] = field(default_factory=list)
    skipped: list[TaskProblem] = field(default_factory=list)  # why each left-out entry could not be read
    notes: list[TaskProblem] = field(default_factory=list)  # values read as meant, not as written


@dataclass(frozen=True)
class SubsetIds:
    task_ids: tuple[str, ...]
    skipped: tuple[TaskProblem, ...] = ()
    notes: tuple[TaskProblem, ...] = ()


def reported_lines(source: str, skipped, notes) -> list[str]:
    """What a report says of the entries left out and of the values read as meant."""
    lines = []
    if skipped:
        entries = count_of(len({problem.entry for problem in skipped}), "entry", "entries")
        lines.append(f"{source}: {entries} skipped, the rest imported:")
        lines += [f"  {problem}" for problem in skipped]
    if notes:
        lines.append(f"{source}: {count_of(len(notes), 'value')} read as meant rather than as written:")
        lines += [f"  {problem}" for problem in notes]
    return lines


def decode_json(data: bytes, source: str):
    try:
        return loads(data.decode("utf-8-sig"))[0]
    except UnicodeDecodeError as exc:
        raise TaskConfigError(source, message=f"not UTF-8 text ({exc.reason} at byte {exc.start})") from exc
    except json.JSONDecodeError as exc:
        raise TaskConfigError(source, message=f"invalid JSON at line {exc.lineno}, column {exc.colno}: "
                                              f"{exc.msg}") from exc


def parse_task_file(data, source: str, benchmark: str | None = None, *, strict: bool = False) -> TaskFile:
    """Decoded JSON of any known task file as TaskConfigs (and subsets), or TaskConfigError when
    no entry can be read (under `strict`, when any entry is not read as written)."""
    entries = [data] if isinstance(data, dict) else data
    if not isinstance(entries, list):
        raise TaskConfigError(source, message=f"expected a list of task objects, got {_type_name(data)}")
    first = next((raw for raw in entries if isinstance(raw, dict)), None)
    if webarena_verified.is_verified_entry(first):
        read = webarena_verified.parse_verified_tasks(entries).checked(source, strict=strict)
        return _task_file(webarena_verified.BENCHMARK, read, benchmark)
    if mind2web_live.is_mind2web_live_entry(first):
        read = mind2web_live.parse_mind2web_live_tasks(entries).checked(source, strict=strict)
        return _task_file(mind2web_live.BENCHMARK, read, benchmark)
    if online_mind2web.is_task_entry(first):
        read = online_mind2web.parse_tasks(entries).checked(source, strict=strict)
        return _task_file(online_mind2web.BENCHMARK, read, benchmark)
    read = parse_task_configs(entries, source, benchmark).checked(source, strict=strict)
    lite = [config for config in read.configs if config.old_task_id]
    if not lite:
        return _task_file("webarena", read, None)
    subset = SubsetDefinition(
        name=LITE_SUBSET, benchmark=webarena_verified.BASE_BENCHMARK,
        task_ids=tuple(dict.fromkeys(config.old_task_id for config in lite)), source=source,
        description=LITE_DESCRIPTION,
    )
    return _task_file(LITE_SUBSET, read, None, [subset])


def _task_file(kind: str, read: TaskEntries, benchmark: str | None, subsets=()) -> TaskFile:
    """`benchmark` renames the tasks of a file whose benchmark its reader names."""
    for config in read.configs:
        config.benchmark = benchmark or config.benchmark
    return TaskFile(kind, read.configs, list(subsets), read.skipped, read.notes)


def read_task_bytes(data: bytes, source: str, benchmark: str | None = None, *, strict: bool = False) -> TaskFile:
    return parse_task_file(decode_json(data, source), source, benchmark, strict=strict)


def read_task_file(path: Path, benchmark: str | None = None, *, strict: bool = False) -> TaskFile:
    path = Path(path)
    return read_task_bytes(path.read_bytes(), path.name, benchmark, strict=strict)


_ID = re.compile(r"\A[A-Za-z0-9_.:-]+\Z")


def parse_subset_ids(data: bytes, source: str, *, strict: bool = False) -> SubsetIds:
    """Task ids of an id-list file, in file order without repeats, read as task files are: a bad
    entry is skipped and reported, and TaskConfigError (naming the bad entries) only when no id
    can be read or, under `strict`, when anything was reported."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise TaskConfigError(source, message=f"not UTF-8 text ({exc.reason} at byte {exc.start})") from exc
    try:
        decoded, _ = loads(text)
    except json.JSONDecodeError:
        decoded = [part for part in re.split(r"[\s,]+", text) if part]
    notes = []
    if isinstance(decoded, dict):
        if "task_ids" not in decoded:
            raise TaskConfigError(source, message="expected a list of task ids or an object with 'task_ids'")
        decoded = decoded["task_ids"]
        if isinstance(decoded, str):
            notes.append(TaskProblem(1, decoded, "task_ids", READ_AS_LIST))
            decoded = [decoded]
    if not isinstance(decoded, list):
        raise TaskConfigError(source, message=f"expected a list of task ids, got {_type_name(decoded)}")
    # A list of whole task definitions (WebArena-Verified's `subset-export`) lists its tasks' ids.
    decoded = [item.get("task_id") if isinstance(item, dict) and "task_id" in item else item for item in decoded]
    skipped, ids = [], []
    for entry, value in enumerate(decoded, start=1):
        is_number = isinstance(value, int) and not isinstance(value, bool)
        if is_number or (isinstance(value, str) and _ID.match(value)):
            ids.append(str(value))
        else:
            skipped.append(TaskProblem(entry, value, "task_id",
                                       "expected an integer or an id of letters, digits, _.:-"))
    check_reading(source, bool(ids), skipped, notes, strict=strict)
    if not ids:
        raise TaskConfigError(source, message="no task ids")
    return SubsetIds(tuple(dict.fromkeys(ids)), tuple(skipped), tuple(notes))
