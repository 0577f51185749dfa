"""The one reader of values: what each strict reader refuses (naming the field and the value),
what each lenient reader makes of loose values, and the sentinels read the same for every tool."""

import math

import pytest

from trajectories.formats import values
from trajectories.formats.canonical import TrajectoryFormatError
from trajectories.formats.text import UNSTORABLE_REPLACED


@pytest.mark.parametrize("reader, record, expected", [
    (values.text, {}, ""),
    (values.text, {"f": None}, ""),
    (values.text, {"f": " a "}, " a "),
    (values.strings, {}, []),
    (values.strings, {"f": ["a", "b"]}, ["a", "b"]),
    (values.flag, {}, None),
    (values.flag, {"f": False}, False),
    (values.number, {"f": None}, None),
    (values.number, {"f": -2.5}, -2.5),
    (values.quantity, {"f": 0}, 0),
    (values.quantity, {"f": 3.5}, 3.5),
    (values.quantity, {"f": -1}, None),  # unknown, as Agent-E writes it
    (values.quantity, {"f": -0.01}, None),
])
def test_strict_readers_read_what_they_expect(reader, record, expected):
    assert reader(record, "f") == expected


@pytest.mark.parametrize("reader, value, message, where", [
    (values.text, 3, "expected a string, got int 3", "f"),
    (values.text, ["a"], "expected a string, got list ['a']", "f"),
    (values.strings, "a", "expected a list of strings, got str 'a'", "f"),
    (values.strings, ["a", 1], "expected a string, got int 1", "f[1]"),
    (values.flag, "true", "expected true or false, got 'true'", "f"),
    (values.flag, 1, "expected true or false, got 1", "f"),
    (values.number, True, "expected a number, got True", "f"),
    (values.number, "3", "expected a number, got '3'", "f"),
    (values.number, math.nan, "expected a number, got nan", "f"),
    (values.quantity, "-1", "expected a number, got '-1'", "f"),
])
def test_strict_readers_refuse_another_type_naming_field_and_value(reader, value, message, where):
    with pytest.raises(TrajectoryFormatError) as error:
        reader({"f": value}, "f")
    assert (error.value.message, error.value.where) == (message, where)


def test_a_strict_reader_names_the_path_it_is_given_and_what_the_field_holds():
    with pytest.raises(TrajectoryFormatError) as error:
        values.number({"score": "high"}, "score", "judge.score", expected="a number from 0 to 100")
    assert (error.value.message, error.value.where) == ("expected a number from 0 to 100, got 'high'", "judge.score")
    with pytest.raises(TrajectoryFormatError, match="expected a whole number, got 1.5"):
        values.quantity({"tokens": 1.5}, "tokens", integer=True)
    assert values.quantity({"tokens": -1}, "tokens", integer=True) is None


def test_a_value_is_quoted_cut_to_80_characters():
    assert values.shown("x" * 10) == repr("x" * 10)
    assert values.shown("x" * 200) == repr("x" * 200)[:80] + "..."


@pytest.mark.parametrize("value, expected", [
    (1, values.Score(1, True)),
    (0.0, values.Score(0.0, False)),
    (-0.1, values.Score(-0.1, None, "score -0.1", "score: -0.1 is neither 1 (success) nor 0 (failure): read as unsure")),
    (0.5, values.Score(0.5, None, "score 0.5", "score: 0.5 is neither 1 (success) nor 0 (failure): read as unsure")),
    (None, None),
])
def test_a_binary_score_off_its_scale_is_unsure_and_said(value, expected):
    assert values.binary_score({"score": value}, "score") == expected


def test_a_binary_score_that_is_no_number_fails():
    with pytest.raises(TrajectoryFormatError, match="expected a number, got 'yes'"):
        values.binary_score({"score": "yes"}, "score")


@pytest.mark.parametrize("value, expected", [
    (None, ""), ("a", "a"), (" null ", " null "), (["a", 2, None], "a, 2, "), (3, "3"), (1.5, "1.5"),
    (True, "true"), ({"k": "é"}, '{"k": "é"}'),
])
def test_lenient_text(value, expected):
    assert values.lenient_text(value) == expected


def test_lenient_text_reads_the_unknown_words_as_empty_where_the_field_says_so():
    assert [values.lenient_text(value, words_unknown=True) for value in ("None", " null", "NaN", "", "no")] == [
        "", "", "", "", "no"]


@pytest.mark.parametrize("value, expected", [
    (3, 3.0), (-2, -2.0), (" 4.5 ", 4.5), ("none", None), ("NaN", None), ("inf", None), ("x", None), (True, None),
    (math.nan, None), ([1], None), (None, None),
])
def test_lenient_number(value, expected):
    assert values.lenient_number(value) == expected


@pytest.mark.parametrize("value, integer, expected", [
    (-1, False, None), ("-1", False, None), (0.25, False, 0.25), ("12", True, 12), (12.0, True, 12), (12.5, True, None),
])
def test_lenient_quantity_reads_a_negative_as_unknown(value, integer, expected):
    result = values.lenient_quantity(value, integer=integer)
    assert result == expected and type(result) is type(expected)


def test_the_json_loader_is_strict_and_says_what_it_replaced():
    notes = []
    assert values.load_json('{"a": "x\\u0000y\\ud800", "b": ["\\u0000"]}', notes) == {"a": "x\ufffdy\ufffd", "b": ["\ufffd"]}
    assert notes == [f"{UNSTORABLE_REPLACED} (3)"]
    for document, message in (("NaN", "not a JSON number: NaN"), ("1e999", "number too large"),
                              ("1" * 30, "number too large"), ("[1,", "invalid JSON")):
        with pytest.raises(TrajectoryFormatError, match=message):
            values.load_json(document)
    with pytest.raises(values.InvalidJSON) as error:
        values.load_json('{"a": 1}\n{"a": 2}')
    assert error.value.extra_data and error.value.line == 2


@pytest.mark.parametrize("value, expected", [
    (0, values.Score(0, False)),
    (49.9, values.Score(49.9, False)),
    (50, values.Score(50, True)),
    (100, values.Score(100, True)),
    (150, values.Score(150, None, "score 150", "score: 150 is outside the scale 0 to 100: read as unsure")),
    (-1, values.Score(-1, None, "score -1", "score: -1 is outside the scale 0 to 100: read as unsure")),
    (None, None),
])
def test_a_graded_score_off_its_scale_is_unsure_and_said(value, expected):
    assert values.graded_score({"score": value}, "score", scale=(0, 100), threshold=50) == expected


def test_a_graded_score_that_is_no_number_names_its_scale():
    with pytest.raises(TrajectoryFormatError, match="expected a number from 0 to 100, got '80'"):
        values.graded_score({"score": "80"}, "score", scale=(0, 100), threshold=50)
