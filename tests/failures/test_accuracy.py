import pytest

from failures.accuracy import Shape, against, consensus, random_floor
from failures.agreement import Label


def test_consensus_takes_the_most_named_and_the_earliest_on_a_tie():
    labels = [Label("a", 5, "WebSurfer", "looped"), Label("b", 3, "Orchestrator", "looped"),
              Label("c", 5, "Orchestrator", "wrong_value"), Label("d", 3, "", "")]

    assert consensus(labels) == Label("consensus", 3, "Orchestrator", "looped")
    assert consensus([Label("a", None)]) == Label("consensus", None, "", "")


def test_a_source_against_people_over_the_trajectories_both_attributed():
    reference = {1: Label("h", 4, "WebSurfer"), 2: Label("h", 10, "Orchestrator"), 3: Label("h", 2, "WebSurfer")}
    predicted = {1: Label("r", 4, "WebSurfer"), 2: Label("r", 12, "WebSurfer"), 4: Label("r", 1, "WebSurfer")}

    result = against(reference, predicted)

    assert result.pairs == 2
    assert (result.exact.value, result.within_1.value, result.within_3.value, result.agent.value) == (
        0.5, 0.5, 1.0, 0.5)


def test_the_random_floor_is_computed_exactly():
    # Trajectory 1: step 1 of 4 -> exact 1/4, within 1: steps 1-2 = 2/4, within 3: steps 1-4 = 4/4.
    # Trajectory 2: step 5 of 10 -> exact 1/10, within 1: steps 4-6 = 3/10, within 3: steps 2-8 = 7/10.
    reference = {1: Label("h", 1, "WebSurfer", "looped"), 2: Label("h", 5, "", "")}
    shapes = {1: Shape(steps=4, agents=2, types=9), 2: Shape(steps=10, agents=3, types=9)}

    floor = random_floor(reference, shapes)

    assert floor.exact.value == pytest.approx((1 / 4 + 1 / 10) / 2)
    assert floor.within_1.value == pytest.approx((2 / 4 + 3 / 10) / 2)
    assert floor.within_3.value == pytest.approx((4 / 4 + 7 / 10) / 2)
    assert (floor.agent.value, floor.agent.count) == (0.5, 1)
    assert floor.failure_type.value == pytest.approx(1 / 9)
    assert floor.type_kappa.value == 0.0


def test_the_floor_leaves_out_what_a_random_choice_cannot_be_measured_on():
    floor = random_floor({1: Label("h", None), 2: Label("h", 3)}, {2: Shape(steps=3)})

    assert (floor.pairs, floor.exact.value) == (1, pytest.approx(1 / 3))
    assert floor.agent.value is None and floor.type_kappa.value is None
