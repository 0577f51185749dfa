"""The terms of a text: stemmed words, the unit of word fit."""

from annotation.quality.terms import terms


def test_words_lose_a_suffix_only_when_four_letters_remain():
    # tests -> test (4 letters left), reports -> report; bits and uses keep theirs (3 and 2 would remain);
    # "was" is a stop word, "go" too short.
    assert terms("tests bits reports uses was go") == {
        "test": "tests", "bits": "bits", "report": "reports", "uses": "uses"}
    # The docstring's example: "bestsellers" and "best-selling" share the term "bestsell" (the first word
    # keeps it); "selling" -> "sell" with exactly four letters left.
    assert terms("bestsellers best-selling") == {
        "bestsell": "bestsellers", "best-selling": "best-selling", "best": "best-selling", "sell": "best-selling"}
