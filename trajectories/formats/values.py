"""Reading the values of a tool's records (Django-free): what each kind of field may hold, and the
one rule for the values tools write to mean "unknown", so that every reader of a tool agrees.

Strict readers (`text`, `strings`, `flag`, `number`, `quantity`, `binary_score`) take a record and
a field name and refuse any other type with a `TrajectoryFormatError` naming the field and the
value: the record fails alone, named. Lenient readers (`lenient_text`, `lenient_number`,
`lenient_quantity`) take a value where a tool writes loosely (model outputs, action parameters,
spreadsheet cells) and make what they can of it, never failing.

Sentinels, the same for every tool:
- an absent field, `null`, and (read leniently) the words in `UNKNOWN_WORDS`: unknown;
- a negative quantity (cost, tokens, seconds): unknown, None (Agent-E writes
  `compute_cost: {"cost": -1, "total_tokens": -1}` when it did not count);
- a score off its scale: unsure, no yes/no (`Score.success` None), labelled with the score, and
  `Score.problem` says so, for the reader to report with the record.
"""

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass

from .canonical import MAX_DEPTH, TrajectoryFormatError
from .text import LONE_SURROGATES, loads

UNKNOWN_WORDS = frozenset({"", "none", "null", "nan"})
_SHOWN = 80  # characters of a value's repr in a message


def shown(value) -> str:
    """A value as a message quotes it: its repr, cut."""
    text = repr(value)
    return text if len(text) <= _SHOWN else text[:_SHOWN] + "..."


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and not (
        isinstance(value, float) and math.isnan(value))


# --- strict -------------------------------------------------------------------------------------

def text(record: Mapping, name: str, where: str = "") -> str:
    """A string field; "" when absent or null."""
    value = record.get(name)
    if value is not None and not isinstance(value, str):
        raise TrajectoryFormatError(f"expected a string, got {type(value).__name__} {shown(value)}",
                                    where=where or name)
    return value or ""


def strings(record: Mapping, name: str, where: str = "") -> list[str]:
    """A list of strings; [] when absent or null."""
    value = record.get(name)
    where = where or name
    if value is None:
        return []
    if not isinstance(value, list):
        raise TrajectoryFormatError(f"expected a list of strings, got {type(value).__name__} {shown(value)}",
                                    where=where)
    for position, item in enumerate(value):
        if not isinstance(item, str):
            raise TrajectoryFormatError(f"expected a string, got {type(item).__name__} {shown(item)}",
                                        where=f"{where}[{position}]")
    return value


def flag(record: Mapping, name: str, where: str = "") -> bool | None:
    """true or false; None when absent or null."""
    value = record.get(name)
    if value is not None and not isinstance(value, bool):
        raise TrajectoryFormatError(f"expected true or false, got {shown(value)}", where=where or name)
    return value


def number(record: Mapping, name: str, where: str = "", *, integer: bool = False,
           expected: str = "") -> float | int | None:
    """A number (a whole one when `integer`); None when absent or null. `expected` says what the
    field holds (`a number from 0 to 100`) in the message."""
    value = record.get(name)
    if value is None:
        return None
    if not _is_number(value) or (integer and not isinstance(value, int)):
        expected = expected or ("a whole number" if integer else "a number")
        raise TrajectoryFormatError(f"expected {expected}, got {shown(value)}", where=where or name)
    return value


def quantity(record: Mapping, name: str, where: str = "", *, integer: bool = False) -> float | int | None:
    """A cost, a count of tokens, a time: a number, None when absent, null or negative (unknown)."""
    value = number(record, name, where, integer=integer)
    return None if value is None or value < 0 else value


@dataclass(frozen=True)
class Score:
    """A verdict's score read against its scale: `success` None (unsure) when it is off the scale,
    with `label` naming the score and `problem` saying why, for the record's report."""

    value: float
    success: bool | None
    label: str = ""
    problem: str = ""


def binary_score(record: Mapping, name: str, where: str = "") -> Score | None:
    """1 success, 0 failure; None when absent or null; any other number is off the scale."""
    value = number(record, name, where)
    if value is None:
        return None
    if value in (0, 1):
        return Score(value, bool(value))
    return Score(value, None, f"score {value:g}",
                 f"{where or name}: {value:g} is neither 1 (success) nor 0 (failure): read as unsure")


def graded_score(record: Mapping, name: str, where: str = "", *, scale: tuple[float, float],
                 threshold: float) -> Score | None:
    """A score on `scale` (low, high), success at or above `threshold`; None when absent or null; a
    score off the scale is unsure."""
    low, high = scale
    value = number(record, name, where, expected=f"a number from {low:g} to {high:g}")
    if value is None:
        return None
    if low <= value <= high:
        return Score(value, value >= threshold)
    return Score(value, None, f"score {value:g}",
                 f"{where or name}: {value:g} is outside the scale {low:g} to {high:g}: read as unsure")


# --- lenient ------------------------------------------------------------------------------------

def lenient_text(value, *, words_unknown: bool = False) -> str:
    """Whatever the value, as text: "" for null (and, with `words_unknown`, for a field whose writer
    spells unknown as one of `UNKNOWN_WORDS`), a string as it is, a list's items joined with commas,
    anything else as JSON."""
    if value is None:
        return ""
    if isinstance(value, str):
        return "" if words_unknown and value.strip().lower() in UNKNOWN_WORDS else value
    if isinstance(value, (list, tuple)):
        return ", ".join(lenient_text(item, words_unknown=words_unknown) for item in value)
    if isinstance(value, (int, float, bool)):
        return json.dumps(value)
    return json.dumps(value, ensure_ascii=False, default=str)


def lenient_number(value) -> float | None:
    """A number, or a string spelling one; None for anything else, NaN and the unknown words."""
    if _is_number(value):
        return float(value)
    if not isinstance(value, str) or value.strip().lower() in UNKNOWN_WORDS:
        return None
    try:
        parsed = float(value)
    except ValueError:
        return None
    return None if math.isnan(parsed) or math.isinf(parsed) else parsed


def lenient_quantity(value, *, integer: bool = False) -> float | int | None:
    """`lenient_number` of a cost, count or time: None when negative (unknown); a count must be whole."""
    parsed = lenient_number(value)
    if parsed is None or parsed < 0:
        return None
    if integer:
        return int(parsed) if parsed.is_integer() else None
    return parsed


# --- JSON ---------------------------------------------------------------------------------------

# Integers beyond this many digits are refused before Python converts them (its own limit is 4,300
# digits, raised as a bare ValueError); 20 digits hold every 64-bit integer.
_MAX_INTEGER_DIGITS = 20


def _integer(digits: str) -> int:
    if len(digits.lstrip("-")) > _MAX_INTEGER_DIGITS:
        raise TrajectoryFormatError(f"number too large: {digits[:20]}... ({len(digits)} digits)")
    return int(digits)


def _finite(digits: str) -> float:
    value = float(digits)
    if math.isinf(value):
        raise TrajectoryFormatError(f"number too large: {digits[:40]}")
    return value


def _no_constant(name: str) -> None:
    raise TrajectoryFormatError(f"not a JSON number: {name}")


def _strict_json(document: str) -> object:
    return json.loads(document, parse_int=_integer, parse_float=_finite, parse_constant=_no_constant)


class InvalidJSON(TrajectoryFormatError):
    """Text that is not one JSON document; `extra_data` when it starts with one (JSON lines)."""

    def __init__(self, message: str, line: int | None = None, extra_data: bool = False):
        super().__init__(message, line=line)
        self.extra_data = extra_data


NUL_CHARACTERS = "NUL characters (\\u0000), which no database text can hold, are stored as U+FFFD"


def nul_count(value) -> int:
    """How many NUL characters the strings and keys of a parsed JSON value hold."""
    if isinstance(value, str):
        return value.count("\x00")
    if isinstance(value, dict):
        return sum(nul_count(key) + nul_count(item) for key, item in value.items())
    if isinstance(value, list):
        return sum(nul_count(item) for item in value)
    return 0


def load_json(document: str, notes: list[str] | None = None) -> object:
    """Strict JSON, the one loader of every reader: finite numbers only (NaN and Infinity cannot be
    stored in PostgreSQL's JSON); lone surrogates replaced and NUL characters counted (the import
    stores them as U+FFFD), each adding a note to `notes`."""
    try:
        parsed, replaced = loads(document, _strict_json)
        if notes is not None:
            if replaced:
                notes.append(f"{LONE_SURROGATES} ({replaced})")
            if "\\u0000" in document and (nul := nul_count(parsed)):
                notes.append(f"{NUL_CHARACTERS} ({nul})")
        return parsed
    except json.JSONDecodeError as error:
        raise InvalidJSON(f"invalid JSON: {error.msg} (column {error.colno})", error.lineno,
                          error.msg == "Extra data") from None
    except RecursionError:
        raise InvalidJSON(f"nested deeper than {MAX_DEPTH} levels") from None
