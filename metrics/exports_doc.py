"""docs/exports.md's column tables, written from the declared columns of each export (`exports.EXPORTS`).

The prose around the tables is the doc's own; the table of each section headed "... (`<export>`)"
is the export's columns, their type and meaning, so the doc cannot drift from what is exported
(`manage.py write_exports_doc` rewrites it; a test fails while the doc on disk differs).
"""

from metrics.exports import EXPORTS, Column

TYPES = {"string": "text", "Int64": "integer", "Float64": "number", "boolean": "true/false", "object": "JSON"}
HEADER = "| Column | Type | Meaning |\n|---|---|---|\n"


def columns_table(columns: tuple[Column, ...]) -> str:
    return HEADER + "".join(f"| `{c.name}` | {TYPES[c.dtype]} | {c.meaning} |\n" for c in columns)


def with_column_tables(text: str) -> str:
    """`text` with the table of every export's section replaced by that export's declared columns."""
    for what, columns in EXPORTS.items():
        heading = f"(`{what}`)\n"
        if heading not in text:
            raise ValueError(f"docs/exports.md: no section headed '... (`{what}`)' for the {what} export")
        before, section = text.split(heading, 1)
        start = section.index(HEADER)
        end = start
        while end < len(section) and section.startswith("|", end):
            end = section.index("\n", end) + 1
        text = before + heading + section[:start] + columns_table(columns) + section[end:]
    return text
