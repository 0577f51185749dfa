"""The gold file readers and writers, without a database."""

import io
import json

import openpyxl
import pytest

from annotation.formats import export_bytes, read_gold_bytes, read_gold_file
from annotation.gold_records import GoldBlock, GoldFormatError, GoldStepRecord
from annotation.models import GoldActionType
from annotation.sentences import ACTION_TYPES, step_sentence


def _csv(text: str) -> bytes:
    return text.encode("utf-8")


def _xlsx(rows: list[list]) -> bytes:
    workbook = openpyxl.Workbook()
    for row in rows:
        workbook.active.append(row)
    stream = io.BytesIO()
    workbook.save(stream)
    return stream.getvalue()


def test_the_published_excerpt_reads_as_eight_gold_blocks(gold_xlsx):
    parsed = read_gold_file(gold_xlsx)

    assert parsed.format == "xlsx"
    assert parsed.unplaced == []
    assert [(b.task_id, b.ordinal, len(b.steps)) for b in parsed.blocks] == [
        ("809", 1, 7), ("1", 1, 6), ("2", 1, 6), ("3", 1, 6), ("82", 1, 9), ("96", 1, 2), ("809", 2, 7), ("529", 1, 7),
    ]
    task_529 = parsed.blocks[-1]
    assert task_529.steps[4] == GoldStepRecord(text="Scroll down", label="5")
    assert task_529.rows[4] == "row 49"
    assert [step.label for step in parsed.blocks[5].steps] == ["Pink", "Pink"]
    # Trailing blanks of the sheet are trimmed; text is otherwise verbatim.
    assert parsed.blocks[0].steps[0].text == "Click on the link 'The A11Y Project / a11yproject.com'"
    assert parsed.blocks[6].steps[5].text == "Type '31/01/2030' into the 'Select due date' textbox."
    assert parsed.blocks[6].where == "rows 38-44"


@pytest.mark.parametrize("header", [
    "Task No.,Step No.,Text", "Task No,Step No,Text", "task no,step no,text", " TASK_NO , Step  No. ,TEXT ",
])
def test_headers_with_or_without_the_dot(header):
    parsed = read_gold_bytes(_csv(f"{header}\n7,1,Click on the 'A' link\n"), "csv", name="gold.csv")
    assert [(b.task_id, [s.text for s in b.steps]) for b in parsed.blocks] == [("7", ["Click on the 'A' link"])]


def test_missing_columns_name_the_file_and_line():
    with pytest.raises(GoldFormatError) as error:
        read_gold_bytes(_csv("\n\nTask,Step,Words\n1,1,x\n"), "csv", name="bad.csv")
    assert str(error.value).startswith("bad.csv: line 3: header must have columns Task No., Step No., Text")
    assert "'Task', 'Step', 'Words'" in str(error.value)


def test_an_empty_file_is_refused():
    with pytest.raises(GoldFormatError, match="empty.csv: the file is empty"):
        read_gold_bytes(b"", "csv", name="empty.csv")


def test_rows_that_cannot_be_placed_are_listed_with_their_reason():
    text = (
        "Task No.,Step No.,Text,Action Type\n"
        ",1,Orphan continuation\n"
        "Task 5,1,Not a task id\n"
        "4,1,\n"
        "4,2,Click on the 'Go' button,clack\n"
        "4,3,Scroll down,scroll\n"
        ",,,\n"
    )
    parsed = read_gold_bytes(_csv(text), "csv", name="gold.csv")

    assert [(row.where, row.reason) for row in parsed.unplaced] == [
        ("line 2", "blank Task No. with no task above it to continue"),
        ("line 3", "Task No. 'Task 5' is not a task id"),
        ("line 4", "empty Text: no step to record"),
        ("line 5", "unknown Action Type 'clack'; expected one of " + ", ".join(ACTION_TYPES)),
    ]
    assert [(b.task_id, [s.text for s in b.steps]) for b in parsed.blocks] == [("4", ["Scroll down"])]


def test_step_numbers_starting_again_at_one_begin_a_second_gold_trajectory():
    text = "Task No.,Step No.,Text\n5,1,a\n5,2,b\n5,4,c\n5,1,a again\n,2,b again\n"
    parsed = read_gold_bytes(_csv(text), "csv", name="gold.csv")

    assert [(b.task_id, b.ordinal, [s.text for s in b.steps]) for b in parsed.blocks] == [
        ("5", 1, ["a", "b", "c"]), ("5", 2, ["a again", "b again"]),
    ]


def test_the_gold_column_alone_separates_gold_trajectories_when_present():
    text = "Task No.,Step No.,Text,Gold No.\n5,Pink,a\n5,Pink,b\n5,1,c\n5,2,d\n5,1,e,2\n"
    parsed = read_gold_bytes(_csv(text), "csv", name="gold.csv")

    assert [[s.text for s in b.steps] for b in parsed.blocks] == [["a", "b", "c", "d"], ["e"]]


def test_excel_numbers_and_an_xlsx_without_the_dot():
    data = _xlsx([["Task No", "Step No", "Text"], [12.0, 1.0, "Press Enter"], [None, 2, "Scroll down"]])
    parsed = read_gold_bytes(data, "xlsx", name="sheet.xlsx")

    assert [(b.task_id, [(s.label, s.text) for s in b.steps]) for b in parsed.blocks] == [
        ("12", [("1", "Press Enter"), ("2", "Scroll down")])
    ]


def test_a_file_that_is_not_a_workbook_is_refused_by_name():
    with pytest.raises(GoldFormatError, match=r"\Anot-a-sheet.xlsx: not a readable xlsx workbook"):
        read_gold_bytes(b"plain text", "xlsx", name="not-a-sheet.xlsx")


def test_cp1252_csv_is_read():
    parsed = read_gold_bytes("Task No.,Step No.,Text\n1,1,Type 'café' into the 'Search' box\n".encode("cp1252"),
                             "csv", name="gold.csv")
    assert parsed.blocks[0].steps[0].text == "Type 'café' into the 'Search' box"


def test_json_errors_name_the_path_of_the_bad_field():
    steps = [{"text": "ok"}, {"text": "x", "action_type": "fly"}]
    document = {"schema": "gold/v1", "gold": [{"task_id": "1", "steps": steps}]}
    with pytest.raises(GoldFormatError) as error:
        read_gold_bytes(json.dumps(document).encode(), "json", name="gold.json")
    assert str(error.value).startswith("gold.json: gold[0].steps[1].action_type: 'fly' is not one of")


def test_json_needs_a_reason_to_have_no_steps():
    document = {"schema": "gold/v1", "gold": [{"task_id": 1, "cannot_complete": True, "steps": []}]}
    with pytest.raises(GoldFormatError, match="gold.json: gold\\[0\\]: 'cannot_complete_reason' is a required"):
        read_gold_bytes(json.dumps(document).encode(), "json", name="gold.json")

    document["gold"][0]["cannot_complete_reason"] = "The order does not exist."
    block = read_gold_bytes(json.dumps(document).encode(), "json", name="gold.json").blocks[0]
    assert (block.task_id, block.cannot_complete, block.cannot_complete_reason, block.steps) == (
        "1", True, "The order does not exist.", []
    )


def test_invalid_json_names_line_and_column():
    with pytest.raises(GoldFormatError, match=r"gold.json: line 2 column 1: invalid JSON"):
        read_gold_bytes(b'{"schema": "gold/v1",\n}', "json", name="gold.json")


def test_unknown_file_types_are_refused():
    with pytest.raises(GoldFormatError, match=r"gold.txt: unknown gold file type 'txt'"):
        read_gold_file(__import__("pathlib").Path("gold.txt"))


@pytest.mark.parametrize("fmt", ["xlsx", "csv", "json"])
def test_every_format_round_trips_blocks_with_structure(fmt):
    blocks = [
        GoldBlock(task_id="5", steps=[
            GoldStepRecord(text="Click on the 'REPORTS' link", label="1", action_type="click",
                           element_role="link", element_name="REPORTS"),
            GoldStepRecord(text="Type 'a, \"b\"' into the 'To' textbox", label="Pink", action_type="type",
                           element_role="textbox", element_name="To", value='a, "b"'),
        ]),
        GoldBlock(task_id="5", steps=[GoldStepRecord(text="Scroll down", label="1")]),
        GoldBlock(task_id="x-7", benchmark="mind2web", steps=[GoldStepRecord(text="Extract the price", label="3")]),
    ]
    parsed = read_gold_bytes(export_bytes(blocks, fmt), fmt, name=f"gold.{fmt}")

    assert parsed.unplaced == []
    assert [(b.benchmark, b.task_id, b.ordinal, b.steps) for b in parsed.blocks] == [
        ("webarena", "5", 1, blocks[0].steps), ("webarena", "5", 2, blocks[1].steps),
        ("mind2web", "x-7", 1, blocks[2].steps),
    ]


def test_the_sentence_action_types_are_the_models_action_types():
    assert ACTION_TYPES == tuple(GoldActionType.values)


@pytest.mark.parametrize(("fields", "sentence"), [
    (("type", "textbox", "To", "Harvard University"), "Type 'Harvard University' into the 'To' textbox"),
    (("click", "link", "REPORTS", ""), "Click on the 'REPORTS' link"),
    (("select", "combobox", "Period", "Year"), "Select the 'Period' combobox and choose 'Year'"),
    (("hover", "", "Menu", ""), "Hover over 'Menu'"),
    (("click", "button", "", ""), "Click on the button"),
    (("press", "", "", ""), "Press Enter"),
    (("scroll", "", "", "up"), "Scroll up"),
    (("goto", "", "", "http://x/y"), "Go to http://x/y"),
    (("go_back", "", "", ""), "Go back to the previous page"),
    (("tab_focus", "", "", "2"), "Switch to tab 2"),
    (("stop", "", "", "42"), "Stop and answer '42'"),
])
def test_structured_steps_read_like_the_published_gold(fields, sentence):
    assert step_sentence(*fields) == sentence


def test_an_unknown_action_type_has_no_sentence():
    with pytest.raises(ValueError, match="unknown action type 'fly'"):
        step_sentence("fly")
