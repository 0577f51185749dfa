"""Text that UTF-8 can carry. JSON may spell a lone UTF-16 surrogate (`"\\ud800"`) that no UTF-8
file, database or page can hold: every JSON reader (trajectories, tasks, verdicts, gold) and the
API's body parser load JSON through `loads`, which replaces them with U+FFFD and counts them."""

import json
import re
import unicodedata

REPLACEMENT = "\ufffd"
LONE_SURROGATES = "lone UTF-16 surrogates (\\ud800 to \\udfff) were replaced by U+FFFD"
_SURROGATE = re.compile("[\ud800-\udfff]")
# Only a `\uD800`..`\uDFFF` escape puts a surrogate into parsed JSON: text without one skips the walk.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


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


def replace_surrogates(value) -> tuple[object, int]:
    """`value` with every lone surrogate in its strings and keys replaced, and how many there were.
    (A valid pair was already joined into one character by the JSON parser.)"""
    if isinstance(value, str):
        return _SURROGATE.subn(REPLACEMENT, value)
    if isinstance(value, dict):
        result, count = {}, 0
        for key, item in value.items():
            key, key_count = replace_surrogates(key)
            result[key], item_count = replace_surrogates(item)
            count += key_count + item_count
        return result, count
    if isinstance(value, list):
        result, count = [], 0
        for item in value:
            item, item_count = replace_surrogates(item)
            result.append(item)
            count += item_count
        return result, count
    return value, 0


def loads(text: str, load=json.loads) -> tuple[object, int]:
    """JSON `text` parsed by `load`, without lone surrogates, and how many were replaced."""
    document = load(text)
    if not _SURROGATE_ESCAPE.search(text):
        return document, 0
    return replace_surrogates(document)
