"""Gold trajectory files: the published xlsx sheet, CSV with the same columns, and `gold/v1` JSON.

Django-free: readers turn a file into `GoldFile` (blocks of gold steps plus the rows that could
not be placed, each with its reason); writers turn blocks back into the same formats, so a
dataset round-trips. The sheet rules follow the real file (FORMATS.md section 3):

- headers with or without the dot (`Task No.` / `Task No`), any case;
- a blank `Task No.` continues the task above;
- `Step No.` is kept as a label only: order is row order, whatever is written there;
- a task whose rows appear in two separate blocks is two gold trajectories, unless the later
  block's numbering continues the earlier one's; so is a run of rows whose `Step No.` really
  starts again (a 1 after a higher number);
- numbering anomalies are resolved as a reviewer would read them and each one is reported as a
  `GoldAnomaly` (rows all numbered 1, a first step left at the end of the task before, a last
  step left at the start of the task after, a block without step 1, repeated numbers, a one-row
  piece inside a task's rows, a block continuing an earlier one): see `_NumberingResolver`;
- every sentence the reader reports is one of `ANOMALY_MESSAGES` or `UNPLACED_MESSAGES`;
- sheets are written with `spreadsheet_cell` (a text that would open as a formula gets a
  leading quote) and read with `spreadsheet_text`, which takes that quote off again;
- exports add `Gold No.` (which gold trajectory a row belongs to) and the structured columns
  (`Action Type`, `Element Role`, `Element Name`, `Value`) plus `Benchmark`; when a sheet has
  `Gold No.`, it alone separates gold trajectories of the same task.
"""

import csv
import io
import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import jsonschema
import openpyxl

from trajectories.formats.spreadsheet import spreadsheet_cell, spreadsheet_text
from trajectories.formats.wording import count_of
from trajectories.formats.text import CsvFieldTooLong, csv_rows, loads, storable_text_of

from .gold_records import GoldBlock, GoldFile, GoldFormatError, GoldStepRecord, UnplacedRow
from .mind2web import is_mind2web_actions, read_mind2web_actions
from .sentences import ACTION_TYPES

GOLD_SCHEMA_ID = "gold/v1"
GOLD_SCHEMA_PATH = Path(__file__).parent / "schemas" / "gold-v1.schema.json"
FORMATS = ("xlsx", "csv", "json")

TASK_COLUMN = "Task No."
STEP_COLUMN = "Step No."
TEXT_COLUMN = "Text"
GOLD_COLUMN = "Gold No."
ACTION_COLUMN = "Action Type"
ROLE_COLUMN = "Element Role"
NAME_COLUMN = "Element Name"
VALUE_COLUMN = "Value"
BENCHMARK_COLUMN = "Benchmark"
SHEET_COLUMNS = (
    TASK_COLUMN, STEP_COLUMN, TEXT_COLUMN, GOLD_COLUMN, ACTION_COLUMN, ROLE_COLUMN, NAME_COLUMN, VALUE_COLUMN,
    BENCHMARK_COLUMN,
)
REQUIRED_COLUMNS = (TASK_COLUMN, STEP_COLUMN, TEXT_COLUMN)


# Why a row is not placed in any gold; filled by `unplaced_reason`.
UNPLACED_MESSAGES = {
    "not_a_task_id": "Task No. {task_id!r} is not a task id",
    "no_task_above": "blank Task No. with no task above it to continue",
    "empty_text": "empty Text: no step to record",
    "unknown_action_type": "unknown Action Type {action_type!r}; expected one of {known}",
    "missing_task": "task {task_id} does not exist in benchmark {benchmark!r}",
}


def unplaced_reason(name: str, **values) -> str:
    return UNPLACED_MESSAGES[name].format(**values)


def detect_format(name: str) -> str:
    suffix = Path(name).suffix.lower().lstrip(".")
    if suffix in ("xlsx", "xlsm"):
        return "xlsx"
    if suffix in FORMATS:
        return suffix
    raise GoldFormatError(f"unknown gold file type {suffix!r}; expected .xlsx, .csv or .json", where=name)


def read_gold_file(path: Path, *, benchmark: str = "webarena") -> GoldFile:
    fmt = detect_format(path.name)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise GoldFormatError(f"cannot read the file ({exc.strerror})", where=str(path)) from exc
    return read_gold_bytes(data, fmt, name=path.name, benchmark=benchmark)


def read_gold_bytes(data: bytes, fmt: str, *, name: str, benchmark: str = "webarena") -> GoldFile:
    try:
        if fmt == "xlsx":
            return _read_sheet(_xlsx_rows(data), "xlsx", benchmark, row_word="row")
        if fmt == "csv":
            return _read_sheet(_csv_rows(data), "csv", benchmark, row_word="line")
        if fmt == "json":
            return _read_json(data, benchmark)
    except GoldFormatError as exc:
        raise GoldFormatError(str(exc), where=name) from exc
    raise GoldFormatError(f"unknown gold format {fmt!r}", where=name)


# Sheets (xlsx and CSV) ------------------------------------------------------------------------


def _xlsx_rows(data: bytes) -> Iterator[tuple[int, tuple]]:
    try:
        workbook = openpyxl.load_workbook(io.BytesIO(data), read_only=True, data_only=True)
    except Exception as exc:  # noqa: BLE001 - a bad zip, bad XML, a missing part: all mean "not a workbook"
        raise GoldFormatError(f"not a readable xlsx workbook ({type(exc).__name__}: {exc})") from exc
    try:
        sheet = workbook.worksheets[0]
        for number, row in enumerate(sheet.iter_rows(values_only=True), start=1):
            yield number, row
    finally:
        workbook.close()


def _decode(data: bytes) -> str:
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        # Spreadsheet programs on Windows still write CSV in cp1252.
        text = data.decode("cp1252", errors="replace")
    return storable_text_of(text)[0]


def _csv_rows(data: bytes) -> Iterator[tuple[int, tuple]]:
    start, header = 1, None
    try:
        for end, row in csv_rows(_decode(data)):
            header = header or row
            yield start, tuple(row)
            start = end + 1
    except CsvFieldTooLong as exc:
        column = header[exc.column] if header and exc.column < len(header) else f"column {exc.column + 1}"
        raise GoldFormatError(f"line {exc.line}: {column}: {exc}") from exc
    except csv.Error as exc:
        raise GoldFormatError(f"line {start}: malformed CSV ({exc})") from exc


def _header_key(value) -> str:
    return re.sub(r"[\s_.]+", " ", str(value or "")).strip().lower()


_HEADER_KEYS = {_header_key(column): column for column in SHEET_COLUMNS}


def _cell(value) -> str:
    """A cell as text: Excel gives 809 or 809.0 for the same task number; the quote our exports put
    before formula-looking text is taken off."""
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return spreadsheet_text(str(value).strip())


def _read_header(rows: Iterator[tuple[int, tuple]], row_word: str) -> dict[str, int]:
    for number, row in rows:
        if not any(_cell(value) for value in row):
            continue
        columns = {}
        for position, value in enumerate(row):
            column = _HEADER_KEYS.get(_header_key(value))
            if column and column not in columns:
                columns[column] = position
        missing = [column for column in REQUIRED_COLUMNS if column not in columns]
        if missing:
            found = ", ".join(repr(_cell(value)) for value in row if _cell(value)) or "nothing"
            raise GoldFormatError(
                f"{row_word} {number}: header must have columns {', '.join(REQUIRED_COLUMNS)} "
                f"(with or without the dot); found {found}"
            )
        return columns
    raise GoldFormatError("the file is empty: no header row")


_TASK_ID = re.compile(r"\A[A-Za-z0-9_.:/-]+\Z")


@dataclass
class _Row:
    """One data row that carries a step, before it is cut into gold blocks."""

    number: int
    benchmark: str
    task_id: str
    gold_no: str
    step: GoldStepRecord

    @property
    def step_number(self) -> int | None:
        return int(self.step.label) if self.step.label.isdigit() else None


class _SheetReader:
    """Checks each data row, keeping the placeable ones for `blocks` to cut into gold trajectories."""

    def __init__(self, columns: dict[str, int], benchmark: str, row_word: str):
        self.columns = columns
        self.default_benchmark = benchmark
        self.row_word = row_word
        self.rows: list[_Row] = []
        self.unplaced: list[UnplacedRow] = []

    def get(self, row: tuple, column: str) -> str:
        position = self.columns.get(column)
        if position is None or position >= len(row):
            return ""
        return _cell(row[position])

    def add(self, number: int, row: tuple) -> None:
        if not any(_cell(value) for value in row):
            return
        where = f"{self.row_word} {number}"
        task_id = self.get(row, TASK_COLUMN)
        text = self.get(row, TEXT_COLUMN)
        gold_no = self.get(row, GOLD_COLUMN)
        benchmark = self.get(row, BENCHMARK_COLUMN) or self.default_benchmark
        action_type = self.get(row, ACTION_COLUMN).lower()
        if task_id and not _TASK_ID.match(task_id):
            self.unplaced.append(UnplacedRow(where, unplaced_reason("not_a_task_id", task_id=task_id)))
            return
        if not task_id:
            if not self.rows:
                self.unplaced.append(UnplacedRow(where, unplaced_reason("no_task_above")))
                return
            above = self.rows[-1]
            task_id, benchmark, gold_no = above.task_id, above.benchmark, gold_no or above.gold_no
        if not text:
            self.unplaced.append(UnplacedRow(where, unplaced_reason("empty_text")))
            return
        if action_type and action_type not in ACTION_TYPES:
            self.unplaced.append(UnplacedRow(where, unplaced_reason(
                "unknown_action_type", action_type=action_type, known=", ".join(ACTION_TYPES))))
            return
        step = GoldStepRecord(
            text=text, label=self.get(row, STEP_COLUMN), action_type=action_type,
            element_role=self.get(row, ROLE_COLUMN), element_name=self.get(row, NAME_COLUMN),
            value=self.get(row, VALUE_COLUMN),
        )
        self.rows.append(_Row(number, benchmark, task_id, gold_no, step))

    def blocks(self) -> tuple[list[GoldBlock], list["GoldAnomaly"]]:
        if GOLD_COLUMN in self.columns:
            # An exported sheet: `Gold No.` alone separates gold trajectories of a task.
            return _as_blocks(_runs(self.rows, by_gold_no=True), self.row_word), []
        resolver = _NumberingResolver(self.row_word)
        return _as_blocks(resolver.resolve(_runs(self.rows)), self.row_word), resolver.anomalies


def _runs(rows: list[_Row], *, by_gold_no: bool = False) -> list[list[_Row]]:
    """Consecutive rows of the same task (and `Gold No.`)."""
    runs: list[list[_Row]] = []
    for row in rows:
        previous = runs[-1][-1] if runs else None
        if (previous is None or (previous.benchmark, previous.task_id) != (row.benchmark, row.task_id)
                or (by_gold_no and previous.gold_no != row.gold_no)):
            runs.append([])
        runs[-1].append(row)
    return runs


def _as_blocks(groups: list[list[_Row]], row_word: str) -> list[GoldBlock]:
    ordinals: dict[tuple[str, str], int] = {}
    blocks = []
    for group in groups:
        key = (group[0].benchmark, group[0].task_id)
        ordinals[key] = ordinals.get(key, 0) + 1
        numbers = [row.number for row in group]
        blocks.append(GoldBlock(
            task_id=key[1], benchmark=key[0], ordinal=ordinals[key],
            where=f"{row_word}s {min(numbers)}-{max(numbers)}",
            steps=[row.step for row in group], rows=[f"{row_word} {row.number}" for row in group],
        ))
    return blocks


@dataclass
class GoldAnomaly:
    """A numbering anomaly of a sheet that the reader resolved, and how."""

    kind: str
    task_id: str
    benchmark: str
    rows: list[int]
    action: str
    row_word: str = "row"

    @property
    def where(self) -> str:
        numbers = ", ".join(map(str, self.rows))
        return f"{self.row_word}{'s' if len(self.rows) > 1 else ''} {numbers}"

    def __str__(self) -> str:
        return f"task {self.task_id}, {self.where}: {self.action}"


class AnomalyKind:
    ALL_NUMBERED_ONE = "all_numbered_one"
    FIRST_STEP_OF_NEXT_TASK = "first_step_of_next_task"
    LAST_STEP_OF_PREVIOUS_TASK = "last_step_of_previous_task"
    NO_FIRST_STEP = "no_first_step"
    REPEATED_NUMBER = "repeated_number"
    DUPLICATE_FIRST_STEP = "duplicate_first_step"
    LONE_ROW = "lone_row"
    CONTINUED_BLOCK = "continued_block"


# What the report says of each resolution, by (kind, variant); filled by `_NumberingResolver.note`.
ANOMALY_MESSAGES = {
    (AnomalyKind.ALL_NUMBERED_ONE, ""):
        "all {count} rows are numbered 1: read as one gold of {steps} in row order",
    (AnomalyKind.FIRST_STEP_OF_NEXT_TASK, ""):
        "numbered 1 at the end of task {task_id}, while task {next_task_id} starts at step 2: moved to task "
        "{next_task_id} as its step 1",
    (AnomalyKind.LAST_STEP_OF_PREVIOUS_TASK, ""):
        "numbered {number} before task {next_task_id}'s steps 1.., continuing task {task_id} (which ends at step "
        "{previous_number}): moved to task {task_id} as its last step",
    (AnomalyKind.NO_FIRST_STEP, ""):
        "starts at step {number} with no step 1: read as one gold of {steps}",
    (AnomalyKind.REPEATED_NUMBER, ""):
        "step number {number} repeated: kept in one gold in row order",
    (AnomalyKind.DUPLICATE_FIRST_STEP, ""):
        "two identical step-1 rows in a row: kept in one gold, both as written",
    (AnomalyKind.LONE_ROW, "after"):
        "a single row numbered {label} cannot stand as a gold trajectory: kept as the last step of the gold above it",
    (AnomalyKind.LONE_ROW, "before"):
        "a single row numbered {label} before a block starting at 1: kept as the first step of that gold",
    (AnomalyKind.CONTINUED_BLOCK, ""):
        "a separate block of {row_count} whose numbering ({number}..) continues the task's gold above, which ends at "
        "step {previous_number}: joined to that gold",
}

# Step numbers that start a gold trajectory: a separate block starting with one is a gold of its own.
FIRST_STEP_NUMBERS = (0, 1)


def _last_number(rows: list[_Row]) -> int | None:
    return next((row.step_number for row in reversed(rows) if row.step_number is not None), None)


class _NumberingResolver:
    """Cuts runs of rows into gold trajectories as a reviewer would read the numbering.

    A second gold trajectory of a task starts where its numbering really starts again: a
    separate block of rows (after other tasks' rows) that does not continue the numbering of the
    task's block before it, or a 1 after a higher number within the task's rows. A one-row piece
    within a task's rows joins its neighbour, and a separate block whose numbering continues the
    task's earlier block joins that block. Every resolution is recorded as a GoldAnomaly.
    """

    def __init__(self, row_word: str):
        self.row_word = row_word
        self.anomalies: list[GoldAnomaly] = []

    def note(self, kind: str, rows: list[_Row], /, variant: str = "", **values) -> None:
        """Record the anomaly of `rows` (of their first row's task), worded by its message with `values`."""
        action = ANOMALY_MESSAGES[kind, variant].format(**values)
        self.anomalies.append(GoldAnomaly(kind, rows[0].task_id, rows[0].benchmark, [row.number for row in rows],
                                          action, self.row_word))

    def resolve(self, runs: list[list[_Row]]) -> list[list[_Row]]:
        self._fix_boundaries(runs)
        blocks: list[list[_Row]] = []
        for run in filter(None, runs):
            blocks.extend(self._split(run))
        blocks = self._join_continuations(blocks)
        for block in blocks:
            self._describe(block)
        return blocks

    def _move(self, row: _Row, to: _Row) -> None:
        row.task_id, row.benchmark = to.task_id, to.benchmark

    def _fix_boundaries(self, runs: list[list[_Row]]) -> None:
        """A step number that belongs to the neighbouring task moves there."""
        for previous, following in zip(runs, runs[1:]):
            if len(previous) < 2 or not following:
                continue
            last, first = previous[-1], following[0]
            before = _last_number(previous[:-1])
            if last.step_number == 1 and (before or 0) >= 2 and first.step_number == 2:
                self._move(last, first)
                following.insert(0, previous.pop())
                self.note(AnomalyKind.FIRST_STEP_OF_NEXT_TASK, [last], task_id=previous[0].task_id,
                          next_task_id=first.task_id)
            elif (len(following) >= 2 and (first.step_number or 0) >= 2 and following[1].step_number == 1
                  and _last_number(previous) == first.step_number - 1):
                self._move(first, last)
                previous.append(following.pop(0))
                self.note(AnomalyKind.LAST_STEP_OF_PREVIOUS_TASK, [first], number=first.step_number,
                          next_task_id=following[0].task_id, task_id=last.task_id,
                          previous_number=first.step_number - 1)

    def _split(self, run: list[_Row]) -> list[list[_Row]]:
        """Cut a run where the numbering starts again at 1; a one-row piece joins its neighbour."""
        pieces = [[run[0]]]
        last = run[0].step_number
        for row in run[1:]:
            if row.step_number == 1 and (last or 0) >= 2:
                pieces.append([])
            pieces[-1].append(row)
            if row.step_number is not None:
                last = row.step_number
        joined: list[list[_Row]] = []
        for position, piece in enumerate(pieces):
            if len(piece) == 1 and len(pieces) > 1:
                row = piece[0]
                label = row.step.label or "(blank)"
                if joined:
                    joined[-1].append(row)
                    self.note(AnomalyKind.LONE_ROW, piece, variant="after", label=label)
                else:
                    pieces[position + 1].insert(0, row)
                    self.note(AnomalyKind.LONE_ROW, piece, variant="before", label=label)
                continue
            joined.append(piece)
        return joined

    def _join_continuations(self, blocks: list[list[_Row]]) -> list[list[_Row]]:
        """A separate block of a task whose numbering continues the task's block before it belongs
        to that block; any other separate block (one starting again at step 1, above all) is a gold
        of its own, however short."""
        result: list[list[_Row]] = []
        latest: dict[tuple[str, str], list[_Row]] = {}
        for block in blocks:
            key = (block[0].benchmark, block[0].task_id)
            earlier = latest.get(key)
            if earlier is not None:
                first, last = block[0].step_number, _last_number(earlier)
                if first is not None and last is not None and first == last + 1 and first not in FIRST_STEP_NUMBERS:
                    earlier.extend(block)
                    self.note(AnomalyKind.CONTINUED_BLOCK, block, row_count=count_of(len(block), "row"), number=first,
                              previous_number=last)
                    continue
            latest[key] = block
            result.append(block)
        return result

    def _describe(self, block: list[_Row]) -> None:
        """Numbering oddities kept as they are (order is row order), reported once per gold."""
        numbers = [row.step_number for row in block]
        steps = count_of(len(block), "step")
        if len(block) > 1 and all(number == 1 for number in numbers):
            self.note(AnomalyKind.ALL_NUMBERED_ONE, block, count=len(block), steps=steps)
            return
        known = [number for number in numbers if number is not None]
        if known and not set(known) & set(FIRST_STEP_NUMBERS):
            self.note(AnomalyKind.NO_FIRST_STEP, block, number=known[0], steps=steps)
        for previous, row in zip(block, block[1:]):
            if row.step_number is None or row.step_number != previous.step_number:
                continue
            if row.step_number == 1 and row.step.text == previous.step.text:
                self.note(AnomalyKind.DUPLICATE_FIRST_STEP, [previous, row])
            else:
                self.note(AnomalyKind.REPEATED_NUMBER, [previous, row], number=row.step_number)


def _read_sheet(rows: Iterable[tuple[int, tuple]], fmt: str, benchmark: str, *, row_word: str) -> GoldFile:
    rows = iter(rows)
    reader = _SheetReader(_read_header(rows, row_word), benchmark, row_word)
    for number, row in rows:
        reader.add(number, row)
    blocks, anomalies = reader.blocks()
    return GoldFile(format=fmt, blocks=blocks, unplaced=reader.unplaced, anomalies=anomalies)


# JSON -----------------------------------------------------------------------------------------


@cache
def gold_json_schema() -> dict:
    return json.loads(GOLD_SCHEMA_PATH.read_text(encoding="utf-8"))


def _json_path(error: jsonschema.ValidationError) -> str:
    parts = [f"[{item}]" if isinstance(item, int) else f".{item}" for item in error.absolute_path]
    return "".join(parts).lstrip(".") or "(document)"


def _read_json(data: bytes, benchmark: str) -> GoldFile:
    try:
        document, _ = loads(_decode(data))
    except json.JSONDecodeError as exc:
        raise GoldFormatError(f"line {exc.lineno} column {exc.colno}: invalid JSON ({exc.msg})") from exc
    if is_mind2web_actions(document):
        return read_mind2web_actions(document)
    validator = jsonschema.Draft202012Validator(gold_json_schema())
    errors = sorted(validator.iter_errors(document), key=lambda e: list(map(str, e.absolute_path)))
    if errors:
        raise GoldFormatError(f"{_json_path(errors[0])}: {errors[0].message}")
    result = GoldFile(format="json")
    ordinals: dict[tuple[str, str], int] = {}
    for position, entry in enumerate(document["gold"]):
        key = (entry.get("benchmark") or benchmark, str(entry["task_id"]))
        ordinals[key] = ordinals.get(key, 0) + 1
        where = f"gold[{position}]"
        steps = [
            GoldStepRecord(
                text=step["text"].strip(),
                label=str(step.get("label", "")),
                action_type=step.get("action_type", ""),
                element_role=step.get("element_role", ""),
                element_name=step.get("element_name", ""),
                value=step.get("value", ""),
            )
            for step in entry["steps"]
        ]
        result.blocks.append(
            GoldBlock(
                task_id=key[1],
                benchmark=key[0],
                ordinal=ordinals[key],
                where=where,
                steps=steps,
                cannot_complete=entry.get("cannot_complete", False),
                cannot_complete_reason=entry.get("cannot_complete_reason", "") if entry.get("cannot_complete") else "",
                final_answer=entry.get("final_answer", ""),
                annotator=entry.get("annotator", ""),
                status=entry.get("status", ""),
                rows=[f"{where}.steps[{index}]" for index in range(len(steps))],
            )
        )
    return result


# Writers --------------------------------------------------------------------------------------


def _sheet_rows(blocks: Iterable[GoldBlock]) -> Iterator[list]:
    """Rows as written: numeric task ids stay numbers (as in the published sheet), text is made safe."""
    for gold_no, block in enumerate(blocks, start=1):
        task_id = int(block.task_id) if block.task_id.isdigit() else block.task_id
        for index, step in enumerate(block.steps, start=1):
            yield [
                spreadsheet_cell(value) for value in (
                    task_id, step.label or str(index), step.text, gold_no, step.action_type, step.element_role,
                    step.element_name, step.value, block.benchmark,
                )
            ]


def write_xlsx(blocks: Iterable[GoldBlock], stream) -> None:
    workbook = openpyxl.Workbook(write_only=True)
    sheet = workbook.create_sheet("Gold")
    sheet.append(list(SHEET_COLUMNS))
    for row in _sheet_rows(blocks):
        sheet.append(row)
    workbook.save(stream)


def write_csv(blocks: Iterable[GoldBlock], stream) -> None:
    """Write CSV text to a text stream."""
    writer = csv.writer(stream, lineterminator="\n")
    writer.writerow(SHEET_COLUMNS)
    writer.writerows(_sheet_rows(blocks))


def gold_document(blocks: Iterable[GoldBlock]) -> dict:
    gold = []
    for block in blocks:
        entry = {"benchmark": block.benchmark, "task_id": block.task_id}
        if block.annotator:
            entry["annotator"] = block.annotator
        if block.status:
            entry["status"] = block.status
        entry["cannot_complete"] = block.cannot_complete
        if block.cannot_complete:
            entry["cannot_complete_reason"] = block.cannot_complete_reason
        if block.final_answer:
            entry["final_answer"] = block.final_answer
        entry["steps"] = [
            {name: value for name, value in vars(step).items() if value or name == "text"} for step in block.steps
        ]
        gold.append(entry)
    return {"schema": GOLD_SCHEMA_ID, "gold": gold}


def write_json(blocks: Iterable[GoldBlock], stream) -> None:
    """Write `gold/v1` JSON to a text stream."""
    json.dump(gold_document(blocks), stream, ensure_ascii=False, indent=2)
    stream.write("\n")


def export_bytes(blocks: Iterable[GoldBlock], fmt: str) -> bytes:
    """The whole file in one of FORMATS (CSV and JSON as UTF-8)."""
    if fmt == "xlsx":
        stream = io.BytesIO()
        write_xlsx(blocks, stream)
        return stream.getvalue()
    writers = {"csv": write_csv, "json": write_json}
    if fmt not in writers:
        raise GoldFormatError(f"unknown gold format {fmt!r}; expected one of {', '.join(FORMATS)}")
    text = io.StringIO()
    writers[fmt](blocks, text)
    return text.getvalue().encode("utf-8")
