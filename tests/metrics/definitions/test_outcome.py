import pytest

from metrics.definitions import outcome_category


@pytest.mark.parametrize(
    "status, reason, label",
    [
        ("answered", None, "answered"),
        ("na", None, "na"),
        ("early_stop", "repeated_action", "early_stop (repeated_action)"),
        ("early_stop", "invalid_actions", "early_stop (invalid_actions)"),
        ("early_stop", "max_steps", "early_stop (max_steps)"),
        ("no_stop", "", "no_stop"),
    ],
)
def test_categories(status, reason, label):
    result = outcome_category(status, reason, agent_steps=8, gold_steps=6)
    assert (result.status, result.reason or None) == (status, reason or None)
    assert (result.agent_steps, result.gold_steps) == (8, 6)
    assert result.label == label


def test_early_stop_without_a_known_reason_is_other():
    assert outcome_category("early_stop", None, 30).reason == "other"


def test_no_steps_is_crashed():
    result = outcome_category("crashed", None, 0, gold_steps=4)
    assert (result.status, result.reason, result.gold_steps) == ("crashed", "", 4)


def test_no_steps_is_crashed_whatever_the_recorded_status():
    result = outcome_category("early_stop", "invalid_actions", 0)
    assert (result.status, result.reason) == ("crashed", "")


def test_without_gold_the_gold_length_is_null():
    assert outcome_category("answered", None, 2).gold_steps is None


def test_to_dict():
    assert outcome_category("na", None, 3, 5).to_dict() == {
        "status": "na", "reason": "", "agent_steps": 3, "gold_steps": 5,
    }


@pytest.mark.parametrize(
    "status, reason, agent_steps, gold_steps, message",
    [
        ("finished", None, 1, None,
         "outcome.status: 'finished' is not one of answered, na, early_stop, no_stop, crashed"),
        ("early_stop", "tired", 1, None,
         "outcome.reason: 'tired' is not one of repeated_action, invalid_actions, max_steps, other"),
        ("answered", "max_steps", 1, None,
         "outcome.reason: 'max_steps' given for status 'answered'; only early_stop has a reason"),
        ("answered", None, -1, None, "agent_steps must be a non-negative integer, got -1"),
        ("answered", None, 1, -2, "gold_steps must be a non-negative integer, got -2"),
    ],
)
def test_bad_outcomes_are_refused(status, reason, agent_steps, gold_steps, message):
    with pytest.raises(ValueError) as raised:
        outcome_category(status, reason, agent_steps, gold_steps)
    assert str(raised.value) == message
