"""Synthetic gold sheets made of real rows of the published excerpt, for the numbering patterns
of the full sheet that the excerpt does not show."""

import io

import openpyxl

from annotation.quality import GoldRecord

HEADER = ("Task No.", "Step No.", "Text")


def excerpt_rows(gold_xlsx) -> dict[int, tuple]:
    """Row number (header = row 1) -> (Task No., Step No., Text) of the excerpt."""
    workbook = openpyxl.load_workbook(gold_xlsx, read_only=True)
    try:
        return {number: tuple(row[:3]) for number, row in enumerate(workbook.worksheets[0].iter_rows(values_only=True),
                                                                     start=1) if number > 1}
    finally:
        workbook.close()


def sheet_bytes(rows: list[tuple]) -> bytes:
    workbook = openpyxl.Workbook()
    workbook.active.append(HEADER)
    for row in rows:
        workbook.active.append(list(row))
    stream = io.BytesIO()
    workbook.save(stream)
    return stream.getvalue()


def relabel(rows: list[tuple], task=None, numbers=None) -> list[tuple]:
    """The same rows under another task id and/or with other step numbers."""
    numbers = numbers if numbers is not None else [row[1] for row in rows]
    return [(task if task is not None else row[0], number, row[2]) for row, number in zip(rows, numbers)]


def block(rows: dict[int, tuple], first: int, last: int) -> list[tuple]:
    return [rows[number] for number in range(first, last + 1)]


def misplaced_gold_sheet(rows: dict[int, tuple]) -> list[tuple]:
    """The excerpt with task 529's block moved under task 811 and task 82's gold also copied under
    its sibling task 83 (same template, another start and end)."""
    return (block(rows, 2, 28) + block(rows, 29, 37) + block(rows, 38, 44)
            + relabel(block(rows, 45, 51), task=811) + relabel(block(rows, 27, 35), task=83))


def gold_records(parsed) -> list[GoldRecord]:
    """The blocks of a parsed gold file as the quality checks read them, numbered from 0."""
    return [GoldRecord(position, int(block.task_id), tuple(step.text for step in block.steps))
            for position, block in enumerate(parsed.blocks)]
