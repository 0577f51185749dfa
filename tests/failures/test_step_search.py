import numpy as np

from failures.step_search import (Snippet, dequantize, found_words, fuse, marked, matched_terms, nearest, quantize,
                                  query_terms, snippet)


def test_query_terms_are_distinct_lowercased_words_short_and_common_ones_left_out():
    assert query_terms("Login  captcha, a LOGIN page in the cart") == ("login", "captcha", "page", "cart")
    assert query_terms("in the") == ("in", "the")


def test_matched_terms_counts_words_found_in_any_text():
    assert matched_terms(("login", "captcha", "cart"), ["The CAPTCHA", "login page"]) == 2


def test_snippet_marks_the_first_match_of_the_first_field_holding_one():
    text = "x" * 100 + "Captcha here" + "y" * 100
    found = snippet(("captcha",), {"reasoning": "nothing", "observation": text})
    assert found == Snippet("observation", "…" + "x" * 80, "Captcha", " here" + "y" * 75 + "…")


def test_snippet_of_a_match_by_meaning_is_the_head_of_the_first_text():
    assert snippet(("absent",), {"reasoning": "", "action": "click [3]"}) == Snippet("action", "", "", "click [3]")
    assert snippet(("absent",), {"reasoning": " "}) is None


def test_nearest_ranks_stored_int8_rows_by_cosine():
    rows = dequantize(quantize(np.array([[1.0, 0.0], [0.6, 0.8], [0.0, 1.0]])))
    found = nearest(np.array([0.0, 1.0]), rows, 2)
    assert [row for row, _ in found] == [2, 1]
    assert abs(found[0][1] - 1.0) < 1e-6 and abs(found[1][1] - 102 / 127) < 1e-6


def test_fusion_puts_first_what_both_rankings_place_high():
    assert fuse(["a", "b", "c"], ["b", "d"]) == ["b", "a", "d", "c"]  # b 1/62+1/61, a 1/61, d 1/62, c 1/63


def test_marked_cuts_the_text_at_each_match_case_ignored_the_longer_first():
    assert marked("Red shoes, REDDISH socks", ("red", "reddish")) == [
        ("Red", True), (" shoes, ", False), ("REDDISH", True), (" socks", False)]
    assert marked("no match", ("red",)) == [("no match", False)]
    assert marked("red", ()) == [("red", False)]
    assert marked("", ("red",)) == []


def test_marked_reads_terms_as_text_not_patterns():
    assert marked("a.b axb", ("a.b",)) == [("a.b", True), (" axb", False)]


def test_found_words_are_the_query_terms_and_the_step_of_a_result():
    assert found_words({"find": "Red shoes", "find_step": "3"}) == {"found_terms": ("red", "shoes"), "found_step": 3}
    assert found_words({"find_step": "x"}) == {"found_terms": (), "found_step": None}
