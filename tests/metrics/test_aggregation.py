import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from metrics import aggregation
from metrics.aggregation import (
    OUTCOME_CATEGORIES,
    Summary,
    compare_paired,
    group_rows,
    length_comparison,
    outcome_table,
    paradigm_group,
    site_group,
    summarize,
    summarize_groups,
    summarize_metrics,
    within_successful,
)

ROWS = [
    {"sites": ["shopping"], "paradigm": "step_by_step", "step_success": 0.5, "success": True,
     "outcome_status": "answered", "outcome_reason": "", "agent_steps": 4, "gold_steps": 2},
    {"sites": ["shopping"], "paradigm": "step_by_step", "step_success": None, "success": False,
     "outcome_status": "early_stop", "outcome_reason": "invalid_actions", "agent_steps": 9, "gold_steps": 6},
    {"sites": ["shopping", "reddit"], "paradigm": "full_plan", "step_success": 1.0, "success": None,
     "outcome_status": "na", "outcome_reason": "", "agent_steps": 3, "gold_steps": None},
    {"sites": ["reddit"], "paradigm": "full_plan", "step_success": 0.0, "success": True,
     "outcome_status": "answered", "outcome_reason": None, "agent_steps": 2, "gold_steps": 3},
]


class TestSummaries:
    def test_nulls_are_left_out_and_counted(self):
        assert summarize([0.5, None, 1.0, 0.0]) == Summary(mean=0.5, std=0.5, count=3, null_count=1)

    def test_booleans_average_to_a_rate(self):
        result = summarize([True, False, True, None])
        assert result.mean == pytest.approx(2 / 3)
        assert result.std == pytest.approx(math.sqrt(1 / 3))
        assert (result.count, result.null_count) == (3, 1)

    def test_nothing_to_average(self):
        assert summarize([None, None]) == Summary(None, None, 0, 2)
        assert summarize([]) == Summary(None, None, 0, 0)

    def test_one_value_has_no_standard_deviation(self):
        assert summarize([0.25]) == Summary(0.25, None, 1, 0)

    def test_per_metric(self):
        result = summarize_metrics(ROWS, ["step_success", "success"])
        assert result["step_success"] == Summary(0.5, 0.5, 3, 1)
        assert result["success"].mean == pytest.approx(2 / 3)
        assert result["success"].null_count == 1

    def test_missing_metric_counts_as_null(self):
        assert summarize_metrics([{"recovery": 1.0}, {}], ["recovery"])["recovery"] == Summary(1.0, None, 1, 1)

    def test_per_site_keeps_multi_site_tasks_apart(self):
        result = summarize_groups(ROWS, site_group, ["step_success"])
        assert list(result) == ["reddit", "reddit+shopping", "shopping"]
        assert result["shopping"]["step_success"] == Summary(0.5, None, 1, 1)
        assert result["reddit+shopping"]["step_success"].mean == 1.0

    def test_rows_by_group(self):
        groups = group_rows(ROWS, paradigm_group)
        assert list(groups) == ["full_plan", "step_by_step"]
        assert groups["full_plan"] == [ROWS[2], ROWS[3]]

    def test_per_paradigm(self):
        result = summarize_groups(ROWS, paradigm_group, ["step_success"])
        assert result["full_plan"]["step_success"] == Summary(0.5, math.sqrt(0.5), 2, 0)
        assert paradigm_group({}) == "unknown"
        assert site_group({"sites": []}) == "unknown"

    def test_within_successful_tasks_only(self):
        rows = within_successful(ROWS)
        assert rows == [ROWS[0], ROWS[3]]
        assert summarize_metrics(rows, ["step_success"])["step_success"] == Summary(0.25, math.sqrt(0.125), 2, 0)


class TestOutcomeTable:
    def test_counts_shares_and_successes(self):
        table = outcome_table(ROWS)
        assert table.total == 4
        by_category = {(row.status, row.reason): row for row in table.rows}
        assert [(row.status, row.reason) for row in table.rows] == list(OUTCOME_CATEGORIES)
        answered = by_category["answered", ""]
        assert (answered.count, answered.share, answered.successes) == (2, 0.5, 2)
        invalid = by_category["early_stop", "invalid_actions"]
        assert (invalid.count, invalid.share, invalid.successes) == (1, 0.25, 0)
        assert by_category["na", ""].successes == 0
        assert by_category["crashed", ""].count == 0

    def test_counts_the_trajectories_some_of_whose_questions_failed(self):
        rows = [{**ROWS[0], "failed_questions": 2}, {**ROWS[1], "failed_questions": 0}, ROWS[2]]
        assert (outcome_table(rows).total, outcome_table(rows).partly_scored) == (3, 1)
        assert outcome_table(rows).to_dict()["partly_scored"] == 1

    def test_every_category_is_listed(self):
        assert [(row.status, row.reason) for row in outcome_table([]).rows] == [
            ("answered", ""),
            ("na", ""),
            ("early_stop", "repeated_action"),
            ("early_stop", "invalid_actions"),
            ("early_stop", "max_steps"),
            ("early_stop", "other"),
            ("no_stop", ""),
            ("crashed", ""),
        ]
        assert {row.share for row in outcome_table([]).rows} == {None}

    def test_unknown_category_is_refused(self):
        with pytest.raises(ValueError, match="outcome_status 'answered' with outcome_reason 'max_steps'"):
            outcome_table([{"outcome_status": "answered", "outcome_reason": "max_steps"}])


class TestLengths:
    def test_agent_against_gold_where_both_are_known(self):
        result = length_comparison(ROWS)
        assert (result.pairs, result.without_gold) == (3, 1)
        assert result.agent_steps.mean == 5.0
        assert result.gold_steps.mean == pytest.approx(11 / 3)
        assert result.mean_difference == pytest.approx(4 / 3)

    def test_without_any_gold(self):
        result = length_comparison([{"agent_steps": 3, "gold_steps": None}])
        assert (result.pairs, result.mean_difference, result.agent_steps.mean) == (0, None, None)


class TestPairedComparison:
    BASELINE = {1: 0.2, 2: 0.5, 3: 0.4, 4: None, 5: 0.1}
    CANDIDATE = {1: 0.6, 2: 0.5, 3: 0.9, 4: 0.3, 6: 0.7}

    def test_hand_computed(self):
        result = compare_paired(self.BASELINE, self.CANDIDATE)
        # Pairs: tasks 1, 2, 3; differences 0.4, 0.0, 0.5.
        assert (result.pairs, result.null_pairs, result.only_in_baseline, result.only_in_candidate) == (3, 1, 1, 1)
        assert result.baseline_mean == pytest.approx(1.1 / 3)
        assert result.candidate_mean == pytest.approx(2.0 / 3)
        assert result.mean_difference == pytest.approx(0.3)
        # t = 0.3 / (sqrt(0.07) / sqrt(3)); with 2 degrees of freedom p = 1 - t / sqrt(2 + t^2).
        t = 0.3 / (math.sqrt(0.07) / math.sqrt(3))
        assert result.t_test_p == pytest.approx(1 - t / math.sqrt(2 + t * t))
        # Wilcoxon drops the zero difference: ranks 1 and 2 both positive, exact p = 2 * 1/4.
        assert result.wilcoxon_p == pytest.approx(0.5)
        # Resampled means of three differences reach 0 and 0.5 with probability 1/27 each (> 2.5%).
        assert (result.ci_low, result.ci_high) == pytest.approx((0.0, 0.5))
        assert (result.confidence, result.seed, result.resamples) == (0.95, 0, 10_000)

    def test_booleans_are_rates(self):
        result = compare_paired({1: False, 2: False, 3: True}, {1: True, 2: False, 3: True})
        assert result.mean_difference == pytest.approx(1 / 3)

    def test_all_differences_zero(self):
        result = compare_paired({1: 0.5, 2: 1.0}, {1: 0.5, 2: 1.0})
        assert result.mean_difference == 0.0
        assert (result.ci_low, result.ci_high) == (0.0, 0.0)
        assert (result.wilcoxon_p, result.t_test_p) == (None, None)

    def test_the_same_difference_everywhere_has_no_t_test(self):
        # 0.7 - 0.2 is 0.49999999999999994 in floating point: still the same difference.
        result = compare_paired({1: 0.0, 2: 0.2, 3: 0.5}, {1: 0.5, 2: 0.7, 3: 1.0})
        assert result.mean_difference == pytest.approx(0.5)
        assert result.t_test_p is None
        assert result.wilcoxon_p == pytest.approx(0.25)

    def test_one_pair(self):
        result = compare_paired({1: 0.2}, {1: 0.6})
        assert result.mean_difference == pytest.approx(0.4)
        assert (result.ci_low, result.ci_high, result.wilcoxon_p, result.t_test_p) == (None, None, None, None)

    def test_no_pairs(self):
        result = compare_paired({1: 0.2, 2: None}, {2: 0.5, 3: 0.1})
        assert (result.pairs, result.null_pairs) == (0, 1)
        assert (result.baseline_mean, result.candidate_mean, result.mean_difference) == (None, None, None)

    def test_seed_fixes_the_interval(self):
        baseline = {task: (task % 7) / 7 for task in range(40)}
        candidate = {task: (task % 5) / 5 for task in range(40)}
        first = compare_paired(baseline, candidate, seed=3, resamples=500)
        assert compare_paired(baseline, candidate, seed=3, resamples=500) == first
        assert first.ci_low < first.mean_difference < first.ci_high

    def test_to_dict(self):
        assert compare_paired({1: 0.0}, {1: 1.0}).to_dict()["mean_difference"] == 1.0

    @pytest.mark.parametrize("kwargs", [{"confidence": 1.0}, {"confidence": 0}, {"resamples": 0}])
    def test_bad_parameters_are_refused(self, kwargs):
        with pytest.raises(ValueError):
            compare_paired({1: 0.0}, {1: 1.0}, **kwargs)


values = st.one_of(st.none(), st.floats(min_value=0, max_value=1), st.booleans())


@given(st.lists(values, max_size=30))
def test_summary_counts_every_value_once(items):
    result = summarize(items)
    present = [float(item) for item in items if item is not None]
    assert result.count + result.null_count == len(items)
    if present:
        assert min(present) - 1e-12 <= result.mean <= max(present) + 1e-12
        assert result.std is None or result.std >= 0
    else:
        assert result.mean is None


@given(st.dictionaries(st.integers(0, 30), st.tuples(values, values), max_size=25), st.integers(0, 3))
def test_paired_comparison_is_antisymmetric(paired, seed):
    baseline = {task: pair[0] for task, pair in paired.items()}
    candidate = {task: pair[1] for task, pair in paired.items()}
    forward = compare_paired(baseline, candidate, seed=seed, resamples=200)
    backward = compare_paired(candidate, baseline, seed=seed, resamples=200)
    for p in (forward.wilcoxon_p, forward.t_test_p):
        assert p is None or 0 <= p <= 1
    if forward.pairs >= 2:
        assert forward.ci_low <= forward.ci_high
        assert backward.ci_low == pytest.approx(-forward.ci_high, abs=1e-9)
        assert backward.wilcoxon_p == pytest.approx(forward.wilcoxon_p)
    if forward.pairs:
        assert backward.mean_difference == pytest.approx(-forward.mean_difference, abs=1e-12)
    else:
        assert forward.mean_difference is None


paired_differences = st.lists(
    st.one_of(st.sampled_from([-1.0, -0.5, -0.25, 0.25, 0.5, 1.0]), st.floats(-1, 1).filter(lambda x: abs(x) > 1e-9)),
    min_size=1, max_size=80,
)


@given(paired_differences)
def test_p_values_are_scipys(differences):
    """The direct Wilcoxon and paired t computations give what scipy.stats gives for every size,
    with and without ties (exact, permutation and normal approximation branches)."""
    from scipy import stats

    d = np.array(differences)
    assert aggregation._wilcoxon_p(d) == pytest.approx(float(stats.wilcoxon(d).pvalue), rel=1e-9, abs=1e-12)
    if len(d) >= 2 and np.ptp(d) > 1e-12:
        expected = float(stats.ttest_rel(d, np.zeros_like(d)).pvalue)
        assert aggregation._paired_t_p(d) == pytest.approx(expected, rel=1e-9, abs=1e-12)


def test_bootstrap_draws_are_shared_and_reproducible():
    d = np.linspace(-1, 1, 200)
    first = aggregation._bootstrap_ci(d, 0.95, 1000, 0)
    assert aggregation._bootstrap_ci(d, 0.95, 1000, 0) == first
    uncached = np.concatenate([d[i].mean(axis=1) for i in aggregation._resample_indexes(200, 1000, 0)])
    tail = (1 - 0.95) / 2 * 100
    assert first == tuple(float(x) for x in np.percentile(uncached, [tail, 100 - tail]))
