import pytest

from judges.calibration import agreement, best_threshold, confusion_kappa_interval, kappa_interval, trust


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


# Three confirmed decisions: judge and human both say yes (TP), both no (TN), judge no / human yes (FN).
# A bootstrap resample draws three of them with replacement: 27 equally likely draws. By hand, with
# (x, y, z) = how many TP, TN, FN were drawn, po = (x + y) / 3 and pe = (x(x + z) + (y + z)y) / 9:
#   (3,0,0), (0,3,0): one class on both sides, kappa undefined (pe = 1): left out, 2 of 27 draws
#   (0,0,3): po 0, pe 0 -> 0                                   1 draw
#   (2,1,0), (1,2,0): po 1, pe 5/9 -> 1                        3 + 3 draws
#   (2,0,1), (0,2,1): po 2/3, pe 6/9 -> 0                      3 + 3 draws
#   (1,0,2), (0,1,2): po 1/3, pe 3/9 -> 0                      3 + 3 draws
#   (1,1,1): po 2/3, pe 4/9 -> (2/9) / (5/9) = 0.4              6 draws
# So among the 25 draws with a kappa: 0 has probability 13/25 = 0.52, 0.4 has 0.24, 1 has 0.24;
# cumulative 0.52, 0.76, 1. The 2.5 % and 97.5 % points are 0 and 1; the 30 % and 70 % points
# (a 40 % interval) are 0 and 0.4. With 2,000 resamples the empirical shares are within about
# 0.011 of these, far from every boundary, so any seed gives exactly these values.
HAND = [(0.9, 1.0), (0.1, 0.0), (0.1, 1.0)]


@pytest.mark.parametrize("seed", [0, 1, 12345])
def test_kappa_interval_matches_the_hand_computed_bootstrap(seed):
    assert agreement(HAND).kappa == pytest.approx(0.4)
    assert kappa_interval(HAND, seed=seed) == pytest.approx((0.0, 1.0))
    assert kappa_interval(HAND, seed=seed, level=0.4) == pytest.approx((0.0, 0.4))


def test_kappa_interval_of_two_decisions_by_hand():
    # TP + TN: every draw with both classes agrees fully (kappa 1); single-class draws are left out.
    assert kappa_interval([(0.9, 1.0), (0.1, 0.0)]) == (1.0, 1.0)
    # TP + FN: the human always says yes; every defined draw has po = pe, kappa 0.
    assert kappa_interval([(0.9, 1.0), (0.1, 1.0)]) == (0.0, 0.0)
    assert kappa_interval([(0.9, 1.0), (0.8, 1.0)]) is None  # no draw has a kappa
    assert kappa_interval([]) is None


def test_kappa_interval_is_seeded_and_narrows_with_more_confirmations():
    pairs = [(0.9, 1.0)] * 18 + [(0.1, 0.0)] * 18 + [(0.9, 0.0), (0.1, 1.0)] * 2
    interval = kappa_interval(pairs)
    assert interval == kappa_interval(pairs) and interval != kappa_interval(pairs, seed=1)
    assert interval[0] < agreement(pairs).kappa < interval[1]
    wider = interval[1] - interval[0]
    assert kappa_interval(pairs * 10)[1] - kappa_interval(pairs * 10)[0] < wider / 2


def test_trust_needs_50_confirmations_and_an_interval_above_0_8():
    few = trust([(0.9, 1.0)] * 20 + [(0.1, 0.0)] * 20)
    assert few.interval == (1.0, 1.0)
    assert few.concerns == ["40 human confirmations (fewer than 50)"] and not few.trusted
    enough = trust([(0.9, 1.0)] * 30 + [(0.1, 0.0)] * 30)
    assert enough.trusted and enough.concerns == []
    noisy = trust(([(0.9, 1.0)] * 8 + [(0.1, 0.0)] * 8 + [(0.9, 0.0), (0.1, 1.0)]) * 4)
    assert noisy.confirmations == 72 and noisy.interval[0] < 0.8
    assert noisy.concerns == [f"Cohen's kappa interval [{noisy.interval[0]:.3f}, {noisy.interval[1]:.3f}] "
                              "reaches below 0.8"]


def test_kappa_interval_of_a_confusion_matrix_computed_by_hand():
    """One yes-yes, one yes-no, one no-no pair. Drawing three pairs gives kappa 0 with probability 13/27,
    0.4 with 6/27, 1 with 6/27 (all yes or all no, 2/27, leave kappa undefined): 0 is the 2.5th
    percentile of the defined draws and 1 the 97.5th."""
    assert confusion_kappa_interval(1, 1, 1, 0) == (0.0, 1.0)
    assert confusion_kappa_interval(2, 0, 3, 0) == (1.0, 1.0)  # full agreement in every draw that can say
    assert confusion_kappa_interval(0, 0, 0, 0) is None
    assert confusion_kappa_interval(4, 0, 0, 0) is None  # one side says one thing only: never defined
    pairs = [(0.9, 1.0), (0.8, 0.0), (0.1, 0.0), (0.2, 1.0), (0.95, 1.0)]
    result = agreement(pairs)
    assert kappa_interval(pairs) == confusion_kappa_interval(
        result.true_positives, result.false_positives, result.true_negatives, result.false_negatives)
