import pytest
from hypothesis import given
from hypothesis import strategies as st

from trajectories.formats.spreadsheet import spreadsheet_cell, spreadsheet_text


@pytest.mark.parametrize(
    ("text", "written"),
    [
        ('=HYPERLINK("http://evil.example","Click")', '\'=HYPERLINK("http://evil.example","Click")'),
        ("+cmd|' /C calc'!A0", "'+cmd|' /C calc'!A0"),
        ("-2+3", "'-2+3"),
        ("@SUM(A1:A2)", "'@SUM(A1:A2)"),
        ("\t=1+1", "'\t=1+1"),
        ("\r=1+1", "'\r=1+1"),
        ("'=1+1", "''=1+1"),  # a text that really starts with a quote keeps it
        ("''", "'''"),
        ("'Orders' link", "'Orders' link"),  # a quote before anything else is left alone
        ("Click on 'Orders'", "Click on 'Orders'"),
        ("'", "'"),
        ("", ""),
    ],
)
def test_formula_starts_get_a_quote_and_come_back(text, written):
    assert spreadsheet_cell(text) == written
    assert spreadsheet_text(written) == text


@pytest.mark.parametrize("value", [-3, -0.5, 0, 12, True, None])
def test_numbers_stay_numbers(value):
    assert spreadsheet_cell(value) is value


@given(st.text(alphabet=st.sampled_from("'=+-@\t\rab 1"), max_size=8))
def test_every_text_round_trips_and_never_opens_as_a_formula(text):
    written = spreadsheet_cell(text)
    assert spreadsheet_text(written) == text
    assert not written or written[0] not in "=+-@\t\r"
