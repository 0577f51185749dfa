import pytest

from judges import embeddings
from judges import questions as q
from judges.backends import BackendSpec, make_backend
from judges.backends.offline import (
    _contained,
    _numbers,
    _roles_compatible,
    answer_facts,
    compare_parts,
    contains_phrase,
    different_identifiers,
    embedded_texts,
    grounded,
    identifiers,
    name_similarity,
    parts_of,
    relevant,
    url_similarity,
    value_similarity,
)
from judges.parsing import StepParts
from judges.steps import JudgeStep


@pytest.fixture(scope="module")
def offline():
    return make_backend(BackendSpec("offline"))


@pytest.fixture(scope="module")
def offline_without_embeddings():
    return make_backend(BackendSpec("offline", options={"embeddings": False}))


def score(backend, gold: str, agent: str, observation: str = "") -> float:
    [answer] = backend.answer([q.step_match(JudgeStep(gold), JudgeStep(agent, observation=observation))])
    return answer.score


def test_values_must_carry_the_same_numbers():
    assert value_similarity("01/01/2022", "1/1/2022") == 1.0
    assert value_similarity("03/31/2022", "12/31/2022") == 0.0
    assert value_similarity("", "x") is None


@pytest.mark.parametrize("first, second", [
    ("01/01/2022", "2022-01-01"), ("03/31/2022", "March 31, 2022"), ("12/31/2022", "31 December 2022"),
    ("03/01/2030", "Mar 1 2030"), ("31/01/2030", "2030-01-31"), ("$1,699.50", "$1699.5"), ("01/01/2022", "1 Jan 2022"),
])
def test_values_naming_the_same_date_or_amount_are_equal(first, second):
    assert value_similarity(first, second) == 1.0


@pytest.mark.parametrize("first, second", [
    ("000000175", "000000179"), ("000000148", "148"), ("$169.95", "$169.59"), ("01/01/2022", "2022-01-02"),
    ("Order 000000148: refund $169.95", "Order 000000148: refund $196.95"), ("123456789", "123456780"),
])
def test_values_whose_identifiers_differ_by_a_digit_are_different(first, second):
    assert value_similarity(first, second) == 0.0


def test_identifiers_read_dates_ids_and_amounts():
    assert identifiers("Order ID 000000148 placed on March 1, 2030 for $1,699.50") == (
        "000000148", "d2030-03-01", "1699.5")
    assert identifiers("click [2012] where [2012] is link 'Page 2'") == ("2012", "2012", "2")
    assert identifiers("no numbers") == ()


def test_names_with_other_numbers_are_other_elements():
    assert name_similarity("Page 2", "Page 12") == 0.0
    assert name_similarity("Issues", "Issues 41") > 0.7  # a count beside the name the gold gives


def test_typed_texts_must_be_the_same_text(offline):
    gold = "Type '404 for many URLs' into the 'Title' textbox."
    assert score(offline, gold, "type [3012] [404 for many URLs] [0] where [3012] is textbox 'Title'") == 1.0
    assert score(offline, gold, "type [3012] [404 For  many URLs ] where [3012] is textbox 'Title'") == 1.0
    assert score(offline, gold, "type [3012] [404 for many URL] [0] where [3012] is textbox 'Title'") < 0.7


def test_sentences_naming_other_numbers_are_other_steps(offline):
    gold = "Click on the 'View Order' link for order ID 000000148"
    assert score(offline, gold, "click on the \"view order\" link for order id 000000148") == 1.0
    assert score(offline, gold, "click on the \"view order\" link for order id 000000178") == 0.0


def test_names_ignore_icons_and_case_and_reward_containment():
    assert name_similarity("REPORTS", "\\ue60a REPORTS") == 1.0
    assert 0.7 < name_similarity("Issues", "Issues 40") < 1.0
    assert name_similarity("Reports", "Customers") < 0.5


@pytest.mark.parametrize(
    "gold, agent, expected",
    [
        (StepParts("click", "link", "REPORTS"), StepParts("click", "link", "\\ue60a REPORTS"), 1.0),
        (StepParts("click", "link", "REPORTS"), StepParts("type", "textbox", "Search", "REPORTS"), 0.0),
        (StepParts("select", "option", "", "Year"), StepParts("click", "option", "Year"), 0.9),
        (StepParts("select", "combobox", "Period", "Year"), StepParts("click", "combobox", "Period"), 0.0),
        (StepParts("type", "textbox", "To", "03/31/2022"), StepParts("type", "textbox", "To", "12/31/2022"), 0.0),
        (StepParts("type", "textbox", "From", "01/01/2022"), StepParts("type", "textbox", "", "01/01/2022"), 0.75),
        (StepParts("scroll", value="down"), StepParts("scroll", value="up"), 0.0),
        (StepParts("go_back"), StepParts("go_back"), 1.0),
    ],
)
def test_structured_steps(gold, agent, expected):
    assert compare_parts(gold, agent)[0] == pytest.approx(expected, abs=0.01)


def test_the_same_name_on_an_element_of_another_kind_costs_the_role_mismatch_factor():
    # Same action and name (similarity 1.0); a link and a textbox share no role group: 1.0 * 0.85.
    assert compare_parts(StepParts("click", "link", "Reports"), StepParts("click", "textbox", "Reports")) == (
        0.85, "Element similarity 1.00, different roles.")
    # A link and a button are both things one clicks: no factor, and no word of roles.
    assert compare_parts(StepParts("click", "link", "Reports"), StepParts("click", "button", "Reports")) == (
        1.0, "Element similarity 1.00.")
    # Typing the same value into a searchbox named alike and into a combobox: both take text, no factor;
    # into a link: min(name 1.0, value 1.0) * 0.85.
    assert compare_parts(StepParts("type", "searchbox", "Search", "bose"),
                         StepParts("type", "combobox", "Search", "bose"))[0] == 1.0
    assert compare_parts(StepParts("type", "searchbox", "Search", "bose"),
                         StepParts("type", "link", "Search", "bose"))[0] == 0.85


def test_hovering_is_related_to_clicking_but_below_the_threshold():
    assert 0 < compare_parts(StepParts("click", "link", "A"), StepParts("hover", "link", "A"))[0] < 0.7


@pytest.mark.parametrize("gold, agent, expected", [
    # Actions that cannot stand for each other: nothing else is looked at.
    (StepParts("click", "link", "Go"), StepParts("type", "link", "Go", "Go"), (0.0, "Different actions: click vs type.")),
    (StepParts("go_back"), StepParts("go_forward"), (0.0, "Different actions: go_back vs go_forward.")),
    # No target: the action alone, whatever else either side names.
    (StepParts("go_back"), StepParts("go_back"), (1.0, "Both go_back.")),
    (StepParts("new_tab", "link", "A"), StepParts("new_tab", "button", "B"), (1.0, "Both new_tab.")),
    # A scroll or a key: the same direction or key as plain text (the gold's in the rationale), else nothing.
    (StepParts("scroll", value="Down"), StepParts("scroll", value="down."), (1.0, "Same scroll Down.")),
    (StepParts("scroll", value="down"), StepParts("scroll", value="up"), (0.0, "scroll down vs up.")),
    (StepParts("press", value="Enter"), StepParts("press", value="enter"), (1.0, "Same press Enter.")),
    (StepParts("press", value="Enter"), StepParts("press", value="Tab"), (0.0, "press Enter vs Tab.")),
    # goto: the URLs' similarity (15 of 16 characters kept: ratio 30/32, rescaled from [0.6, 1]: 0.84375).
    (StepParts("goto", value="https://www.a.com/"), StepParts("goto", value="a.com"), (1.0, "URL similarity 1.00.")),
    (StepParts("goto", value="example.com/abcd"), StepParts("goto", value="example.com/abce"),
     (0.84375, "URL similarity 0.84.")),
    # stop: the answers' similarity, an answer missing on one side read as 0 ("abcd" / "abce": 0.5, as names).
    (StepParts("stop", value="Order 12"), StepParts("stop", value="order 12."), (1.0, "Answer similarity 1.00.")),
    (StepParts("stop", value=""), StepParts("stop", value="42"), (0.0, "Answer similarity 0.00.")),
    (StepParts("stop", value="abcd"), StepParts("stop", value="abce"), (0.5, "Answer similarity 0.50.")),
    # Clicking the option selects it (affinity 0.9), the select on either side: its value, else its element's name.
    (StepParts("select", "option", "", "Year"), StepParts("click", "option", "Year"), (0.9, "Element similarity 1.00.")),
    (StepParts("click", "option", "Year"), StepParts("select", "combobox", "Period", "Year"),
     (0.9, "Element similarity 1.00.")),
    (StepParts("select", "combobox", "Year"), StepParts("click", "option", "Year"), (0.9, "Element similarity 1.00.")),
    # Hovering for clicking: affinity 0.6; an unnamed element scores 0.5, times the affinity.
    (StepParts("click", "link", "A"), StepParts("hover", "link", "A"), (0.6, "Element similarity 1.00.")),
    (StepParts("click", "link", ""), StepParts("click", "link", "Go"), (0.5, "One side's element could not be named.")),
    (StepParts("click", "link", ""), StepParts("hover", "link", "Go"), (0.3, "One side's element could not be named.")),
    # "Issues" in "Issues 40": 0.55 + 0.45 * 6 / 9 = 0.85.
    (StepParts("click", "link", "Issues"), StepParts("click", "link", "Issues 40"), (0.85, "Element similarity 0.85.")),
    # Typing and selecting: the value too; none on one side scores 0.5.
    (StepParts("type", "textbox", "Search", "bose"), StepParts("type", "textbox", "Search"),
     (0.5, "One side gives no value.")),
    (StepParts("select", "combobox", "Period"), StepParts("select", "combobox", "Period", "Year"),
     (0.5, "One side gives no value.")),
    # "urls" / "url": ratio 6/7, rescaled from [0.5, 1]: 5/7; typed text that differs is capped at 0.5.
    (StepParts("type", "textbox", "Title", "URLs"), StepParts("type", "textbox", "Title", "URL"),
     (0.5, "Element 1.00, value 0.50.")),
    # "years" / "year": ratio 8/9, rescaled 7/9, and a selected value is not capped.
    (StepParts("select", "combobox", "Period", "Years"), StepParts("select", "combobox", "Period", "Year"),
     (7 / 9, "Element 1.00, value 0.78.")),
    # The lower of element and value: "title" / "titles", ratio 10/11, rescaled 9/11; an unnamed element 0.75.
    (StepParts("type", "textbox", "Title", "x"), StepParts("type", "textbox", "Titles", "x"),
     (9 / 11, "Element 0.82, value 1.00.")),
    (StepParts("type", "textbox", "From", "01/01/2022"), StepParts("type", "textbox", "", "January 1, 2022"),
     (0.75, "Element unknown, value 1.00.")),
])
def test_every_way_two_structured_steps_are_compared(gold, agent, expected):
    score, rationale = compare_parts(gold, agent)
    assert (score, rationale) == (pytest.approx(expected[0]), expected[1])


def test_parts_of_a_step_given_with_its_structure_or_in_the_grammar():
    assert parts_of({"text": "Search for bose", "action_type": "type", "element_role": "searchbox",
                     "element_name": "Search", "value": "bose"}) == StepParts("type", "searchbox", "Search", "bose")
    assert parts_of({"text": "click [4] where [4] is button 'Go'", "action_type": "", "element_role": "",
                     "element_name": "", "value": ""}) == StepParts("click", "button", "Go")


def test_gold_text_against_executed_actions(offline):
    assert score(offline, "Click on the 'REPORTS' link in the navigation menu.",
                 "click [723]", "[723] link '\\ue60a REPORTS' url: http://x/#") == 1.0
    assert score(offline, "Type '03/31/2022' into the 'To' textbox.",
                 "type [9] [12/31/2022] [1] where [9] is textbox 'To'") == 0.0
    assert score(offline, "Click on the 'REPORTS' link in the navigation menu.", "none") == 0.0


def test_free_text_is_compared_with_embeddings_or_fuzzy_matching(offline, offline_without_embeddings):
    gold = "Extract the status of the latest order from the 'Recent Orders' table on the current page"
    paraphrase = "Read the status of the most recent order in the Recent Orders table"
    unrelated = "Write a review of the blue running shoes"
    for backend in (offline, offline_without_embeddings):
        assert score(backend, gold, paraphrase) >= 0.7
        assert score(backend, gold, unrelated) < 0.3
    assert offline.model == "rules+minilm" and offline_without_embeddings.model == "rules"


def test_trajectory_question_composes_the_pairs(offline):
    gold = [JudgeStep("Scroll down"), JudgeStep("Click the 'Go' button")]
    agent = [JudgeStep("click [4] where [4] is button 'Go'"), JudgeStep("scroll [down]"), JudgeStep("none")]
    [answer] = offline.answer([q.trajectory_match(gold, agent)])
    assert answer.output["matrix"] == [[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]]
    assert answer.score == 1.0


def test_repetition(offline):
    same, different = offline.answer([
        q.repetition(JudgeStep("click [4] where [4] is button 'Go'"), JudgeStep("click [4]")),
        q.repetition(JudgeStep("scroll [down]"), JudgeStep("scroll [up]")),
    ])
    assert (same.score, different.score) == (1.0, 0.0)


def test_requirements(offline):
    intent = "What are the top-2 best-selling product in 2022"
    answers = offline.answer([
        q.requirement(intent, "Quest Lumaflex™ Band and Sprite Stasis Ball 65 cm", "sprite stasis ball 65 cm"),
        q.requirement(intent, "Quest Lumaflex Band", "Quest Lumaflex™ Band"),
        q.requirement(intent, "Sprite Stasis Ball 55 cm", "Sprite Stasis Ball 65 cm"),
        q.requirement(intent, "Overnight Duffle", "Hawkeye Yoga Short-32-Blue"),
        q.requirement(intent, "", "Overnight Duffle"),
    ])
    assert [round(a.score, 2) for a in answers][:3] == [1.0, 1.0, 0.0]
    assert answers[3].score < 0.5
    assert answers[4].score == 0.0 and answers[4].rationale == "No answer."


def test_fuzzy_answer(offline):
    intent = "What is the top-1 best-selling product in 2022"
    right, wrong = offline.answer([
        q.fuzzy_answer(intent, "It is the Quest Lumaflex Band.", "Quest Lumaflex™ Band"),
        q.fuzzy_answer(intent, "Sprite Stasis Ball 65 cm", "Quest Lumaflex™ Band"),
    ])
    assert right.score == 1.0 and wrong.score < 0.5


def test_groundedness_finds_the_answers_facts_in_the_observations(offline):
    observed = ["[354] cell 'Quest Lumaflex™ Band'\n[357] cell '$19.00'\n[360] cell '6'"]
    intent = "What are the top-2 best-selling product in 2022"
    half = offline.answer([q.groundedness(a, intent, "Quest Lumaflex™ Band, Sprite Stasis Ball 65 cm", observed)
                           for a in q.ASPECTS])
    assert half[0].score == 0.5 and "Sprite Stasis Ball 65 cm" in half[0].rationale
    assert half[1].score == 1.0
    declined = offline.answer([q.groundedness("relevant", intent, "N/A", observed)])[0]
    assert declined.score == 0.0
    price = offline.answer([q.groundedness(a, "How much does it cost?", "It costs $19.00", observed)
                            for a in q.ASPECTS])
    assert [a.score for a in price] == [1.0, 1.0]
    one_of_two = offline.answer([q.groundedness("relevant", intent, "Quest Lumaflex™ Band", observed)])[0]
    assert one_of_two.score == 0.5


def test_answer_facts():
    assert answer_facts("Quest Lumaflex™ Band, Sprite Stasis Ball 65 cm") == [
        "Quest Lumaflex™ Band", "Sprite Stasis Ball 65 cm"]
    long = "The order placed on 2023-03-02 by Grace Nguyen totals $190.00 and it was shipped with UPS in two boxes"
    facts = answer_facts(long)
    assert "190.00" in facts and "Grace Nguyen" in facts


def test_only_the_texts_compared_by_embeddings_are_encoded():
    go = JudgeStep("click [4] where [4] is button 'Go'")
    assert embedded_texts(q.step_match(JudgeStep("Click on the 'Go' button"), go)) == []
    note = JudgeStep("Note the price of the latest order")
    gold, agent = [note, JudgeStep("Click on the 'Go' button")], [go, JudgeStep("scroll [down]")]
    texts = embedded_texts(q.trajectory_match(gold, agent))
    assert sorted(set(texts)) == ["Note the price of the latest order", "click button 'Go'", "scroll 'down'"]
    intent = "What are the top-2 best-selling product in 2022"
    assert embedded_texts(q.requirement(intent, "Quest Lumaflex Band", "quest lumaflex band")) == []  # verbatim
    assert embedded_texts(q.requirement(intent, "Ball 55 cm", "Ball 65 cm")) == []  # a number is missing
    assert embedded_texts(q.requirement(intent, "The yoga band", "Quest Lumaflex Band")) == [
        "Quest Lumaflex Band", "The yoga band"]


@pytest.mark.parametrize(
    "phrase, text, expected",
    [("band", "quest band", True), ("band", "bands", False), ("ball 65", "ball 65 cm", True),
     ("5", "65", False), ("go", "go-to", True), ("é", "café", False), ("x", "", False),
     ("band", "band_2", False), ("band", "my_band", False), ("ab", "abab ab", True), ("ab", "ab", True),
     ("ab", "ab abab", True), ("ab", "abab ab abab", True), ("--", "a---", True)],
)
def test_contains_phrase_needs_word_boundaries(phrase, text, expected):
    assert contains_phrase(phrase, text) is expected


def test_embeddings_are_kept_for_the_most_recently_used_texts(monkeypatch):
    monkeypatch.setattr(embeddings, "CACHE_SIZE", 2)
    encoder = embeddings.SentenceEncoder()
    first = encoder.encode(["Orders", "Reports"])
    encoder.encode(["Orders"])
    encoder.encode(["Customers"])
    assert list(encoder._vectors) == ["Orders", "Customers"]  # "Reports" was the least recently used
    assert (encoder.encode(["Orders"])[0] == first[0]).all()


# Expected similarities below are worked out by hand: rapidfuzz's ratio of two texts is
# 1 - (characters to delete and insert) / (their lengths together).


def test_numbers_that_are_no_number_as_written_are_read_part_by_part():
    assert _numbers("version 1.2.3 costs 1,699.50") == [1.0, 2.0, 3.0, 1699.5]


@pytest.mark.parametrize("text, expected", [
    ("31/01/2030", ("d2030-01-31",)),  # 31 cannot be a month: day first
    ("13/05/2030", ("d2030-05-13",)),
    ("01/32/2030", ("01", "32", "2030")),  # no 32nd day
    ("13/13/2030", ("13", "13", "2030")),  # no calendar date: kept as written
    ("2030-02-03", ("d2030-02-03",)),
    ("3rd March 2030", ("d2030-03-03",)),
    ("Mar. 5, 2030", ("d2030-03-05",)),
    ("01/02/1850", ("01", "02", "1850")),  # no year from 1900 to 2099: no date looked for
    ("1.50 and 2.0 and 10.00 and 007", ("1.5", "2", "10", "007")),
    ("1,000 or 1,5", ("1000", "1,5")),
])
def test_identifiers_of_dates_and_amounts(text, expected):
    assert identifiers(text) == expected


@pytest.mark.parametrize("first, second, expected", [
    ("Order 5", "Order 05", True),  # an id is compared digit by digit
    ("Order", "Order 5", False),  # one side names no number
    ("Order 5", "Order", False),
    ("x 5", "y 5", False),  # the same numbers, written alike
    ("$1,699.50", "$1699.5", False),  # written otherwise, the same amount
])
def test_different_identifiers(first, second, expected):
    assert different_identifiers(first, second) is expected


def test_name_similarity_by_containment_and_by_ratio():
    assert name_similarity("Issues", "Issues 40") == pytest.approx(0.55 + 0.45 * 6 / 9)
    assert name_similarity("", "x") is None and name_similarity("x", "") is None
    # "abcd" / "abce": 3 of 4 characters kept, ratio 0.75, rescaled from [0.5, 1]: 0.5.
    assert name_similarity("abcd", "abce") == pytest.approx(0.5)
    # "ab 1" / "ab 2": ratio 0.75, rescaled 0.5: from 0.5 up, the numbers are checked, and differ.
    assert name_similarity("ab 1", "ab 2") == 0.0
    # "abcdefg 1" / "abcdxyz 2": "abcd " kept of 9 each, ratio 10/18, rescaled 1/9: below 0.5, not checked.
    assert name_similarity("abcdefg 1", "abcdxyz 2") == pytest.approx(1 / 9)
    assert name_similarity("b", "a b") == pytest.approx(0.55 + 0.45 * 1 / 3)  # the shorter is looked for
    assert name_similarity("red big", "big red") == 1.0  # the words sorted: the same
    # "b a" / "b c": as written "b " kept of 3 each, ratio 4/6; sorted ("a b", "b c") only "b", ratio 2/6.
    assert name_similarity("b a", "b c") == pytest.approx((4 / 6 - 0.5) / 0.5)


def test_value_similarity_with_the_same_numbers_compares_the_words():
    assert value_similarity("Order 12 shipped", "order 12 shipped.") == 1.0
    assert value_similarity("Due: 2030-01-05", "due 01/05/2030") == 1.0
    assert value_similarity("x", "") is None and value_similarity("", "5") is None
    assert value_similarity("Order 5", "Order") == 0.0  # a number on one side only
    assert value_similarity("5.0 apples", "apples 5") == 1.0  # where the number stands does not count
    assert value_similarity("2030-01-05 due", "due January 5, 2030") == 1.0
    assert value_similarity("pack 5-day", "pack 5 day") == 1.0  # separators left by the numbers are spaces
    assert value_similarity("abcd", "abce") == pytest.approx(0.5)  # no numbers: as names
    # The same number, other words: the names' similarity ("abcd 7" in "abcd 7 x": 0.55 + 0.45 * 6 / 8).
    assert value_similarity("abcd 7", "abcd 7 x") == pytest.approx(0.55 + 0.45 * 6 / 8)


def test_url_similarity():
    assert url_similarity("https://www.Example.com/", " example.com") == 1.0
    assert url_similarity("http://a.com/x", "a.com/x/") == 1.0
    # 15 of 16 characters kept: ratio 30/32, rescaled from [0.6, 1]: 0.84375.
    assert url_similarity("example.com/abcd", "https://example.com/abce") == pytest.approx(0.84375)
    assert url_similarity("a.com/http://x", "a.com/x") < 1.0  # a scheme only at the start is dropped


@pytest.mark.parametrize("first, second, expected", [
    ("", "link", True), ("link", "", True), ("LINK", "link", True), ("textbox", "SearchBox", True),
    ("link", "textbox", False), ("checkbox", "listbox", False),
])
def test_roles_compatible(first, second, expected):
    assert _roles_compatible(first, second) is expected


def test_contained_settles_found_texts_and_missing_numbers():
    assert _contained("Quest Band", "It is the quest band.") == (1.0, "'Quest Band' is in the answer.")
    assert _contained("Ball 55 and 7 more", "Ball 65") == (0.0, "The answer lacks 55, 7.")
    assert _contained("Ball 65", "  ") == (0.0, "No answer.")
    assert _contained("Quest Band", "The yoga band") == (None, "")


def test_requirement_and_fuzzy_answer_without_embeddings(offline_without_embeddings):
    requirement, fuzzy = offline_without_embeddings.answer([
        q.requirement("intent", "xyz abce", "abcd"),
        q.fuzzy_answer("intent", "abce", "abcd"),
    ])
    # Best window "abce" against "abcd": 0.75, rescaled from [0.6, 0.95]: 0.15 / 0.35.
    assert requirement.score == pytest.approx(0.15 / 0.35)
    assert requirement.rationale == "Similarity of the requirement to the answer 0.43."
    # No word in common: the sorted texts' ratio 0.75, rescaled from [0.5, 0.95]: 0.25 / 0.45.
    assert fuzzy.score == pytest.approx(0.25 / 0.45)
    assert fuzzy.rationale == "Similarity to the reference 0.56."


def test_requirement_and_fuzzy_answer_take_the_embeddings_when_higher(offline):
    similarity = embeddings.sentence_encoder().similarity("abcd", "xyz abce")
    expected = max(0.15 / 0.35, min(1.0, max(0.0, (similarity - 0.3) / 0.5)))
    [requirement] = offline.answer([q.requirement("intent", "xyz abce", "abcd")])
    assert requirement.score == pytest.approx(expected)
    similarity = embeddings.sentence_encoder().similarity("Quest Lumaflex Band", "The yoga band")
    assert similarity > 0.4  # above the fuzzy score (0 here): the embeddings decide
    [fuzzy] = offline.answer([q.fuzzy_answer("intent", "The yoga band", "Quest Lumaflex Band")])
    assert fuzzy.score == pytest.approx(min(1.0, max(0.0, (similarity - 0.3) / 0.5)))


def test_text_similarity(offline, offline_without_embeddings):
    assert offline_without_embeddings.text_similarity("A, b!", "a b") == 1.0
    # No word in common: the sorted texts' ratio 0.75, rescaled from [0.4, 0.9]: 0.7.
    assert offline_without_embeddings.text_similarity("abcd", "abce") == pytest.approx(0.7)
    assert offline_without_embeddings.text_similarity("red shoes", "shoes red") == 1.0  # 1.2 rescaled, at most 1
    similarity = embeddings.sentence_encoder().similarity("Read the order status", "Write a shoe review")
    assert offline.text_similarity("Read the order status", "Write a shoe review") == pytest.approx(
        min(1.0, max(0.0, (similarity - 0.3) / 0.5)))


def test_answer_facts_of_quotes_short_lists_and_long_texts():
    assert answer_facts('The "Blue Bag" and \'Red Hat\'') == ["Blue Bag", "Red Hat", 'The "Blue Bag"', "\'Red Hat\'"]
    twelve = "one two three four five six seven eight nine ten eleven Twelve"
    assert answer_facts(twelve) == [twelve]  # twelve words: a list of one item
    long = "It was shipped by Al to New York City on Monday with a box of 12 items, 12 in all"
    assert answer_facts(long) == ["12", "New York City", "Monday"]  # "It" and "Al": two letters, no name
    thirteen = twelve + " Thirteen"
    assert answer_facts(thirteen) == ["Twelve Thirteen"]  # thirteen words: facts, not a list
    long = 'Bob sent the "blue bag" to a shop in the city of Rome on the second day of the month'
    assert answer_facts(long) == ["blue bag", "Bob", "Rome"]


def test_grounded_facts_with_numbers_phrases_and_words():
    observed = "alpha xxxxxxxxxxxxxxxxxx bravo yyyyyyyyyyyyyyyy charlie zzzzzzzzzzzzzzzzz delta 7 qqqqqqqqqqq"
    assert grounded("7 items", observed) == (1.0, "All 1 facts of the answer were observed.")
    assert grounded("8 items", observed) == (0.0, "Not observed: 8 items.")
    # Four of five words (0.8) found: observed; three of five: not; stop words do not count.
    assert grounded("alpha bravo charlie delta echo", observed)[0] == 1.0
    assert grounded("alpha bravo charlie echo foxtrot", observed)[0] == 0.0
    assert grounded("the alpha of the bravo", observed)[0] == 1.0
    assert grounded("yyyyyyyyyyyyyyyy charlie zzzzzzzzzzzzzzzzx", observed)[0] == 1.0  # nearly verbatim
    assert grounded("", observed) == (0.0, "The answer states nothing that could be found in the observations.")
    assert grounded("alpha, echo", observed) == (0.5, "Not observed: echo.")
    assert grounded("echo, foxtrot", observed) == (0.0, "Not observed: echo; foxtrot.")
    # Nine of ten characters in a window of ten: partial ratio 90, observed.
    assert grounded("abcdefghij", "zz abcdefghix zz")[0] == 1.0


def test_groundedness_reads_the_observations_as_one_text(offline):
    [answer] = offline.answer([q.groundedness("grounded", "intent", "alpha bravo", ["alpha", "bravo"])])
    assert answer.score == 1.0


@pytest.mark.parametrize("intent, answer, expected", [
    ("Name it", "N/A", (0.0, "The answer declines to answer.")),
    ("Name it", "I cannot find it", (0.0, "The answer declines to answer.")),
    ("How many orders?", "several", (0.0, "The task asks for a number and the answer has none.")),
    ("List the top-3 products", "A and B", (2 / 3, "The task asks for 3 items and the answer gives 2.")),
    ("List the top 3 products", "A; B\nC", (1.0, "The answer is of the kind the task asks for.")),
    ("Name the top-1 product", "A", (1.0, "The answer is of the kind the task asks for.")),
    ("Name the top-1 product", "and", (1.0, "The answer is of the kind the task asks for.")),  # one: no count
])
def test_relevant(intent, answer, expected):
    assert relevant(intent, answer) == expected


NOTE, READ = "Note the price of the latest order", "Read the price of the newest order"


def test_embedded_texts_of_repetitions_fuzzy_answers_and_groundedness():
    assert embedded_texts(q.repetition(JudgeStep("scroll [down]"), JudgeStep("scroll [down]"))) == []  # same step
    # Each free-text side is compared with the other side's steps: both orders.
    assert embedded_texts(q.repetition(JudgeStep(NOTE), JudgeStep(READ))) == [NOTE, READ, READ, NOTE]
    assert embedded_texts(q.step_match(JudgeStep(NOTE), JudgeStep("scroll [down]"))) == [NOTE, "scroll 'down'"]
    assert embedded_texts(q.fuzzy_answer("intent", "The yoga band", "Quest Lumaflex Band")) == [
        "Quest Lumaflex Band", "The yoga band"]
    assert embedded_texts(q.fuzzy_answer("intent", "It is the Quest Lumaflex Band", "Quest Lumaflex Band")) == []
    assert embedded_texts(q.groundedness("grounded", "intent", "The yoga band", ["The yoga band"])) == []


def test_the_texts_compared_by_embeddings_are_encoded_in_one_batch_first(offline, offline_without_embeddings,
                                                                        monkeypatch):
    encoder = embeddings.sentence_encoder()
    batches = []
    encode = encoder.encode
    monkeypatch.setattr(encoder, "encode", lambda texts: batches.append(list(texts)) or encode(texts))
    offline.answer([q.step_match(JudgeStep(NOTE), JudgeStep(READ)),
                    q.step_match(JudgeStep("scroll [down]"), JudgeStep("scroll [up]"))])
    assert batches[0] == [NOTE, READ, READ, NOTE]
    batches.clear()
    offline.answer([q.step_match(JudgeStep("scroll [down]"), JudgeStep("scroll [up]"))])
    assert batches == []  # nothing to encode: the encoder is not called
    offline_without_embeddings.answer([q.step_match(JudgeStep(NOTE), JudgeStep(READ))])
    assert batches == []


def test_backend_model_and_rules_version():
    assert make_backend(BackendSpec("offline", model="rules-x")).model == "rules-x"
    assert make_backend(BackendSpec("offline", options={"embeddings": True})).use_embeddings is True
    assert make_backend(BackendSpec("offline")).version(q.STEP_MATCH) == "offline-2"


def test_an_unknown_question_kind_is_refused(offline):
    with pytest.raises(ValueError, match="unknown question kind 'element_at_point'"):
        offline.answer([q.Question(q.ELEMENT_AT_POINT, {})])


def test_step_rationales(offline, offline_without_embeddings):
    gold = "Click on the 'View Order' link for order ID 000000148"
    [answer] = offline.answer([q.step_match(JudgeStep(gold), JudgeStep(gold.replace("148", "178")))])
    assert answer.rationale == "Different numbers: 000000148 vs 000000178."
    [answer] = offline_without_embeddings.answer([q.step_match(JudgeStep("abcd"), JudgeStep("abce"))])
    assert (answer.score, answer.rationale) == (pytest.approx(0.7), "Text similarity 0.70 (no structure on one side).")


def test_repetition_of_free_text_steps_is_their_similarity(offline_without_embeddings):
    same, similar = offline_without_embeddings.answer([
        q.repetition(JudgeStep("click [4] where [4] is button 'Go'"), JudgeStep("click [4]")),
        q.repetition(JudgeStep("abcd"), JudgeStep("abce")),
    ])
    assert (same.score, same.rationale) == (1.0, "Same action on the same target.")
    assert similar.score == pytest.approx(0.7)


def test_trajectory_notes_the_pairs_from_half_up(offline):
    gold = [JudgeStep("Scroll down"), JudgeStep("click [4]")]
    agent = [JudgeStep("click [5] where [5] is button 'Go'"), JudgeStep("scroll [down]")]
    [answer] = offline.answer([q.trajectory_match(gold, agent)])
    # The unnamed element of gold step 2 scores UNKNOWN_TARGET, 0.5: noted.
    assert answer.output["matrix"] == [[0.0, 1.0], [0.5, 0.0]]
    assert answer.score == 0.75
    assert answer.rationale == ("gold 1 ~ agent 2: Same scroll down.\n"
                                "gold 2 ~ agent 1: One side's element could not be named.")
    [empty] = offline.answer([q.trajectory_match([], agent)])
    assert (empty.score, empty.rationale, empty.output) == (0.0, "No agent step resembles a gold step.", {"matrix": []})
    [none] = offline.answer([q.trajectory_match(gold, [])])
    assert (none.score, none.output) == (0.0, {"matrix": [[], []]})


def test_step_rationales_of_numbers_and_of_one_free_side(offline_without_embeddings):
    [answer] = offline_without_embeddings.answer([
        q.step_match(JudgeStep("Open order 148 on page 2"), JudgeStep("Open order 178 on page 3"))])
    assert (answer.score, answer.rationale) == (0.0, "Different numbers: 148, 2 vs 178, 3.")
    [answer] = offline_without_embeddings.answer([q.step_match(JudgeStep(NOTE), JudgeStep("scroll [down]"))])
    assert answer.rationale.endswith("(no structure on one side).")


def test_a_grammar_step_keeps_its_score_whatever_numbers_the_other_sentence_names(offline):
    assert score(offline, "click [2012] where [2012] is button 'Go'", "Click the 'Go' button in row 3") == 1.0
    assert score(offline, "Click the 'Go' button in row 3", "click [2012] where [2012] is button 'Go'") == 1.0


def test_steps_given_with_their_structure(offline):
    go = JudgeStep(text="Go", action_type="click", element_role="button", element_name="Go")
    bose = JudgeStep(text="Search for bose", action_type="type", element_role="searchbox", element_name="Search",
                     value="bose")
    answers = offline.answer([
        q.step_match(go, JudgeStep("click [4] where [4] is button 'Go'")),
        q.step_match(bose, JudgeStep("type [3] [bose] [1] where [3] is searchbox 'Search'")),
    ])
    assert [a.score for a in answers] == [1.0, 1.0]


def test_trajectory_scores_are_rounded_to_four_places(offline):
    gold = [JudgeStep("click [1] where [1] is link 'Issues'")]
    agent = [JudgeStep("click [2] where [2] is link 'Issues 4000'")]
    [answer] = offline.answer([q.trajectory_match(gold, agent)])
    assert answer.output["matrix"] == [[0.7955]]  # 0.55 + 0.45 * 6 / 11 = 0.795454...


def test_sentences_scoring_half_are_checked_for_numbers(offline):
    # Names "abcd" / "abce": similarity 0.5 (see above), links both: 0.5; from 0.5 up numbers are checked.
    assert score(offline, "Click on the 'abcd' link", "Click on the 'abce' link") == pytest.approx(0.5)
    assert score(offline, "Click on the 'abcd' link for order ID 148", "Click on the 'abce' link for order ID 178") == 0.0
