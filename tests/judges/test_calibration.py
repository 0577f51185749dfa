import pytest

from judges.calibration import agreement, best_threshold


def test_agreement_counts_and_kappa():
    # judge yes/no at 0.7 vs human: TP 3, FP 1, TN 4, FN 2
    pairs = [(0.9, 1), (0.8, 1), (0.7, 1), (0.95, 0), (0.1, 0), (0.2, 0), (0.3, 0), (0.0, 0), (0.6, 1), (0.5, 1)]
    result = agreement(pairs)
    counts = (result.true_positives, result.false_positives, result.true_negatives, result.false_negatives)
    assert counts == (3, 1, 4, 2)
    assert result.count == 10
    assert result.accuracy == pytest.approx(0.7)
    assert result.precision == pytest.approx(0.75)
    assert result.recall == pytest.approx(0.6)
    # po = 0.7; pe = (4*5 + 6*5) / 100 = 0.5
    assert result.kappa == pytest.approx(0.4)


def test_undefined_ratios_are_none_not_zero():
    result = agreement([(0.1, 0), (0.2, 0)])
    assert result.precision is None and result.recall is None and result.kappa is None
    assert agreement([]).accuracy is None


def test_best_threshold_maximises_accuracy():
    pairs = [(0.9, 1), (0.6, 1), (0.55, 1), (0.5, 0), (0.2, 0)]
    best = best_threshold(pairs)
    assert best.threshold == pytest.approx(0.55)
    assert best.accuracy == 1.0
    assert agreement(pairs).accuracy == pytest.approx(0.6)
