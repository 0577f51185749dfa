"""The verdict definitions and the agreement statistics, checked against published and hand-computed values."""

import pytest

from trajectories import verdict_agreement as v


def test_krippendorff_ordinal_matches_the_published_example():
    # Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", section C: four observers,
    # twelve units, missing values; ordinal alpha = 0.815.
    observers = [
        [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
        [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
        [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
        [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],
    ]
    units = [[value for value in unit if value is not None] for unit in zip(*observers)]
    assert v.krippendorff_alpha_ordinal(units) == pytest.approx(0.815, abs=5e-4)


def test_krippendorff_ordinal_by_hand():
    # Units (1, 1), (0, 0.5), (0, 0). Coincidences: o(1,1)=2, o(0,0)=2, o(0,.5)=o(.5,0)=1;
    # n_0=3, n_.5=1, n_1=2, n=6. Ordinal distances: d(0,.5)=(3+1-2)^2=4, d(.5,1)=(1+2-1.5)^2=2.25,
    # d(0,1)=(3+1+2-2.5)^2=12.25. Observed sum 2*4=8; expected sum 2*(3*1*4 + 1*2*2.25 + 3*2*12.25)=180.
    # alpha = 1 - 5 * 8 / 180.
    assert v.krippendorff_alpha_ordinal([[1, 1], [0, 0.5], [0, 0]]) == pytest.approx(1 - 40 / 180)


def test_krippendorff_is_undefined_without_variation_or_pairs():
    assert v.krippendorff_alpha_ordinal([[1, 1], [1, 1]]) is None
    assert v.krippendorff_alpha_ordinal([[1], [0]]) is None
    assert v.krippendorff_alpha_ordinal([[1, 1], [0, 0]]) == 1.0


def test_pairwise_agreement_counts_only_items_both_graded():
    pairs = v.pairwise_agreement({"bob": {1: 1.0, 2: 0.5, 3: 0.0}, "alice": {1: 1.0, 2: 1.0}, "colin": {}})
    assert [(p.first, p.second, p.items, p.agreed) for p in pairs] == [
        ("alice", "bob", 2, 1), ("alice", "colin", 0, 0), ("bob", "colin", 0, 0)]
    assert pairs[0].percent == 50.0 and pairs[1].percent is None


def test_binary_agreement_against_the_consensus():
    # auto, human: TP TP FP FN TN TN, and one pair left out because the human consensus is unknown.
    result = v.binary_agreement([(True, True), (True, True), (True, False), (False, True), (False, False),
                                 (False, False), (True, None)])
    assert (result.true_positive, result.false_positive, result.false_negative, result.true_negative) == (2, 1, 1, 2)
    assert result.accuracy == pytest.approx(4 / 6)
    assert result.precision == pytest.approx(2 / 3) and result.recall == pytest.approx(2 / 3)
    # po = 4/6, pe = 0.5*0.5 + 0.5*0.5 = 0.5 -> kappa = (2/3 - 1/2) / (1/2) = 1/3
    assert result.kappa == pytest.approx(1 / 3)
    assert result.f1 == pytest.approx(2 / 3)
    # NPV: TN / (TN + FN) = 2 / 3; TNR: TN / (TN + FP) = 2 / 3.
    assert result.npv == pytest.approx(2 / 3) and result.tnr == pytest.approx(2 / 3)
    lopsided = v.binary_agreement([(True, True)] * 3 + [(False, True)] + [(True, False)] * 2 + [(False, False)])
    # TP 3, FN 1, FP 2, TN 1: precision 3/5, recall 3/4, F1 2/3; NPV 1/2; TNR 1/3.
    assert lopsided.f1 == pytest.approx(2 / 3)
    assert lopsided.npv == pytest.approx(1 / 2) and lopsided.tnr == pytest.approx(1 / 3)
    assert v.binary_agreement([(True, True)]).kappa is None
    assert v.binary_agreement([(True, True)]).npv is None and v.binary_agreement([(True, True)]).tnr is None
    assert v.binary_agreement([]).accuracy is None


def test_consensus_is_more_correct_than_not():
    assert v.consensus([1, 0.5, 1]) == pytest.approx(5 / 6)
    assert v.consensus_success(v.consensus([1, 0])) is False
    assert v.consensus_success(v.consensus([1, 0.5])) is True
    assert v.consensus_success(None) is None


def test_the_three_sources_can_disagree():
    verdicts = v.Verdicts(harness=False, check=True, human=1.0, graders=2)
    assert verdicts.known() == {"harness": False, "check": True, "human": True}
    assert verdicts.disagreements() == [("harness", "check"), ("harness", "human")]
    assert verdicts.combined is False
    assert v.Verdicts(check=True).combined is True
    with pytest.raises(ValueError, match="unknown 'judge'"):
        verdicts.success("judge")


@pytest.mark.parametrize("raw, value", [("1", 1.0), ("0.50", 0.5), (0, 0.0), ("1.00", 1.0)])
def test_grade_values(raw, value):
    assert v.grade_value(raw) == value


@pytest.mark.parametrize("raw", ["0.7", "yes", "", "2"])
def test_grade_values_refused(raw):
    with pytest.raises(ValueError, match="grade"):
        v.grade_value(raw)


def test_uniform_verdicts_only_over_many_tasks():
    assert v.uniform_verdicts([False] * 100) is False
    assert v.uniform_verdicts([True] * 99) is None
    assert v.uniform_verdicts([False] * 150 + [True]) is None
