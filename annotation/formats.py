"""Gold trajectory files: the published xlsx sheet, CSV with the same columns, and `gold/v1` JSON.

Django-free: readers turn a file into `GoldFile` (blocks of gold steps plus the rows that could
not be placed, each with its reason); writers turn blocks back into the same formats, so a
dataset round-trips. The sheet rules follow the real file (FORMATS.md section 3):

- headers with or without the dot (`Task No.` / `Task No`), any case;
- a blank `Task No.` continues the task above;
- `Step No.` is kept as a label only: order is row order, whatever is written there;
- a task whose rows appear in two separate blocks is two gold trajectories; so is a run of
  rows whose `Step No.` starts again at 1;
- exports add `Gold No.` (which gold trajectory a row belongs to) and the structured columns
  (`Action Type`, `Element Role`, `Element Name`, `Value`) plus `Benchmark`; when a sheet has
  `Gold No.`, it alone separates gold trajectories of the same task.
"""

import csv
import io
import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import jsonschema
import openpyxl

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


class GoldFormatError(ValueError):
    """A file that cannot be read as gold at all; `where` names the file and row or field."""

    def __init__(self, message: str, where: str = ""):
        self.where = where
        super().__init__(f"{where}: {message}" if where else message)


@dataclass
class GoldStepRecord:
    text: str
    label: str = ""
    action_type: str = ""
    element_role: str = ""
    element_name: str = ""
    value: str = ""


@dataclass
class GoldBlock:
    """One gold trajectory as written in a file."""

    task_id: str
    benchmark: str = "webarena"
    ordinal: int = 1  # 1 for the task's first block in the file, 2 for its second, ...
    where: str = ""
    steps: list[GoldStepRecord] = field(default_factory=list)
    cannot_complete: bool = False
    cannot_complete_reason: str = ""
    final_answer: str = ""
    annotator: str = ""
    status: str = ""
    rows: list[str] = field(default_factory=list)  # where each step came from


@dataclass
class UnplacedRow:
    where: str
    reason: str


@dataclass
class GoldFile:
    format: str
    blocks: list[GoldBlock] = field(default_factory=list)
    unplaced: list[UnplacedRow] = field(default_factory=list)
    tasks: list = field(default_factory=list)  # TaskConfigs a file defines along with its gold (Mind2Web)


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
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        # Spreadsheet programs on Windows still write CSV in cp1252.
        return data.decode("cp1252", errors="replace")


def _csv_rows(data: bytes) -> Iterator[tuple[int, tuple]]:
    reader = csv.reader(io.StringIO(_decode(data), newline=""))
    start = 1
    try:
        for row in reader:
            yield start, tuple(row)
            start = reader.line_num + 1
    except csv.Error as exc:
        raise GoldFormatError(f"line {reader.line_num}: malformed CSV ({exc})") from exc


def _header_key(value) -> str:
    return re.sub(r"[\s_.]+", " ", str(value or "")).strip().lower()


_HEADER_KEYS = {_header_key(column): column for column in SHEET_COLUMNS}


def _cell(value) -> str:
    """A cell as text: Excel gives 809 or 809.0 for the same task number."""
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value).strip()


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


class _SheetReader:
    """Walks data rows once, cutting them into gold blocks."""

    def __init__(self, columns: dict[str, int], benchmark: str, row_word: str):
        self.columns = columns
        self.default_benchmark = benchmark
        self.row_word = row_word
        self.result_blocks: list[GoldBlock] = []
        self.unplaced: list[UnplacedRow] = []
        self.current: GoldBlock | None = None
        self.current_gold_no = ""
        self.current_has_numbered_step = False
        self.current_start = 0
        self.ordinals: dict[tuple[str, str], int] = {}

    def get(self, row: tuple, column: str) -> str:
        position = self.columns.get(column)
        if position is None or position >= len(row):
            return ""
        return _cell(row[position])

    def start_block(self, benchmark: str, task_id: str, gold_no: str, number: int) -> None:
        key = (benchmark, task_id)
        self.ordinals[key] = self.ordinals.get(key, 0) + 1
        self.current = GoldBlock(task_id=task_id, benchmark=benchmark, ordinal=self.ordinals[key])
        self.current_gold_no = gold_no
        self.current_has_numbered_step = False
        self.current_start = number
        self.result_blocks.append(self.current)

    def add(self, number: int, row: tuple) -> None:
        if not any(_cell(value) for value in row):
            return
        where = f"{self.row_word} {number}"
        task_id = self.get(row, TASK_COLUMN)
        label = self.get(row, STEP_COLUMN)
        text = self.get(row, TEXT_COLUMN)
        gold_no = self.get(row, GOLD_COLUMN)
        benchmark = self.get(row, BENCHMARK_COLUMN) or self.default_benchmark
        action_type = self.get(row, ACTION_COLUMN).lower()
        if task_id and not _TASK_ID.match(task_id):
            self.unplaced.append(UnplacedRow(where, f"Task No. {task_id!r} is not a task id"))
            return
        if not task_id:
            if self.current is None:
                self.unplaced.append(UnplacedRow(where, "blank Task No. with no task above it to continue"))
                return
            task_id, benchmark = self.current.task_id, self.current.benchmark
            gold_no = gold_no or self.current_gold_no
        if not text:
            self.unplaced.append(UnplacedRow(where, "empty Text: no step to record"))
            return
        if action_type and action_type not in ACTION_TYPES:
            self.unplaced.append(
                UnplacedRow(where, f"unknown Action Type {action_type!r}; expected one of {', '.join(ACTION_TYPES)}")
            )
            return
        if self._starts_new_block(benchmark, task_id, gold_no, label):
            self.start_block(benchmark, task_id, gold_no, number)
        self.current.steps.append(
            GoldStepRecord(
                text=text,
                label=label,
                action_type=action_type,
                element_role=self.get(row, ROLE_COLUMN),
                element_name=self.get(row, NAME_COLUMN),
                value=self.get(row, VALUE_COLUMN),
            )
        )
        self.current.rows.append(where)
        self.current.where = f"{self.row_word}s {self.current_start}-{number}"
        if label.isdigit():
            self.current_has_numbered_step = True

    def _starts_new_block(self, benchmark: str, task_id: str, gold_no: str, label: str) -> bool:
        if self.current is None or (self.current.benchmark, self.current.task_id) != (benchmark, task_id):
            return True
        if GOLD_COLUMN in self.columns:
            return gold_no != self.current_gold_no
        return label.isdigit() and int(label) == 1 and self.current_has_numbered_step


def _read_sheet(rows: Iterable[tuple[int, tuple]], fmt: str, benchmark: str, *, row_word: str) -> GoldFile:
    rows = iter(rows)
    reader = _SheetReader(_read_header(rows, row_word), benchmark, row_word)
    for number, row in rows:
        reader.add(number, row)
    return GoldFile(format=fmt, blocks=reader.result_blocks, unplaced=reader.unplaced)


# JSON -----------------------------------------------------------------------------------------


@cache
def gold_json_schema() -> dict:
    return json.loads(GOLD_SCHEMA_PATH.read_text(encoding="utf-8"))


def _json_path(error: jsonschema.ValidationError) -> str:
    parts = [f"[{item}]" if isinstance(item, int) else f".{item}" for item in error.absolute_path]
    return "".join(parts).lstrip(".") or "(document)"


def _read_json(data: bytes, benchmark: str) -> GoldFile:
    try:
        document = json.loads(_decode(data))
    except json.JSONDecodeError as exc:
        raise GoldFormatError(f"line {exc.lineno} column {exc.colno}: invalid JSON ({exc.msg})") from exc
    from . import mind2web  # imported here: that module builds on this one

    if mind2web.is_mind2web_actions(document):
        return mind2web.read_mind2web_actions(document)
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
    for gold_no, block in enumerate(blocks, start=1):
        for index, step in enumerate(block.steps, start=1):
            yield [
                block.task_id, step.label or str(index), step.text, gold_no, step.action_type, step.element_role,
                step.element_name, step.value, block.benchmark,
            ]


def write_xlsx(blocks: Iterable[GoldBlock], stream) -> None:
    workbook = openpyxl.Workbook(write_only=True)
    sheet = workbook.create_sheet("Gold")
    sheet.append(list(SHEET_COLUMNS))
    for row in _sheet_rows(blocks):
        # Numeric task ids stay numbers, as in the published sheet.
        row[0] = int(row[0]) if row[0].isdigit() else row[0]
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
