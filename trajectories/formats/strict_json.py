"""The readers' JSON loader: strict about numbers (finite, of bounded length) and about nesting, so
that whatever a reader keeps can be stored in PostgreSQL's JSON and shown; every reader of a
tool's files loads them here."""

import json
import math

from .canonical import MAX_DEPTH, TrajectoryFormatError
from .text import LONE_SURROGATES, loads

# Integers beyond this many digits are refused before Python converts them (its own limit is 4,300
# digits, raised as a bare ValueError); 20 digits hold every 64-bit integer.
_MAX_INTEGER_DIGITS = 20


def _integer(text: str) -> int:
    if len(text.lstrip("-")) > _MAX_INTEGER_DIGITS:
        raise TrajectoryFormatError(f"number too large: {text[:20]}... ({len(text)} digits)")
    return int(text)


def _finite(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise TrajectoryFormatError(f"number too large: {text[:40]}")
    return value


def _no_constant(name: str) -> None:
    raise TrajectoryFormatError(f"not a JSON number: {name}")


def _strict_json(text: str) -> object:
    return json.loads(text, parse_int=_integer, parse_float=_finite, parse_constant=_no_constant)


def load_json(text: str, notes: list[str] | None = None) -> object:
    """Strict JSON: finite numbers only (NaN and Infinity cannot be stored in PostgreSQL's JSON); lone
    surrogates replaced, which adds a note to `notes`."""
    try:
        document, replaced = loads(text, _strict_json)
        if replaced and notes is not None:
            notes.append(f"{LONE_SURROGATES} ({replaced})")
        return document
    except json.JSONDecodeError as error:
        raise TrajectoryFormatError(f"invalid JSON: {error.msg} (column {error.colno})", line=error.lineno) from None
    except RecursionError:
        raise TrajectoryFormatError(f"nested deeper than {MAX_DEPTH} levels") from None
