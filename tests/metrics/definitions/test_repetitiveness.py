import pytest

from metrics.definitions import POINT_TOLERANCE, ActedStep, repetitiveness, same_action
from trajectories.formats.canonical import ActionParts

from .judging import neighbour_scores


def score(actions, **kwargs):
    return repetitiveness(neighbour_scores(actions), len(actions), **kwargs)


def test_no_agent_steps_is_null():
    result = score([])
    assert result.value is None
    assert result.repeated_steps == ()


def test_single_action_is_one():
    assert score(["click [3]"]).value == 1.0


def test_all_repeated():
    result = score(["scroll [down]"] * 4)
    assert result.value == 0.25
    assert result.repeated_steps == (2, 3, 4)


def test_every_action_exactly_twice_scores_half():
    result = score(["click [1]", "click [1]", "type [2] [a]", "type [2] [a]", "go_back", "go_back"])
    assert result.value == 0.5
    assert result.repeated_steps == (2, 4, 6)


def test_no_equal_neighbours_is_one():
    assert score(["click [1]", "click [2]", "click [1]"]).value == 1.0


def test_tau_is_inclusive_and_a_parameter():
    assert repetitiveness([0.7], 2).repeated_steps == (2,)
    assert repetitiveness([0.7], 2, tau=0.8).value == 1.0


def test_one_score_per_step_after_the_first():
    with pytest.raises(ValueError, match="2 neighbour scores for 2 agent steps, expected 1"):
        repetitiveness([1.0, 0.0], 2)
    with pytest.raises(ValueError, match="expected 0"):
        repetitiveness([1.0], 0)


def test_bad_score_names_the_step():
    with pytest.raises(ValueError, match="agent step 3"):
        repetitiveness([0.0, 2.0], 3)


# What "equivalent" means for structured actions: kind, target and argument, on the same page ----


def at(x, y, url=""):
    return ActedStep(ActionParts(type="click", x=x, y=y), url)


@pytest.mark.parametrize(("previous", "step", "same"), [
    # Two clicks at points 6.0 px apart (3-4-5 doubled): one target; 10.2 px apart (dx 10, dy 2): two.
    (at(100, 100), at(106, 108), True),
    (at(100, 100), at(110, 100), True),  # exactly POINT_TOLERANCE away
    (at(100, 100), at(110, 102), False),
    # The same point on two pages (both record a URL) is two targets; a step without a URL is on the
    # page of the one before.
    (at(100, 100, "https://a.test/"), at(100, 100, "https://a.test/next"), False),
    (at(100, 100, "https://a.test/"), at(100, 100, ""), True),
    # Kind, then element id (before label), then the typed text (whitespace normalised).
    (ActedStep(ActionParts(type="click", element_id="7")), ActedStep(ActionParts(type="hover", element_id="7")), False),
    (ActedStep(ActionParts(type="click", element_id="7", element_label="link 'A'")),
     ActedStep(ActionParts(type="click", element_id="7", element_label="link 'B'")), True),
    (ActedStep(ActionParts(type="click", element_id="7")), ActedStep(ActionParts(type="click", element_id="8")), False),
    (ActedStep(ActionParts(type="type", value="red  shoes", press_enter=True)),
     ActedStep(ActionParts(type="type", value="red shoes", press_enter=False)), True),
    (ActedStep(ActionParts(type="type", value="red")), ActedStep(ActionParts(type="type", value="blue")), False),
    # A selector names the element when there is no id; an element and a bare point are two targets.
    (ActedStep(ActionParts(type="click", selector="input#q")), ActedStep(ActionParts(type="click", selector="a#x")),
     False),
    (ActedStep(ActionParts(type="click", element_id="7")), at(100, 100), False),
    # Without id or selector, the element's label (whitespace normalised) names it.
    (ActedStep(ActionParts(type="click", element_label="link  'Cart'")),
     ActedStep(ActionParts(type="click", element_label="link 'Cart'")), True),
    (ActedStep(ActionParts(type="click", element_label="link 'Cart'")),
     ActedStep(ActionParts(type="click", element_label="link 'Home'")), False),
    # A scroll is the same by its direction, whatever the amount; a key by the keys.
    (ActedStep(ActionParts(type="scroll", value="down", delta_x=0, delta_y=400)),
     ActedStep(ActionParts(type="scroll", value="down", delta_x=0, delta_y=600)), True),
    (ActedStep(ActionParts(type="scroll", value="down")), ActedStep(ActionParts(type="scroll", value="up")), False),
    (ActedStep(ActionParts(type="press", value="ENTER")), ActedStep(ActionParts(type="press", value="ENTER")), True),
    # Free text (no kind, or an output the harness could not read) is the judge's to compare.
    (ActedStep(None), at(1, 1), None),
    (ActedStep(ActionParts(type="none")), ActedStep(ActionParts(type="none")), None),
])
def test_same_action_compares_what_the_steps_did(previous, step, same):
    assert POINT_TOLERANCE == 10.0
    assert same_action(previous, step) is same


def test_the_rule_and_the_judge_each_decide_their_pairs():
    # Steps 2 and 4 repeat by the rule (True), step 3 does not (False); step 5 is free text the
    # judge scored 0.9 >= tau 0.7: r = 3 of n = 5 -> 1 - 3 / 5 = 0.4.
    result = repetitiveness([True, False, True, 0.9], 5)
    assert result.value == pytest.approx(0.4)
    assert (result.repeated_steps, result.judged_steps) == ((2, 4, 5), (5,))


def test_no_steps_says_why():
    assert repetitiveness([], 0).null_reason == "no agent steps"
    assert repetitiveness([], 1).null_reason == ""


def test_the_whole_result_and_what_is_refused():
    assert repetitiveness([0.7, False], 3, tau=0.7).to_dict() == {
        "value": 1 - 1 / 3, "agent_steps": 3, "repeated_steps": [2], "tau": 0.7, "judged_steps": [2],
        "null_reason": ""}
    with pytest.raises(ValueError) as raised:
        repetitiveness([], -1)
    assert str(raised.value) == "agent_steps must be a non-negative integer, got -1"
    with pytest.raises(ValueError) as raised:
        repetitiveness([True], 3)
    assert str(raised.value) == "1 neighbour scores for 3 agent steps, expected 2 (one per step after the first)"
