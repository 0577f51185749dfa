"""Turn the bytes of one file into `trajectory/v1` records, whatever format it is in.

A file may hold one trajectory (a render file, a JSON object) or many (a JSON list, JSONL,
html2json output); each comes out as its own record, so one bad line or example fails alone.
"""

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import BinaryIO

from . import agent_e, browser_use, online_mind2web, webvoyager, who_and_when
from .actions import extract_planned_action
from .browsergym_agentlab import FORMAT as AGENTLAB, looks_like_summary_info, parse_episode
from .agent_steps import action_parts
from .canonical import SCHEMA_ID, RunSummary, Trajectory, TrajectoryFormatError, from_dict
from .format_traces import FORMAT as TRACE, HarnessTrace, looks_like_trace, parse_trace
from .screenshots import Image, take_images
from .sources import Source
from .text import UNSTORABLE_REPLACED, decode_utf8, storable_text_of
from .values import load_json
from .webarena_html2json import FORMAT as HTML2JSON, NOTE as HTML2JSON_NOTE, looks_like_html2json, parse_html2json
from .webarena_render import FORMAT as RENDER, decode_render, parse_render

CANONICAL_JSON = "trajectory_v1_json"
CANONICAL_JSONL = "trajectory_v1_jsonl"
NOT_UTF8 = "not valid UTF-8: undecodable bytes were replaced"


@dataclass
class Record:
    """One trajectory (or harness trace, or run summary) read from a file, or the reason it could not be; `key` names
    it inside the file."""

    format: str
    trajectory: Trajectory | None = None
    trace: HarnessTrace | None = None
    # A harness's summary of the run, read as task results once the run's trajectories are stored.
    summary: RunSummary | None = None
    error: TrajectoryFormatError | None = None
    line: int | None = None
    key: str = ""
    notes: tuple[str, ...] = ()
    images: dict[str, Image] = field(default_factory=dict)
    content_hash: str = ""
    # Screenshot files already written for this record where it was read, by image hash.
    files: dict[str, str] = field(default_factory=dict)
    # Whether `images` were sent without their bytes from where the file was read (a parsing worker,
    # for a trajectory that it saw would not be stored): storing it after all reads them again.
    images_left_behind: bool = False
    # Why the file is not a trajectory of its own: a harness result read with the history beside it,
    # a benchmark's task list or verdict file.
    skipped: str = ""


def canonical_trajectory(document: object) -> Trajectory:
    """A `trajectory/v1` document, with what the writer may leave out derived as the importers do."""
    trajectory = from_dict(document)
    for raw, step in zip(document["steps"], trajectory.steps):
        if "planned_action" not in raw:
            step.planned_action = extract_planned_action(step.reasoning)
        if step.action_parts is None:
            step.action_parts = action_parts(step.action, step.observation)
    return trajectory


def _located(error: TrajectoryFormatError, key: str, line: int | None) -> TrajectoryFormatError:
    """The error with the record's place in its file (`[3]`, `example_7`, line 12) before its field."""
    inner = "" if error.where == "(document)" and key else error.where
    where = f"{key}.{inner}" if key and inner and not inner.startswith("[") else f"{key}{inner}"
    return TrajectoryFormatError(error.message, where=where, line=line or error.line)


def _record(format: str, parse, *, line: int | None = None, key: str = "", notes=()) -> Record:
    try:
        return Record(format=format, trajectory=parse(), line=line, key=key, notes=notes)
    except TrajectoryFormatError as error:
        return Record(format=format, error=_located(error, key, line), line=line, key=key, notes=notes)


def _trace_record(document: list, name: str, notes: tuple[str, ...]) -> Record:
    try:
        return Record(format=TRACE, trace=parse_trace(document, name), notes=notes)
    except TrajectoryFormatError as error:
        return Record(format=TRACE, error=error, notes=notes)


def _tool_record(format: str, parse, notes: tuple[str, ...], key: str = "") -> Record:
    """A record of a reader that also returns notes (screenshots named but not in the upload, a
    value read as unknown or unsure)."""
    try:
        trajectory, found = parse()
    except TrajectoryFormatError as error:
        return Record(format=format, error=_located(error, key, None), key=key, notes=notes)
    return Record(format=format, trajectory=trajectory, key=key, notes=(*notes, *found))


def _json_records(document: object, name: str, notes: tuple[str, ...], read_sibling) -> Iterator[Record]:
    if looks_like_summary_info(name, document):
        yield _record(AGENTLAB, lambda: parse_episode(document, read_sibling), notes=notes)
    elif browser_use.looks_like_history(document):
        yield _tool_record(browser_use.FORMAT, lambda: browser_use.parse_history(document, name, read_sibling),
                           notes)
    elif browser_use.looks_like_infinity_result(document):
        if history := browser_use.companion_history(read_sibling):
            yield Record(format=browser_use.INFINITY_RESULT_FORMAT, skipped=f"read with {history}", notes=notes)
        else:
            yield _record(browser_use.INFINITY_RESULT_FORMAT, lambda: browser_use.parse_infinity_result(document),
                          notes=notes)
    elif browser_use.looks_like_infinity_summary(document):
        yield Record(format=browser_use.INFINITY_SUMMARY_FORMAT, summary=browser_use.parse_infinity_summary(document),
                     notes=notes)
    elif webvoyager.looks_like_interact_messages(document):
        yield _tool_record(webvoyager.FORMAT,
                           lambda: webvoyager.parse_interact_messages(document, name, read_sibling), notes)
    elif looks_like_trace(document):
        yield _trace_record(document, name, notes)
    elif online_mind2web.looks_like_result(document):
        yield _tool_record(online_mind2web.RESULTS_FORMAT,
                           lambda: online_mind2web.parse_result(document, name, read_sibling), notes)
    elif reason := online_mind2web.not_trajectories(document):
        yield Record(format=online_mind2web.OTHER_FORMAT, skipped=reason, notes=notes)
    elif who_and_when.looks_like_log(document):
        yield _record(who_and_when.FORMAT, lambda: who_and_when.parse_log(document), notes=notes)
    elif agent_e.looks_like_records(document):
        for position, item in enumerate(document):
            yield _tool_record(agent_e.FORMAT, lambda item=item: agent_e.parse_record(item, name),
                               notes, key=f"[{position}]")
    elif isinstance(document, dict) and document.keys() & {"schema", "task", "steps"}:
        yield _record(CANONICAL_JSON, lambda: canonical_trajectory(document), notes=notes)
    elif isinstance(document, list):
        for position, item in enumerate(document):
            yield _record(CANONICAL_JSON, lambda item=item: canonical_trajectory(item), key=f"[{position}]",
                          notes=notes)
    elif looks_like_html2json(document):
        for key, parsed in parse_html2json(document):
            if isinstance(parsed, TrajectoryFormatError):
                yield Record(format=HTML2JSON, error=parsed, key=key, notes=notes)
            else:
                yield Record(format=HTML2JSON, trajectory=parsed, key=key, notes=(*notes, HTML2JSON_NOTE))
    else:
        yield Record(
            format=CANONICAL_JSON,
            error=TrajectoryFormatError(
                f'expected a "{SCHEMA_ID}" object (with "schema": "{SCHEMA_ID}"), a list of them, '
                'or html2json output ({"example_<id>": ...})'
            ),
            notes=notes,
        )


def _lines(stream: BinaryIO, max_line_bytes: int) -> Iterator[tuple[int, bytes | None]]:
    """(line number, bytes) per line; None for a line over the limit, which is skipped unread."""
    number = 0
    while True:
        line = stream.readline(max_line_bytes + 1)
        if not line:
            return
        number += 1
        if len(line) > max_line_bytes and not line.endswith(b"\n"):
            while line and not line.endswith(b"\n"):
                line = stream.readline(1 << 20)
            yield number, None
        else:
            yield number, line


def _jsonl_records(stream: BinaryIO, max_line_bytes: int) -> Iterator[Record]:
    for number, data in _lines(stream, max_line_bytes):
        if data is None:
            error = TrajectoryFormatError(f"line longer than the limit of {max_line_bytes:,} bytes", line=number)
            yield Record(format=CANONICAL_JSONL, error=error, line=number)
            continue
        text, valid = decode_utf8(data)
        if not text.strip():
            continue
        notes = [] if valid else [NOT_UTF8]
        try:
            document = load_json(text, notes)
        except TrajectoryFormatError as error:
            yield Record(format=CANONICAL_JSONL, error=_located(error, "", number), line=number, notes=tuple(notes))
            continue
        yield _record(CANONICAL_JSONL, lambda document=document: canonical_trajectory(document), line=number,
                      notes=tuple(notes))


def _nothing_beside(relative: str) -> bytes:
    raise FileNotFoundError(relative)


def read_records(name: str, stream: BinaryIO, max_bytes: int, read_sibling=_nothing_beside) -> Iterator[Record]:
    """Every trajectory in the file `name` (its suffix picks the format), as records in file order;
    `read_sibling` reads the files beside it that some tools' layouts keep apart."""
    suffix = name.lower().rsplit(".", 1)[-1]
    if suffix == "jsonl":
        yield from _jsonl_records(stream, max_bytes)
        return
    if suffix in ("html", "htm"):
        text, screenshots, valid = decode_render(stream.read())
        text, replaced = storable_text_of(text)
        notes = (() if valid else (NOT_UTF8,)) + ((f"{UNSTORABLE_REPLACED} ({replaced})",) if replaced else ())
        yield _record(RENDER, lambda: parse_render(text, name, screenshots), notes=notes)
        return
    text, valid = decode_utf8(stream.read())
    notes = [] if valid else [NOT_UTF8]
    try:
        document = load_json(text, notes)
    except TrajectoryFormatError as error:
        if reason := online_mind2web.not_trajectory_lines(text):
            yield Record(format=online_mind2web.OTHER_FORMAT, skipped=reason, notes=tuple(notes))
        else:
            yield Record(format=CANONICAL_JSON, error=error, line=error.line, notes=tuple(notes))
        return
    del text
    yield from _json_records(document, name, tuple(notes), read_sibling)


def prepare(record: Record, read_sibling) -> Record:
    """Decode a trajectory's screenshots (leaving their hashes in its steps) and hash its content:
    the costly part of importing it that needs no database, done wherever the file is read."""
    if record.trajectory is None:
        return record
    try:
        record.images = take_images(record.trajectory, read_sibling)
        record.content_hash = record.trajectory.content_hash()
    except TrajectoryFormatError as error:
        record.trajectory, record.error = None, _located(error, record.key, record.line)
    return record


def prepared_records(source: Source, max_bytes: int) -> Iterator[Record]:
    """Every record of the file `source`, prepared for storing, in file order."""
    with source.open() as stream:
        for record in read_records(source.name, stream, max_bytes, source.read_sibling):
            yield prepare(record, source.read_sibling)


def read_file(source: Source, max_bytes: int) -> list[Record]:
    """`prepared_records` as a list: what a worker process of a parsing pool sends back."""
    return list(prepared_records(source, max_bytes))
