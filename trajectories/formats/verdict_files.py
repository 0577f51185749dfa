"""Read per-task verdict files: harness outcomes (results-only runs) and human outcome grades.

Both come as CSV, a JSON list of objects (or one object holding such a list) or JSONL. Rows
are plain dicts keyed by column name; every error names the file, the line and the column.

Outcomes: one row per (run, task) with a pass/fail verdict, e.g. a published leaderboard's
`{"t": task_id, "m": agent, "s": 0 | 1}` records. Grades: either *wide* (one row per task, one
column per grader with the grader's note in the column beside it, as AgentOccam's human
assessment CSV) or *long* (one row per task and grader: task, grader, grade, note).

A row whose task id is a label (`Win Rate`, `Average`, `All`, `Total`) or empty summarises the
rows above it, as published files end: it is skipped and named in the report, never read as a
task. Every other row must be read, or the file is refused.
"""

import csv
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from trajectories.verdict_agreement import grade_value

from .canonical import TrajectoryFormatError
from .text import CsvFieldTooLong, csv_rows, name_key, storable_text_of
from .values import load_json

# The headers a verdict file's columns are known by (any case), the first one found winning.
TASK_HEADERS = ("task_id", "task id", "task", "t", "id")
RUN_HEADERS = ("run", "m", "agent", "model", "run_name")
SUCCESS_HEADERS = ("success", "s", "pass", "passed", "result", "score", "reward", "verdict")
GRADER_HEADERS = ("grader", "annotator", "rater")
GRADE_HEADERS = ("grade", "value", "mark", "score")
NOTE_HEADERS = ("note", "comment")
# Headers of the columns of a wide grades file that summarise the graders rather than being one.
SUMMARY_HEADERS = ("average", "mean", "avg", "consensus", "total", "sum")
# Task cells of summary rows (any case); an empty task cell marks one too.
SUMMARY_LABELS = ("win rate", "success rate", "average", "avg", "mean", "all", "total", "overall", "sum")
TRUE_WORDS = {"1", "1.0", "true", "pass", "passed", "yes", "success", "y", "t"}
FALSE_WORDS = {"0", "0.0", "false", "fail", "failed", "no", "failure", "n", "f"}


class VerdictFileError(ValueError):
    """A file that cannot be read as verdicts; says where: a line number (CSV, JSONL) or "item N" (JSON)."""

    def __init__(self, source: str, message: str, line: int | str | None = None):
        self.source, self.line = source, line
        super().__init__(f"{source}, {place(line)}: {message}" if line else f"{source}: {message}")


def place(line: int | str) -> str:
    """A record's place in its file: `line 12`, or `item 3` of a JSON list."""
    return line if isinstance(line, str) else f"line {line}"


@dataclass(frozen=True)
class OutcomeRecord:
    run: str
    task_id: str
    success: bool
    line: int | str


@dataclass(frozen=True)
class GradeRecord:
    task_id: str
    grader: str
    value: float
    note: str
    line: int | str


@dataclass(frozen=True)
class SummaryRow:
    """A row that summarises the others (a win rate, an average), skipped."""

    line: int | str
    label: str  # its task cell as written, empty when blank

    def __str__(self):
        return f"{place(self.line)} ({self.label or 'no task id'})"


@dataclass(frozen=True)
class VerdictRows:
    records: list  # OutcomeRecord or GradeRecord, in file order
    summary_rows: list[SummaryRow]


def _without_summaries(rows: list[tuple[int | str, dict]], task_key: str) -> tuple[list, list[SummaryRow]]:
    """(the task rows, the summary rows) of a file's rows."""
    task_rows, summaries = [], []
    for line, row in rows:
        value = row.get(task_key)
        if value is None or (isinstance(value, str) and value.strip().lower() in SUMMARY_LABELS + ("",)):
            summaries.append(SummaryRow(line, (value or "").strip()))
        else:
            task_rows.append((line, row))
    return task_rows, summaries


def _decoded(data: bytes, source: str) -> str:
    try:
        return storable_text_of(data.decode("utf-8-sig"))[0]
    except UnicodeDecodeError as error:
        raise VerdictFileError(source, f"not UTF-8 text (byte {error.start})") from None


def _csv_rows(text: str, source: str) -> tuple[list[str], list[tuple[int, dict]]]:
    rows, columns = [], None
    try:
        for line, cells in csv_rows(text):
            if columns is None:
                columns = cells
                continue
            if len(cells) > len(columns):
                raise VerdictFileError(source, "more cells than header columns", line)
            if any(cell.strip() for cell in cells):
                row = dict(zip(columns, cells + [""] * (len(columns) - len(cells))))
                rows.append((line, {key: value.strip() for key, value in row.items()}))
    except CsvFieldTooLong as error:
        column = columns[error.column] if columns and error.column < len(columns) else f"column {error.column + 1}"
        raise VerdictFileError(source, f"{column}: {error}", error.line) from None
    except csv.Error as error:
        raise VerdictFileError(source, f"malformed CSV ({error})") from None
    if not columns:
        raise VerdictFileError(source, "no header row")
    return [name.strip() for name in columns], rows


def _json_rows(document, source: str) -> list[tuple[str, dict]]:
    if isinstance(document, dict):
        lists = [value for value in document.values() if isinstance(value, list)]
        if len(lists) != 1:
            raise VerdictFileError(source, "expected a list of objects, or an object holding one such list")
        document = lists[0]
    if not isinstance(document, list):
        raise VerdictFileError(source, "expected a list of objects")
    rows = []
    for index, item in enumerate(document, start=1):
        if not isinstance(item, dict):
            raise VerdictFileError(source, "not an object", f"item {index}")
        rows.append((f"item {index}", item))
    return rows


def read_rows(source: str, data: bytes) -> tuple[list[str], list[tuple[int | str, dict]]]:
    """(column names, [(line number, or "item N" in a JSON list, row)]) of a CSV, JSON or JSONL file."""
    text = _decoded(data, source)
    stripped = text.lstrip()
    if not stripped:
        raise VerdictFileError(source, "the file is empty")
    lower = source.lower()
    if lower.endswith(".jsonl") or (stripped[0] == "{" and "\n{" in stripped.strip() and not lower.endswith(".json")):
        rows = []
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                item = load_json(line)
            except TrajectoryFormatError as error:
                raise VerdictFileError(source, error.message, number) from None
            if not isinstance(item, dict):
                raise VerdictFileError(source, "expected one JSON object per line", number)
            rows.append((number, item))
    elif stripped[0] in "[{":
        try:
            document = load_json(text)
        except TrajectoryFormatError as error:
            raise VerdictFileError(source, error.message, error.line) from None
        rows = _json_rows(document, source)
    else:
        return _csv_rows(text, source)
    columns = list(dict.fromkeys(key for _, row in rows for key in row))
    return columns, rows


def _find(columns: Sequence[str], wanted: str | None, candidates: Sequence[str], what: str, source: str,
          required: bool = True) -> str | None:
    """The column named `wanted`, else the first column whose name is one of `candidates` (any case)."""
    if wanted:
        if wanted not in columns:
            raise VerdictFileError(source, f"no column {wanted!r} for the {what}; columns: {', '.join(columns)}")
        return wanted
    by_name = {column.strip().lower(): column for column in columns}
    for candidate in candidates:
        if candidate in by_name:
            return by_name[candidate]
    if required:
        raise VerdictFileError(
            source, f"no {what} column (looked for {', '.join(candidates)}); name it with the option "
                    f"for the {what} column. Columns: {', '.join(columns)}")
    return None


def _task_id(value, source: str, line: int, column: str) -> str:
    if isinstance(value, bool | dict | list):
        raise VerdictFileError(source, f"{column}: {value!r} is not a task id", line)
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return str(value).strip()


def parse_success(value, source: str = "", line: int | None = None, column: str = "success") -> bool:
    """A pass/fail verdict from 1/0, true/false, PASS/FAIL, yes/no (any case)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float) and value in (0, 1):
        return bool(value)
    word = str(value).strip().lower()
    if word in TRUE_WORDS:
        return True
    if word in FALSE_WORDS:
        return False
    raise VerdictFileError(source, f"{column}: {value!r} is not a pass/fail verdict (1/0, true/false, pass/fail)",
                           line)


def parse_outcomes(source: str, data: bytes, *, run: str = "", run_column: str = "", task_column: str = "",
                   success_column: str = "") -> VerdictRows:
    """Per-task verdicts, one record per row. With a run column, `run` keeps only that run's rows;
    without one, `run` names the run of every row (and is then required)."""
    columns, rows = read_rows(source, data)
    run_key = _find(columns, run_column, RUN_HEADERS, "run", source, required=bool(run_column) or not run)
    task_key = _find(columns, task_column, TASK_HEADERS, "task", source)
    success_key = _find(columns, success_column, SUCCESS_HEADERS, "success", source)
    rows, summaries = _without_summaries(rows, task_key)
    records, seen = [], {}
    for line, row in rows:
        row_run = str(row.get(run_key, "")).strip() if run_key else run
        if not row_run:
            raise VerdictFileError(source, f"{run_key}: no run name", line)
        if run_key and run and row_run != run:
            continue
        task_id = _task_id(row.get(task_key), source, line, task_key)
        if success_key not in row:
            raise VerdictFileError(source, f"{success_key}: missing", line)
        success = parse_success(row[success_key], source, line, success_key)
        key = (row_run, task_id)
        if key in seen:
            raise VerdictFileError(
                source, f"task {task_id} of run {row_run!r} given twice (first on {place(seen[key])})", line)
        seen[key] = line
        records.append(OutcomeRecord(row_run, task_id, success, line))
    if not records:
        raise VerdictFileError(source, f"no verdicts for run {run!r}" if run else "no verdicts")
    return VerdictRows(records, summaries)


def _grader_name(header: str) -> str:
    """"Alice (Correct: 1; Partially Correct: 0.5; Incorrect: 0)" -> "Alice"."""
    return re.sub(r"\s*\(.*\)\s*$", "", header).strip()


def _is_note(header: str) -> bool:
    return any(header.strip().lower().endswith(word) for word in NOTE_HEADERS + ("notes", "comments"))


def _wide_grades(source, columns, rows, task_key) -> list[GradeRecord]:
    graders: list[tuple[str, str, str | None]] = []  # (name, grade column, note column)
    for index, column in enumerate(columns):
        if column == task_key or _is_note(column) or column.strip().lower() in SUMMARY_HEADERS:
            continue
        following = columns[index + 1] if index + 1 < len(columns) else None
        note = following if following is not None and _is_note(following) else None
        name = _grader_name(column)
        if not name:
            raise VerdictFileError(source, f"column {column!r}: no grader name", 1)
        graders.append((name, column, note))
    if not graders:
        raise VerdictFileError(source, "no grader columns beside the task column")
    records = []
    for line, row in rows:
        task_id = _task_id(row.get(task_key), source, line, task_key)
        for name, column, note_column in graders:
            raw = row.get(column)
            if raw in (None, ""):
                continue
            try:
                value = grade_value(raw)
            except ValueError as error:
                raise VerdictFileError(source, f"{column}: {error}", line) from None
            note = str(row.get(note_column) or "").strip() if note_column else ""
            records.append(GradeRecord(task_id, name, value, note, line))
    return records


def _long_grades(source, columns, rows, task_key, grader_key) -> list[GradeRecord]:
    grade_key = _find(columns, None, GRADE_HEADERS, "grade", source)
    note_key = _find(columns, None, NOTE_HEADERS, "note", source, required=False)
    records = []
    for line, row in rows:
        task_id = _task_id(row.get(task_key), source, line, task_key)
        grader = str(row.get(grader_key) or "").strip()
        if not grader:
            raise VerdictFileError(source, f"{grader_key}: no grader name", line)
        try:
            value = grade_value(row.get(grade_key))
        except ValueError as error:
            raise VerdictFileError(source, f"{grade_key}: {error}", line) from None
        note = str(row.get(note_key) or "").strip() if note_key else ""
        records.append(GradeRecord(task_id, grader, value, note, line))
    return records


def _one_spelling_per_grader(source, records: list[GradeRecord]) -> list[GradeRecord]:
    """Names that differ only in case, width or invisible characters are one grader, under the first
    spelling met: `ANN` and `ann` followed by a zero-width space are `ann`'s grades, not two graders."""
    spellings: dict[str, str] = {}
    for record in records:
        key = name_key(record.grader)
        if not key:
            raise VerdictFileError(source, f"grader {record.grader!r}: no visible name", record.line)
        spellings.setdefault(key, record.grader)
    return [replace(record, grader=spellings[name_key(record.grader)]) for record in records]


def parse_grades(source: str, data: bytes) -> VerdictRows:
    """Graders' marks per task, from a wide or a long file (a `grader` column makes it long)."""
    columns, rows = read_rows(source, data)
    task_key = _find(columns, None, TASK_HEADERS, "task", source)
    grader_key = _find(columns, None, GRADER_HEADERS, "grader", source, required=False)
    rows, summaries = _without_summaries(rows, task_key)
    records = (_long_grades(source, columns, rows, task_key, grader_key) if grader_key
               else _wide_grades(source, columns, rows, task_key))
    records = _one_spelling_per_grader(source, records)
    seen = {}
    for record in records:
        key = (record.task_id, record.grader)
        if key in seen:
            raise VerdictFileError(source, f"grader {record.grader!r} graded task {record.task_id} twice (first on "
                                           f"{place(seen[key])})", record.line)
        seen[key] = record.line
    if not records:
        raise VerdictFileError(source, "no grades")
    return VerdictRows(records, summaries)
