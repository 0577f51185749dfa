import math

import pytest

from metrics.definitions import MatchedPair, RecoveryEvent, ScoreMatrix, recovery, step_success

from .judging import exact_matrix

# METRICS.md's worked example: the paper's Table 1, executed trajectory.
TABLE1_GOLD = ["Products", "Electronics", "Smartphones"]
TABLE1_AGENT = ["About Us", "Products", "Electronics", "Scroll down", "Smartphones", "Back"]


class TestScoreMatrix:
    def test_rows_are_gold_steps_and_columns_agent_steps(self):
        matrix = ScoreMatrix([[0, 1], [0.5, 0.25]], agent_steps=2)
        assert matrix.gold_steps == 2
        assert matrix.scores == ((0.0, 1.0), (0.5, 0.25))

    def test_no_gold_steps_keeps_the_agent_step_count(self):
        assert ScoreMatrix([], agent_steps=4).agent_steps == 4

    def test_row_of_wrong_length_names_the_gold_step(self):
        with pytest.raises(ValueError, match="row of gold step 2 has 1 scores, expected 2"):
            ScoreMatrix([[0, 1], [1]], agent_steps=2)

    @pytest.mark.parametrize("bad", [1.5, -0.1, math.nan, True, "0.9", None])
    def test_score_outside_unit_range_names_the_cell(self, bad):
        with pytest.raises(ValueError, match=r"\[gold step 1\]\[agent step 2\]"):
            ScoreMatrix([[0.0, bad]], agent_steps=2)

    @pytest.mark.parametrize("bad", [-1, 1.0, True])
    def test_agent_step_count_must_be_a_count(self, bad):
        with pytest.raises(ValueError, match="agent_steps"):
            ScoreMatrix([], agent_steps=bad)


class TestStepSuccess:
    def test_table1_worked_example(self):
        result = step_success(exact_matrix(TABLE1_GOLD, TABLE1_AGENT))
        assert result.value == 1.0
        assert (result.gold_steps, result.agent_steps) == (3, 6)
        assert result.matched == (MatchedPair(1, 2, 1.0), MatchedPair(2, 3, 1.0), MatchedPair(3, 5, 1.0))
        assert result.unmatched_gold_steps == ()

    def test_no_gold_steps_is_null_not_999(self):
        result = step_success(ScoreMatrix([], agent_steps=3))
        assert result.value is None
        assert (result.gold_steps, result.agent_steps) == (0, 3)
        assert result.null_reason == "the gold trajectory has no steps"

    def test_no_agent_steps_matches_nothing(self):
        result = step_success(exact_matrix(["A", "B", "C"], []))
        assert result.value == 0.0
        assert result.unmatched_gold_steps == (1, 2, 3)

    def test_single_action(self):
        assert step_success(exact_matrix(["Click Reports"], ["Click Reports"])).value == 1.0
        assert step_success(exact_matrix(["Click Reports"], ["Click Sales"])).value == 0.0

    def test_gold_step_repeated_twice_needs_two_agent_steps(self):
        assert step_success(exact_matrix(["Scroll down", "Scroll down"], ["Scroll down"])).value == 0.5
        assert step_success(exact_matrix(["Scroll down", "Scroll down"], ["Scroll down"] * 2)).value == 1.0

    def test_never_above_one_when_the_agent_repeats_a_gold_step(self):
        result = step_success(exact_matrix(["A", "B"], ["A", "A", "A", "B", "B"]))
        assert result.value == 1.0
        assert [pair.agent_step for pair in result.matched] == [1, 4]

    def test_greedy_takes_the_first_qualifying_agent_step_not_the_best(self):
        result = step_success(ScoreMatrix([[0.8, 1.0]], agent_steps=2))
        assert result.matched == (MatchedPair(1, 1, 0.8),)

    def test_greedy_is_the_published_rule_not_a_maximum_matching(self):
        # Gold 1 could take agent 2 and leave agent 1 to gold 2, but greedy takes agent 1 first.
        matrix = ScoreMatrix([[1.0, 1.0], [1.0, 0.0]], agent_steps=2)
        result = step_success(matrix)
        assert result.value == 0.5
        assert result.unmatched_gold_steps == (2,)

    def test_unordered_matches_steps_done_in_another_order(self):
        assert step_success(exact_matrix(["A", "B"], ["B", "A"])).value == 1.0

    def test_ordered_matches_only_after_the_previous_match(self):
        result = step_success(exact_matrix(["A", "B"], ["B", "A"]), ordered=True)
        assert result.value == 0.5
        assert result.ordered is True
        assert result.matched == (MatchedPair(1, 2, 1.0),)
        assert result.unmatched_gold_steps == (2,)

    def test_ordered_unmatched_gold_step_does_not_move_the_start(self):
        result = step_success(exact_matrix(["A", "X", "B"], ["A", "B"]), ordered=True)
        assert result.value == pytest.approx(2 / 3)
        assert result.matched == (MatchedPair(1, 1, 1.0), MatchedPair(3, 2, 1.0))

    def test_tau_is_inclusive_and_a_parameter(self):
        matrix = ScoreMatrix([[0.7, 0.69]], agent_steps=2)
        assert step_success(matrix).matched == (MatchedPair(1, 1, 0.7),)
        assert step_success(matrix, tau=0.71).value == 0.0
        assert step_success(matrix, tau=0.5).tau == 0.5

    @pytest.mark.parametrize("tau", [-0.1, 1.01, math.nan, True])
    def test_tau_outside_unit_range_is_refused(self, tau):
        with pytest.raises(ValueError, match="tau"):
            step_success(ScoreMatrix([[1.0]], agent_steps=1), tau=tau)

    def test_plan_steps_are_scored_the_same_way(self):
        plan = ["Go to Reports", "Open Bestsellers", "Read the top product"]
        gold = ["Go to Reports", "Open Bestsellers", "Pick the year", "Read the top product"]
        assert step_success(exact_matrix(gold, plan)).value == 0.75


class TestRecovery:
    def test_table1_worked_example(self):
        result = recovery(exact_matrix(TABLE1_GOLD, TABLE1_AGENT))
        assert (result.deviations, result.recoveries, result.value) == (2, 2, 1.0)
        assert result.events == (
            RecoveryEvent("deviation", agent_step=1, gold_step=1),  # About Us
            RecoveryEvent("recovery", agent_step=2, gold_step=1, cost=1),  # Products
            RecoveryEvent("deviation", agent_step=4, gold_step=3),  # Scroll down
            RecoveryEvent("recovery", agent_step=5, gold_step=3, cost=1),  # Smartphones
        )
        assert result.mean_recovery_cost == 1.0
        assert [(pair.gold_step, pair.agent_step) for pair in result.matched] == [(1, 2), (2, 3), (3, 5)]
        assert result.window == 1

    def test_no_gold_steps_is_null(self):
        assert recovery(ScoreMatrix([], agent_steps=2)).value is None
        assert recovery(ScoreMatrix([], agent_steps=0)).null_reason == "the gold trajectory has no steps"
        assert recovery(ScoreMatrix([[1.0]], agent_steps=1)).null_reason == ""

    def test_no_agent_steps_every_gold_step_is_a_deviation_never_recovered(self):
        result = recovery(exact_matrix(["A", "B", "C"], []))
        assert (result.deviations, result.recoveries, result.value) == (3, 0, 0.0)
        assert [(event.agent_step, event.gold_step) for event in result.events] == [(None, 1), (None, 2), (None, 3)]
        assert result.mean_recovery_cost is None

    def test_following_the_gold_path_has_no_deviation(self):
        result = recovery(exact_matrix(["A", "B"], ["A", "B"]))
        assert (result.deviations, result.value, result.events) == (0, 1.0, ())
        assert result.mean_recovery_cost is None

    def test_agent_steps_run_out_while_not_deviating(self):
        result = recovery(exact_matrix(["A", "B", "C"], ["A"]))
        assert (result.deviations, result.recoveries, result.value) == (2, 0, 0.0)
        assert result.events == (RecoveryEvent("deviation", None, 2), RecoveryEvent("deviation", None, 3))

    def test_agent_steps_run_out_while_deviating_count_that_deviation_only(self):
        result = recovery(exact_matrix(["A", "B", "C"], ["A", "X", "Y"]))
        assert (result.deviations, result.recoveries, result.value) == (1, 0, 0.0)
        assert result.events == (RecoveryEvent("deviation", 2, 2),)

    def test_a_long_deviation_counts_once_and_costs_its_length(self):
        result = recovery(exact_matrix(["A", "B"], ["X", "Y", "Z", "A", "B"]))
        assert (result.deviations, result.recoveries, result.value) == (1, 1, 1.0)
        assert result.mean_recovery_cost == 3.0

    def test_mean_recovery_cost_over_recoveries(self):
        result = recovery(exact_matrix(["A", "B", "C"], ["X", "A", "Y", "Z", "B", "C"]))
        assert (result.deviations, result.recoveries) == (2, 2)
        assert [event.cost for event in result.events if event.kind == "recovery"] == [1, 2]
        assert result.mean_recovery_cost == 1.5

    def test_half_recovered(self):
        result = recovery(exact_matrix(["A", "B", "C"], ["X", "A", "B", "Y"]))
        assert (result.deviations, result.recoveries, result.value) == (2, 1, 0.5)

    def test_steps_after_the_last_gold_step_are_not_deviations(self):
        result = recovery(exact_matrix(["A"], ["A", "X", "Y"]))
        assert (result.deviations, result.value) == (0, 1.0)

    def test_repeating_a_done_gold_step_is_a_deviation(self):
        result = recovery(exact_matrix(["A", "B"], ["A", "A", "B"]))
        assert result.events == (RecoveryEvent("deviation", 2, 2), RecoveryEvent("recovery", 3, 2, cost=1))

    def test_window_greater_than_one_lets_a_step_skip_ahead(self):
        matrix = exact_matrix(["A", "B", "C"], ["A", "C"])
        one = recovery(matrix)
        assert (one.deviations, one.recoveries, one.value) == (1, 0, 0.0)
        two = recovery(matrix, window=2)
        assert (two.deviations, two.recoveries, two.value) == (0, 0, 1.0)
        assert [(pair.gold_step, pair.agent_step) for pair in two.matched] == [(1, 1), (3, 2)]
        assert two.window == 2

    def test_window_greater_than_one_finds_a_recovery_further_on(self):
        matrix = exact_matrix(["A", "B", "C", "D"], ["A", "X", "C", "D"])
        assert recovery(matrix).value == 0.0
        result = recovery(matrix, window=2)
        assert result.events == (RecoveryEvent("deviation", 2, 2), RecoveryEvent("recovery", 3, 3, cost=1))
        assert result.value == 1.0

    def test_window_takes_the_first_matching_gold_step(self):
        result = recovery(exact_matrix(["A", "A"], ["A"]), window=2)
        assert result.matched == (MatchedPair(1, 1, 1.0),)
        assert result.events == (RecoveryEvent("deviation", None, 2),)

    def test_window_wider_than_the_gold(self):
        assert recovery(exact_matrix(["A", "B"], ["B"]), window=5).value == 1.0

    def test_tau_decides_what_matches(self):
        matrix = ScoreMatrix([[0.6, 0.9]], agent_steps=2)
        assert recovery(matrix).events == (RecoveryEvent("deviation", 1, 1), RecoveryEvent("recovery", 2, 1, cost=1))
        assert recovery(matrix, tau=0.5).events == ()

    @pytest.mark.parametrize("window", [0, -1, 1.5, True])
    def test_window_must_be_a_positive_integer(self, window):
        with pytest.raises(ValueError, match="window"):
            recovery(exact_matrix(["A"], ["A"]), window=window)


def test_recovery_matches_a_gold_step_at_tau_itself():
    # Agent step 1 scores exactly tau against gold step 1: on the path, no deviation.
    result = recovery(ScoreMatrix([[0.7]], agent_steps=1), tau=0.7)
    assert (result.value, result.deviations, result.matched) == (1.0, 0, (MatchedPair(1, 1, 0.7),))


def test_recovery_gives_the_whole_result():
    # Gold 1 matched by agent step 1; agent step 2 deviates; agent step 3 recovers at gold 2 (cost 1).
    matrix = ScoreMatrix([[0.9, 0.0, 0.0], [0.0, 0.0, 0.8]], agent_steps=3)
    assert recovery(matrix, tau=0.6, window=2).to_dict() == {
        "value": 1.0, "deviations": 1, "recoveries": 1, "mean_recovery_cost": 1.0,
        "events": [{"kind": "deviation", "agent_step": 2, "gold_step": 2, "cost": None},
                   {"kind": "recovery", "agent_step": 3, "gold_step": 2, "cost": 1}],
        "matched": [{"gold_step": 1, "agent_step": 1, "score": 0.9}, {"gold_step": 2, "agent_step": 3, "score": 0.8}],
        "gold_steps": 2, "agent_steps": 3, "tau": 0.6, "window": 2, "null_reason": ""}


def test_step_success_gives_the_whole_result():
    matrix = ScoreMatrix([[0.9, 0.0], [0.0, 0.5]], agent_steps=2)
    assert step_success(matrix, tau=0.6).to_dict() == {
        "value": 0.5, "gold_steps": 2, "agent_steps": 2, "matched": [{"gold_step": 1, "agent_step": 1, "score": 0.9}],
        "unmatched_gold_steps": [2], "tau": 0.6, "ordered": False, "null_reason": ""}
