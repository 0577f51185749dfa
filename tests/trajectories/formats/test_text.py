"""Lone surrogates never leave a reader: every JSON reader gives text UTF-8 can hold, or its own error."""

import codecs
import io
import json

import pytest
from hypothesis import given, settings, strategies as st

from annotation.formats import read_gold_bytes
from annotation.gold_records import GoldFormatError
from trajectories.formats.readers import read_records
from trajectories.formats.task_files import TaskConfigError, parse_subset_ids, read_task_bytes
from trajectories.formats.text import (CSV_FIELD_LIMIT, UNSTORABLE_REPLACED, CsvFieldTooLong, csv_rows, decode_utf8,
                                       loads, name_key, replace_unstorable, replacements_counted, storable,
                                       storable_text_of)
from trajectories.formats.verdict_files import VerdictFileError, parse_grades, parse_outcomes

ODD = st.lists(st.one_of(st.characters(exclude_categories=()), st.characters(categories=["Cs"])),
               max_size=12).map("".join)
ANY_JSON = st.recursive(st.none() | st.booleans() | st.integers() | ODD,
                        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(ODD, inner, max_size=4),
                        max_leaves=12)


def _strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def test_lone_surrogates_are_replaced_and_counted_and_pairs_kept():
    document, replaced = loads(r'{"a\ud800": ["\udfff", "\ud83d\ude00", "\\ud800"]}')
    assert document == {"a\ufffd": ["\ufffd", "\U0001f600", "\\ud800"]} and replaced == 2
    assert replace_unstorable({"plain": [1, "text"]}) == ({"plain": [1, "text"]}, 0)


@pytest.mark.parametrize(("data", "at_start", "expected"), [
    (b"\xef\xbb\xbfcaf\xc3\xa9", True, ("caf\u00e9", True)),  # a byte-order mark is dropped at a file's start
    (b"\xef\xbb\xbfcaf\xc3\xa9", False, ("\ufeffcaf\u00e9", True)),  # further in, it is a character (U+FEFF)
    (b"caf\xe9 ok", True, ("caf\ufffd ok", False)),  # Latin-1's e-acute is no UTF-8: replaced, and said
    (b"\xef\xbb\xbfcaf\xe9", True, ("caf\ufffd", False)),
    (b"\xef\xbb\xbfcaf\xe9", False, ("\ufeffcaf\ufffd", False)),
    (memoryview(b"abc"), False, ("abc", True)),
])
def test_utf8_is_read_with_bad_bytes_replaced_and_reported_and_a_bom_dropped_only_at_the_start(
        data, at_start, expected):
    assert decode_utf8(data, at_start=at_start) == expected


def test_a_whole_file_is_read_from_its_start():
    assert decode_utf8(b"\xef\xbb\xbfabc") == ("abc", True)


class _Repaired:
    """Lone surrogates replaced a second way, by Python's UTF-16 codec: a string's code units written with
    `surrogatepass` and read back with `replace` give U+FFFD for each unit that is not half of a pair; and each
    NUL, which PostgreSQL's text cannot hold, replaced and counted too."""

    def __init__(self):
        self.count = 0

    def text(self, text: str) -> str:
        def replace(error):
            self.count += 1
            return "\ufffd", error.end

        codecs.register_error("test_count_lone_surrogates", replace)
        self.count += text.count("\x00")
        text = text.replace("\x00", "\ufffd")
        return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "test_count_lone_surrogates")

    def value(self, value):
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {self.text(key): self.value(item) for key, item in value.items()}
        if isinstance(value, list):
            return [self.value(item) for item in value]
        return value


@settings(max_examples=60, deadline=None)
@given(document=ANY_JSON)
def test_json_of_any_text_loads_equal_but_for_its_nul_and_lone_surrogates_each_replaced_and_counted(document):
    text = json.dumps(document)
    # The standard parser's reading (pairs joined, lone surrogates kept), repaired the second way.
    repaired = _Repaired()
    expected = repaired.value(json.loads(text))

    assert loads(text) == (expected, repaired.count)
    for string in _strings(expected):
        string.encode("utf-8")


def test_a_trajectory_file_reports_the_replacement():
    document = {"schema": "trajectory/v1", "task": {"task_id": "3"}, "steps": [{"index": 1, "action": "stop [x]"}],
                "final_answer": "\ud800", "outcome": {"status": "na"}}
    for name, data in (("t.json", json.dumps(document)), ("t.jsonl", json.dumps(document) + "\n")):
        [record] = read_records(name, io.BytesIO(data.encode()), 1 << 20)
        assert record.trajectory.final_answer == "\ufffd"
        assert any(note.startswith(UNSTORABLE_REPLACED) for note in record.notes)
        record.trajectory.content_hash()


@settings(max_examples=40, deadline=None)
@given(text=ODD)
def test_every_reader_takes_any_text(text):
    trajectory = {"schema": "trajectory/v1", "task": {"task_id": text, "intent": text},
                  "run": {"meta": {text: text}}, "steps": [{"index": 1, "action": text}], "final_answer": text,
                  "outcome": {"status": "na"}}
    stored = _Repaired().text(text)
    for name in ("t.json", "t.jsonl"):
        for record in read_records(name, io.BytesIO(json.dumps(trajectory).encode()), 1 << 20):
            if record.trajectory is not None:
                record.trajectory.content_hash()
                # Kept as given, but for the replaced surrogates.
                trajectory_read = record.trajectory
                assert (trajectory_read.task.task_id, trajectory_read.task.intent, trajectory_read.final_answer,
                        trajectory_read.steps[0].action, trajectory_read.run.meta) == (
                    stored, stored, stored, stored, {stored: stored})
            else:
                str(record.error).encode("utf-8")
    rows = json.dumps([{"task_id": text, "grader": text, "grade": 1, "run": text, "success": 1}]).encode()
    for parse in (parse_grades, parse_outcomes):
        try:
            for record in parse("f.json", rows).records:
                for value in vars(record).values():
                    str(value).encode("utf-8")
        except VerdictFileError as error:
            str(error).encode("utf-8")
    gold = json.dumps({"schema": "gold/v1", "gold": [{"task_id": text or "1", "steps": [{"text": text or "x"}]}]})
    try:
        parsed = read_gold_bytes(gold.encode(), "json", name="g.json")
    except GoldFormatError as error:
        str(error).encode("utf-8")
    else:
        for block in parsed.blocks:
            block.task_id.encode("utf-8")
    for read in (lambda: read_task_bytes(json.dumps([{"task_id": 1, "intent": text}]).encode(), "t.json"),
                 lambda: parse_subset_ids(json.dumps([text]).encode(), "ids.json")):
        try:
            str(read()).encode("utf-8")
        except TaskConfigError as error:
            str(error).encode("utf-8")


def test_a_name_key_folds_width_and_case_and_drops_invisible_characters_only():
    assert name_key("ＡＮＮ") == name_key("Ann") == name_key("ann\u200b") == name_key("a\x07nn") == "ann"
    assert name_key("  Ann \t  Lee ") == "ann lee"  # whitespace runs are one space, not the invisible characters
    assert name_key("Ann-Lee") == "ann-lee" and name_key("Ann Lee") != name_key("AnnLee")


def test_replacements_are_counted_inside_the_block_only():
    with replacements_counted() as tally:
        assert storable_text_of("a\x00b\ud800") == ("a\ufffdb\ufffd", 2)
        assert storable({"k\x00": ["\x00", 1]}) == {"k\ufffd": ["\ufffd", 1]}
        assert loads('"\\u0000"') == ("\ufffd", 1)
        assert loads('"plain"') == ("plain", 0)
        assert tally == [5]
    assert storable_text_of("\x00") == ("\ufffd", 1) and tally == [5]  # counted by no block once it closed


def test_csv_rows_give_each_rows_last_line_and_name_a_cell_over_the_limit():
    text = 'a,b\r\n"two\r\nlines",x\r\n\r\nlast,' + "y" * CSV_FIELD_LIMIT + "\r\n"  # a cell keeps its own line end
    assert list(csv_rows(text)) == [(1, ["a", "b"]), (3, ["two\r\nlines", "x"]), (4, []),
                                   (5, ["last", "y" * CSV_FIELD_LIMIT])]
    rows = csv_rows('h1,h2\n1,' + "z" * (CSV_FIELD_LIMIT + 1) + "\n")
    assert next(rows) == (1, ["h1", "h2"])
    with pytest.raises(CsvFieldTooLong) as raised:
        next(rows)
    assert (raised.value.line, raised.value.column) == (2, 1)
    assert str(raised.value) == f"a cell longer than {CSV_FIELD_LIMIT} characters (the CSV cell limit)"


def test_csv_rows_read_old_mac_line_ends():
    assert list(csv_rows("a,b\rc,d\r")) == [(1, ["a", "b"]), (2, ["c", "d"])]
