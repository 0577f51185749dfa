"""Automatic sources against human verdicts: the consensus, the unsure count, the human ceiling."""

import pytest

from metrics.definitions.judges_vs_humans import HUMAN_CEILING, MIN_ITEMS, SourceVerdict, judges_vs_humans, majority


def human(run, task, success, grader="", source="experts"):
    return SourceVerdict(run, task, source, source.title(), "human", success, grader=grader)


def judge(run, task, success, source="webjudge"):
    return SourceVerdict(run, task, source, "WebJudge o4-mini", "llm_judge", success)


def test_the_majority_of_yes_no_votes_decides_and_a_tie_is_unsure():
    assert majority([True, True, False]) is True
    assert majority([False, None]) is False
    assert majority([True, False]) is None
    assert majority([None]) is None and majority([]) is None


def test_a_judge_against_the_consensus_per_run_and_over_all_runs():
    verdicts = [
        # run a: two humans agree on t1, t2; split on t3 (a tie: unsure); one human on t4.
        human("a", "t1", True, "ann"), human("a", "t1", True, "bob"),
        human("a", "t2", False, "ann"), human("a", "t2", False, "bob"),
        human("a", "t3", True, "ann"), human("a", "t3", False, "bob"),
        human("a", "t4", False, "ann"),
        judge("a", "t1", True), judge("a", "t2", True), judge("a", "t3", True), judge("a", "t4", False),
        # run b: the judge is unsure on u1, right on u2, wrong on u3; u4 has no human verdict.
        human("b", "u1", True), human("b", "u2", True), human("b", "u3", False),
        judge("b", "u1", None), judge("b", "u2", True), judge("b", "u3", True), judge("b", "u4", False),
    ]
    report = judges_vs_humans(verdicts)
    assert report.runs == ("a", "b") and report.reference_label == "human consensus"
    [row] = report.sources
    a, b, overall = row.runs["a"], row.runs["b"], row.overall
    # run a: t1 TP, t2 FP, t4 TN; t3 unsure.
    assert (a.agreement.true_positive, a.agreement.false_positive, a.agreement.false_negative,
            a.agreement.true_negative, a.unsure) == (1, 1, 0, 1, 1)
    # run b: u2 TP, u3 FP; u1 unsure; u4 not counted at all.
    assert (b.agreement.true_positive, b.agreement.false_positive, b.items, b.unsure) == (1, 1, 2, 1)
    assert (overall.items, overall.unsure) == (5, 2)
    metrics = overall.metrics
    # TP 2, FP 2, FN 0, TN 1.
    assert metrics["accuracy"] == pytest.approx(3 / 5)
    assert metrics["precision"] == pytest.approx(2 / 4)
    assert metrics["recall"] == 1.0 and metrics["npv"] == 1.0
    assert metrics["f1"] == pytest.approx(2 * 0.5 / 1.5)
    assert metrics["tnr"] == pytest.approx(1 / 3)
    # observed 3/5; chance (4/5)(2/5) + (1/5)(3/5) = 11/25; kappa (15/25 - 11/25) / (14/25) = 4/14.
    assert metrics["kappa"] == pytest.approx(4 / 14)
    assert metrics["kappa_low"] <= metrics["kappa"] <= metrics["kappa_high"]
    assert overall.sparse and overall.to_dict()["sparse"] is True

    # The two humans of run a: agreed on t1 (yes) and t2 (no), split on t3.
    ceiling = report.ceiling
    assert ceiling.source == HUMAN_CEILING and list(ceiling.runs) == ["a"]
    assert (ceiling.overall.items, ceiling.overall.unsure) == (3, 0)
    assert ceiling.overall.metrics["accuracy"] == pytest.approx(2 / 3)
    # observed 2/3; each human said yes 2 of 3 and 1 of 3: chance 2/9 + 2/9 = 4/9; kappa (6/9-4/9)/(5/9).
    assert ceiling.overall.metrics["kappa"] == pytest.approx(2 / 5)
    assert all(ceiling.overall.metrics[name] is None for name in ("precision", "recall", "f1", "npv", "tnr"))
    assert [row.source for row, _cell in report.rows("a")] == [HUMAN_CEILING, "webjudge"]
    assert [row.source for row, _cell in report.rows("b")] == ["webjudge"]


def test_one_chosen_human_source_is_the_reference():
    verdicts = [
        human("a", "t1", True, source="experts"), human("a", "t1", False, source="crowd"),
        human("a", "t2", False, source="crowd"),
        judge("a", "t1", True), judge("a", "t2", True),
    ]
    consensus = judges_vs_humans(verdicts).sources[0].overall
    # t1 is a tie between the two sources, t2 a false positive.
    assert (consensus.items, consensus.unsure, consensus.agreement.false_positive) == (1, 1, 1)
    experts = judges_vs_humans(verdicts, reference="experts")
    assert experts.reference_label == "Experts"
    assert [key for key, _label in experts.human_sources] == ["crowd", "experts"]
    cell = experts.sources[0].overall
    assert (cell.items, cell.unsure, cell.agreement.true_positive) == (1, 0, 1)
    with pytest.raises(ValueError, match=r"'webjudge' is not a human source of these runs "
                                         r"\(choose one of: crowd \(Crowd\), experts \(Experts\)\)"):
        judges_vs_humans(verdicts, reference="webjudge")


def test_cells_under_thirty_tasks_are_sparse():
    def report(tasks: int):
        verdicts = [human("a", str(n), n % 2 == 0) for n in range(tasks)]
        return judges_vs_humans(verdicts + [judge("a", str(n), n % 3 == 0) for n in range(tasks)])

    assert MIN_ITEMS == 30
    assert report(29).sources[0].overall.sparse
    assert not report(30).sources[0].overall.sparse


def test_humans_and_unknown_kinds_are_not_judged():
    verdicts = [human("a", "t1", True), SourceVerdict("a", "t1", "x", "X", "other", True)]
    assert judges_vs_humans(verdicts).sources == ()


def test_coverage_names_the_tasks_each_side_spoke_on_per_run_and_over_all():
    verdicts = [human("a", "t1", True), human("a", "t2", None), human("b", "u1", False),
                judge("a", "t2", True), judge("b", "u2", False), judge("b", "u3", None)]
    report = judges_vs_humans(verdicts)
    assert report.coverage() == ({"t1", "t2", "u1"}, {"t2", "u2", "u3"})
    assert report.coverage("a") == ({"t1", "t2"}, {"t2"})
    assert report.coverage("b") == ({"u1"}, {"u2", "u3"})
    assert report.coverage("c") == (set(), set())
