import pytest

from failures.agreement import Label, annotator_pairs, kappa, share, step_agreement


def _pair(first_step, second_step, first_type="looped", second_type="looped", first_agent="", second_agent=""):
    return (Label("a", first_step, first_agent, first_type), Label("b", second_step, second_agent, second_type))


def test_step_agreement_exact_within_one_and_three_by_hand():
    # Distances 0, 1, 3 and 9: exact 1 of 4, within 1: 2 of 4, within 3: 3 of 4.
    pairs = [_pair(3, 3), _pair(3, 4), _pair(2, 5), _pair(10, 1)]

    result = step_agreement(pairs)

    assert result.pairs == 4
    assert (result.exact.value, result.within_1.value, result.within_3.value) == (0.25, 0.5, 0.75)
    assert result.exact.count == 4


def test_cohens_kappa_of_failure_types_by_hand():
    # Observed 3/4; chance: first a 1/2, b 1/2, second a 1/4, b 3/4 -> 1/8 + 3/8 = 1/2; kappa (0.75-0.5)/0.5.
    result = kappa([("a", "a"), ("a", "b"), ("b", "b"), ("b", "b")])

    assert result.value == pytest.approx(0.5)
    assert result.count == 4
    low, high = result.interval
    assert -1 <= low <= 0.5 <= high <= 1


def test_kappa_of_one_type_throughout_is_undefined_not_one():
    assert kappa([("looped", "looped")] * 3).value is None


def test_agent_agreement_counts_only_pairs_where_both_named_one():
    pairs = [_pair(1, 1, first_agent="WebSurfer", second_agent="WebSurfer"),
             _pair(1, 1, first_agent="WebSurfer", second_agent="Orchestrator"),
             _pair(1, 1, first_agent="WebSurfer")]

    result = step_agreement(pairs)

    assert (result.agent.value, result.agent.count) == (0.5, 2)


def test_share_interval_is_seeded_and_degenerate_when_all_agree():
    assert share([True] * 5).interval == (1.0, 1.0)
    assert share([True, False, True, False]).interval == share([True, False, True, False]).interval
    assert share([]).value is None and share([]).interval is None


def test_annotator_pairs_are_every_two_people_of_one_trajectory_ordered_by_name():
    labels = [[Label("carol", 2), Label("alice", 1), Label("bob", 3)], [Label("alice", 4)]]

    pairs = annotator_pairs(labels)

    assert [(a.annotator, b.annotator) for a, b in pairs] == [("alice", "bob"), ("alice", "carol"), ("bob", "carol")]


def test_failure_type_share_and_kappa_leave_out_pairs_without_a_type():
    pairs = [_pair(1, 1, "looped", "looped"), _pair(1, 1, "looped", ""), _pair(1, 1, "looped", "wrong_value")]

    result = step_agreement(pairs)

    assert (result.failure_type.value, result.failure_type.count) == (0.5, 2)
    assert result.type_kappa.count == 2
