"""One text rule at every boundary: text that UTF-8 and every database can carry.

JSON may spell a lone UTF-16 surrogate (`"\\ud800"`) that no UTF-8 file, database or page can hold, and
a NUL (`"\\u0000"`, or raw in a CSV file) that PostgreSQL's text cannot hold (SQLite can): every JSON
reader (trajectories, tasks, verdicts, gold, grades) and the API's body parser load JSON through `loads`,
and every CSV reader decodes through `storable_text_of`, which replace both with U+FFFD and count them, so
that a file fails or passes the same on every database and the report says what was replaced. CSV is read
through `csv_rows`, which answers a cell over `CSV_FIELD_LIMIT` with its line and column."""

import csv
import io
import json
import re
import unicodedata
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

REPLACEMENT = "\ufffd"
UNSTORABLE_REPLACED = ("NUL characters and lone UTF-16 surrogates (\\ud800 to \\udfff), which no database "
                       "holds, were replaced by U+FFFD")
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")
# Only a `\u0000` or `\uD800`..`\uDFFF` escape puts one into parsed JSON: text without one skips the walk.
_UNSTORABLE_ESCAPE = re.compile(r"\\u(?:[dD][89a-fA-F][0-9a-fA-F]{2}|0000)")
CSV_FIELD_LIMIT = 131_072  # characters in one CSV cell: Python's own default limit
# The limit is checked per cell by `csv_rows`, which names the cell; the module's own check would not.
csv.field_size_limit(2**31 - 1)
# Replacements made while `replacements_counted` is open (one request, one import), for its report.
_replaced: ContextVar[list[int] | None] = ContextVar("unstorable_replaced", default=None)


@contextmanager
def replacements_counted() -> Iterator[list[int]]:
    """`[n]`: the characters every reader replaced inside the block, to report them once for the block."""
    tally = [0]
    token = _replaced.set(tally)
    try:
        yield tally
    finally:
        _replaced.reset(token)


def _counted(result: tuple[object, int]) -> tuple[object, int]:
    tally = _replaced.get()
    if tally is not None:
        tally[0] += result[1]
    return result


def name_key(name: str) -> str:
    """What makes two people's names the same name: NFKC (fullwidth and compatibility forms), case folding,
    no invisible characters (zero-width, format and control characters), whitespace runs as one space."""
    folded = unicodedata.normalize("NFKC", name).casefold()
    visible = "".join(char for char in folded if unicodedata.category(char) not in ("Cf", "Cc"))
    return " ".join(visible.split())


def decode_utf8(data: bytes | memoryview, *, at_start: bool = True) -> tuple[str, bool]:
    """The text and whether it was valid UTF-8: bad bytes become U+FFFD instead of failing the file.
    A byte-order mark is dropped only at the start of a file (`at_start`)."""
    codec = "utf-8-sig" if at_start else "utf-8"
    try:
        return str(data, codec), True
    except UnicodeDecodeError:
        return str(data, codec, "replace"), False


def replace_unstorable(value) -> tuple[object, int]:
    """`value` with every NUL and lone surrogate in its strings and keys replaced, and how many there were.
    (A valid pair was already joined into one character by the JSON parser.)"""
    if isinstance(value, str):
        return _UNSTORABLE.subn(REPLACEMENT, value)
    if isinstance(value, dict):
        result, count = {}, 0
        for key, item in value.items():
            key, key_count = replace_unstorable(key)
            result[key], item_count = replace_unstorable(item)
            count += key_count + item_count
        return result, count
    if isinstance(value, list):
        result, count = [], 0
        for item in value:
            item, item_count = replace_unstorable(item)
            result.append(item)
            count += item_count
        return result, count
    return value, 0


def loads(text: str, load=json.loads) -> tuple[object, int]:
    """JSON `text` parsed by `load`, without NUL or lone surrogates, and how many were replaced."""
    document = load(text)
    if not _UNSTORABLE_ESCAPE.search(text):
        return document, 0
    return _counted(replace_unstorable(document))


def storable_text_of(text: str) -> tuple[str, int]:
    """Decoded text (a CSV file) without NUL or lone surrogates, and how many were replaced."""
    return _counted(_UNSTORABLE.subn(REPLACEMENT, text))


def storable(value) -> object:
    """A parsed body (the API's JSON) without NUL or lone surrogates; the replacements are counted."""
    return _counted(replace_unstorable(value))[0]


class CsvFieldTooLong(ValueError):
    def __init__(self, line: int, column: int):
        self.line, self.column = line, column
        super().__init__(f"a cell longer than {CSV_FIELD_LIMIT} characters (the CSV cell limit)")


def csv_rows(text: str) -> Iterator[tuple[int, list[str]]]:
    """(line the row ends on, cells) of CSV text; a cell over CSV_FIELD_LIMIT raises CsvFieldTooLong with its
    line and column index (0-based), any other malformed CSV `csv.Error`."""
    reader = csv.reader(io.StringIO(text, newline=""))
    for cells in reader:
        for column, cell in enumerate(cells):
            if len(cell) > CSV_FIELD_LIMIT:
                raise CsvFieldTooLong(reader.line_num, column)
        yield reader.line_num, cells
