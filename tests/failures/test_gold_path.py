from failures.gold_path import decisive_step


def _deviation(agent_step, gold_step):
    return {"kind": "deviation", "agent_step": agent_step, "gold_step": gold_step}


def _recovery(agent_step, gold_step):
    return {"kind": "recovery", "agent_step": agent_step, "gold_step": gold_step, "cost": 1}


def test_the_last_deviation_never_recovered_names_its_first_off_path_step():
    # Left at 3, came back at 5 (gold 3); left again at 7 expecting gold 5, and never came back.
    events = [_deviation(3, 3), _recovery(5, 3), _deviation(7, 5)]

    found = decisive_step(events, agent_steps=9)

    assert (found.step, found.missed_gold_step) == (7, 5)
    assert "left the gold path at step 7 and never came back" in found.reason


def test_an_agent_that_stopped_on_the_path_is_named_at_its_last_step():
    found = decisive_step([_deviation(None, 4), _deviation(None, 5)], agent_steps=3)

    assert (found.step, found.missed_gold_step) == (3, 4)
    assert found.reason == "stopped on the gold path before gold step 4"


def test_a_path_recovered_to_the_end_names_no_step():
    assert decisive_step([_deviation(2, 2), _recovery(3, 2)], agent_steps=3) is None
    assert decisive_step([], agent_steps=3) is None
    assert decisive_step([_deviation(None, 1)], agent_steps=0) is None
