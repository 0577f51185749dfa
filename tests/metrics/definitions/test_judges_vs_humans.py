"""Automatic sources against human verdicts: the consensus, the unsure count, the human ceiling."""

import pytest

from judges.calibration import confusion_kappa_interval

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


def _verdict(source, label, kind, task, success, run="a"):
    return SourceVerdict(run, task, source, label, kind, success)


def test_rows_are_ordered_by_kind_then_label_and_say_their_label_and_kind():
    verdicts = [human("a", "t1", True, source="z_panel"), human("a", "t1", True, "ann", source="aa_panel"),
                human("a", "t2", False, "bob", source="aa_panel"),
                _verdict("j1", "aa", "llm_judge", "t1", True), _verdict("j2", "a_b", "llm_judge", "t1", False),
                _verdict("z_h", "Zed harness", "harness", "t1", True),
                _verdict("a_s", "self", "agent_self_report", "t2", True)]
    report = judges_vs_humans(verdicts)
    # Harness before judges before self-reports, whatever their keys; within a kind by label, "a_b" before "aa"
    # as lower case ("_" < "a"), not upper ("A" < "_"), nor by key.
    assert [(row.source, row.label, row.kind) for row in report.sources] == [
        ("z_h", "Zed harness", "harness"), ("j2", "a_b", "llm_judge"), ("j1", "aa", "llm_judge"),
        ("a_s", "self", "agent_self_report")]
    assert (report.ceiling.label, report.ceiling.kind) == ("Human vs human (ceiling)", "human")
    assert [row for row, _cell in report.rows()] == [report.ceiling, *report.sources]
    assert [cell for _row, cell in report.rows()] == [report.ceiling.overall, *(row.overall for row in report.sources)]
    human_sources = judges_vs_humans([_verdict("k2", "beta", "human", "t1", True),
                                      _verdict("k1", "a_b", "human", "t1", True),
                                      _verdict("k3", "aa", "human", "t1", True)]).human_sources
    assert human_sources == (("k1", "a_b"), ("k3", "aa"), ("k2", "beta"))


def test_the_chosen_reference_is_named_and_without_humans_there_is_none_to_choose():
    verdicts = [human("a", "t1", True, source="experts"), judge("a", "t1", True)]
    assert judges_vs_humans(verdicts, reference="experts").reference == "experts"
    with pytest.raises(ValueError) as raised:
        judges_vs_humans([judge("a", "t1", True)], reference="experts")
    assert str(raised.value) == "'experts' is not a human source of these runs (choose one of: there are none)"


def test_a_cells_counts_and_its_interval_from_the_resamples_and_seed_asked_for():
    # Two humans and a judge on 12 tasks: the judge says yes on 0-5, both humans on 0-3 and 8-9, Bob also
    # on 10-11 (a tie there: unsure).
    verdicts = [verdict for n in range(12) for verdict in (
        human("a", n, n < 4 or 8 <= n < 10, "ann"), human("a", n, n < 4 or 8 <= n, "bob"), judge("a", n, n < 6))]
    report = judges_vs_humans(verdicts, resamples=20, seed=5)
    cell = report.sources[0].runs["a"]
    counts = cell.to_dict()
    # Judge yes and humans yes: 0-3 (TP 4); judge yes, humans no: 4-5 (FP 2); judge no, humans yes: 8-9 (FN 2);
    # both no: 6-7 (TN 2).
    assert (counts["true_positive"], counts["false_positive"], counts["false_negative"], counts["true_negative"],
            counts["unsure"], counts["sparse"]) == (4, 2, 2, 2, 2, True)
    assert set(counts) == {"n", "unsure", "accuracy", "precision", "recall", "f1", "npv", "tnr", "kappa", "kappa_low",
                           "kappa_high", "true_positive", "false_positive", "false_negative", "true_negative", "sparse"}
    asked = confusion_kappa_interval(4, 2, 2, 2, resamples=20, seed=5)  # tp, fp, tn, fn
    assert asked != confusion_kappa_interval(4, 2, 2, 2)  # the defaults draw other resamples
    assert cell.interval == report.sources[0].overall.interval == asked
    # Ann against Bob: both yes on 0-3 and 8-9 (6), both no on 4-7 (4), Bob alone yes on 10-11 (2).
    ceiling = confusion_kappa_interval(6, 0, 4, 2, resamples=20, seed=5)
    assert ceiling != confusion_kappa_interval(6, 0, 4, 2)
    assert report.ceiling.runs["a"].interval == report.ceiling.overall.interval == ceiling
