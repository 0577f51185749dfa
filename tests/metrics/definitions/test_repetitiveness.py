import pytest

from metrics.definitions import repetitiveness

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
