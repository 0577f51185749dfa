"""Uploaded text made storable the same way on every database: PostgreSQL's text and JSON cannot
hold NUL characters (SQLite can), so they become U+FFFD before anything is written."""

REPLACEMENT = "\ufffd"


def storable_text(value: str | None) -> str | None:
    return value.replace("\x00", REPLACEMENT) if value and "\x00" in value else value


def storable_json(value):
    """`value` with NUL replaced in every string and key; nesting is bounded by the readers."""
    if isinstance(value, str):
        return storable_text(value)
    if isinstance(value, dict):
        return {storable_text(str(key)): storable_json(item) for key, item in value.items()}
    if isinstance(value, list):
        return [storable_json(item) for item in value]
    return value
