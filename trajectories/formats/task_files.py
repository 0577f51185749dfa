"""Task files of every benchmark `import_tasks` reads, told apart by their entries.

- WebArena `test.raw.json` / `config_files/N.json`: `webarena` tasks;
- WebArena-Lite (entries with `old_task_id`): `webarena-lite` tasks, and the subset
  `webarena-lite` of WebArena made of their `old_task_id`s;
- WebArena-Verified (`start_urls`, an `eval` list): `webarena-verified` tasks;
- Mind2Web-Live (`evaluation`, `reference_task_length`): `mind2web-live` tasks.
Also the id lists that define subsets (a JSON list of ids, `{"task_ids": [...]}` as
WebArena-Verified's subset files have, a list of task objects, or text with one id per line or
separated by commas).
"""

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from . import mind2web_live, webarena_verified
from .text import loads
from .webarena_tasks import TaskConfig, TaskConfigError, TaskProblem, _type_name, parse_task_configs

LITE_SUBSET = "webarena-lite"
LITE_DESCRIPTION = "WebArena-Lite: the WebArena tasks of the Lite set, by their old_task_id."


@dataclass(frozen=True)
class SubsetDefinition:
    name: str
    benchmark: str
    task_ids: tuple[str, ...]
    source: str
    description: str = ""


@dataclass
class TaskFile:
    kind: str  # webarena | webarena-lite | webarena-verified | mind2web-live
    configs: list[TaskConfig]
    subsets: list[SubsetDefinition] = field(default_factory=list)


def decode_json(data: bytes, source: str):
    try:
        return loads(data.decode("utf-8-sig"))[0]
    except UnicodeDecodeError as exc:
        raise TaskConfigError(source, message=f"not UTF-8 text ({exc.reason} at byte {exc.start})") from exc
    except json.JSONDecodeError as exc:
        raise TaskConfigError(source, message=f"invalid JSON at line {exc.lineno}, column {exc.colno}: "
                                              f"{exc.msg}") from exc


def parse_task_file(data, source: str, benchmark: str | None = None) -> TaskFile:
    """Decoded JSON of any known task file as TaskConfigs (and subsets), or TaskConfigError."""
    entries = [data] if isinstance(data, dict) else data
    if not isinstance(entries, list):
        raise TaskConfigError(source, message=f"expected a list of task objects, got {_type_name(data)}")
    first = next((raw for raw in entries if isinstance(raw, dict)), None)
    if webarena_verified.is_verified_entry(first):
        configs = webarena_verified.parse_verified_tasks(entries, source)
        return TaskFile(webarena_verified.BENCHMARK, _renamed(configs, benchmark))
    if mind2web_live.is_mind2web_live_entry(first):
        configs = mind2web_live.parse_mind2web_live_tasks(entries, source)
        return TaskFile(mind2web_live.BENCHMARK, _renamed(configs, benchmark))
    configs = parse_task_configs(entries, source, benchmark)
    lite = [config for config in configs if config.old_task_id]
    if not lite:
        return TaskFile("webarena", configs)
    subset = SubsetDefinition(
        name=LITE_SUBSET, benchmark=webarena_verified.BASE_BENCHMARK,
        task_ids=tuple(dict.fromkeys(config.old_task_id for config in lite)), source=source,
        description=LITE_DESCRIPTION,
    )
    return TaskFile(LITE_SUBSET, configs, [subset])


def _renamed(configs: list[TaskConfig], benchmark: str | None) -> list[TaskConfig]:
    for config in configs:
        config.benchmark = benchmark or config.benchmark
    return configs


def read_task_bytes(data: bytes, source: str, benchmark: str | None = None) -> TaskFile:
    return parse_task_file(decode_json(data, source), source, benchmark)


def read_task_file(path: Path, benchmark: str | None = None) -> TaskFile:
    path = Path(path)
    return read_task_bytes(path.read_bytes(), path.name, benchmark)


_ID = re.compile(r"\A[A-Za-z0-9_.:-]+\Z")


def parse_subset_ids(data: bytes, source: str) -> tuple[str, ...]:
    """Task ids of an id-list file, in file order without repeats; TaskConfigError names the bad entry."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise TaskConfigError(source, message=f"not UTF-8 text ({exc.reason} at byte {exc.start})") from exc
    try:
        decoded, _ = loads(text)
    except json.JSONDecodeError:
        decoded = [part for part in re.split(r"[\s,]+", text) if part]
    if isinstance(decoded, dict):
        if "task_ids" not in decoded:
            raise TaskConfigError(source, message="expected a list of task ids or an object with 'task_ids'")
        decoded = decoded["task_ids"]
    if not isinstance(decoded, list):
        raise TaskConfigError(source, message=f"expected a list of task ids, got {_type_name(decoded)}")
    # A list of whole task definitions (WebArena-Verified's `subset-export`) lists its tasks' ids.
    decoded = [item.get("task_id") if isinstance(item, dict) and "task_id" in item else item for item in decoded]
    problems = []
    for entry, value in enumerate(decoded, start=1):
        is_number = isinstance(value, int) and not isinstance(value, bool)
        valid = is_number or (isinstance(value, str) and _ID.match(value))
        if not valid:
            problems.append(TaskProblem(entry, value, "task_id", "expected an integer or an id of letters, digits, _.:-"))
    if problems:
        raise TaskConfigError(source, problems)
    if not decoded:
        raise TaskConfigError(source, message="no task ids")
    return tuple(dict.fromkeys(str(value) for value in decoded))
