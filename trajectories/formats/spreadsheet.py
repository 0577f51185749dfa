"""Spreadsheet cells that open as text, never as formulas.

Excel and LibreOffice run a cell that starts with `=`, `+`, `-` or `@` (or a tab or carriage
return before one) as a formula, so a gold step, an agent's action or a run name written
verbatim into a CSV or xlsx file can carry a live `=HYPERLINK(...)` or `+cmd|...`. Every
spreadsheet the platform writes passes its text cells through `spreadsheet_cell`, which puts a
single quote in front of such text, as OWASP recommends ("CSV injection"). The platform's own
sheet readers take that quote off again with `spreadsheet_text`, so an export imports back to
the original text. A text that really starts with a quote followed by one of those characters
(or by a second quote) gets a quote as well, so it survives the round trip too; a quote before
anything else is left alone both ways. Numbers are never touched: a negative number stays a
number. Django-free.
"""

FORMULA_STARTS = frozenset("=+-@\t\r")
QUOTE = "'"


def _quoted(text: str) -> bool:
    """Written by `spreadsheet_cell`: a quote, then a formula start or another quote."""
    return len(text) > 1 and text[0] == QUOTE and (text[1] in FORMULA_STARTS or text[1] == QUOTE)


def spreadsheet_cell(value):
    """The value to write in a cell: text that would start a formula (or look quoted) gets a leading quote;
    anything that is not text (numbers, booleans, None) is returned as it is."""
    if isinstance(value, str) and value and (value[0] in FORMULA_STARTS or _quoted(value)):
        return QUOTE + value
    return value


def spreadsheet_text(text: str) -> str:
    """The original text of a cell written by `spreadsheet_cell`."""
    return text[1:] if _quoted(text) else text
