"""The fit checks at their thresholds, on a GoldFit made by hand: word fits and similarities chosen
(binary fractions, so that sums are exact), scores, ranks, messages and confidences computed by hand.
A score is the word fit plus 10 x the similarity."""

from collections import Counter

import numpy as np

from annotation.quality.fit import GoldFit
from annotation.quality.fit_checks import check_other_task, check_poor_fit, check_worse_version
from annotation.quality.intent_index import IntentIndex
from annotation.quality.records import GoldRecord, TaskRecord

TWO_STEPS = ("Click 'a'", "Click 'b'")


def _fit(intents: dict[int, str], golds: list[GoldRecord], word_fits: list[dict[int, float]],
         similarity: list[dict[int, float]], signals: list[dict] | None = None) -> GoldFit:
    """Tasks T<pk> with the given intents, in the given order; similarities not given are 0."""
    tasks = {pk: TaskRecord(pk, f"T{pk}", intent) for pk, intent in intents.items()}
    columns = {pk: column for column, pk in enumerate(tasks)}
    rows = np.zeros((len(golds), len(tasks)), dtype=np.float64)
    for row, given in enumerate(similarity):
        for pk, value in given.items():
            rows[row, columns[pk]] = value
    return GoldFit(tasks, golds, IntentIndex(list(tasks.values())), signals or [{} for _ in golds],
                   [Counter(fits) for fits in word_fits], rows, columns)


def _numbered(count: int) -> dict[int, str]:
    return {pk: f"intent {pk}" for pk in range(1, count + 1)}


# The rival


def test_among_equal_scores_the_rival_is_the_lowest_task_pk_of_the_six_closest_columns():
    # Every similarity equal and no word fit: the six first columns (tasks 9 to 4, own 9 among them)
    # are the nearest; of tasks 8 to 4, all scoring 0, the lowest pk wins. Task 3, seventh, is not a candidate.
    fit = _fit({pk: f"intent {pk}" for pk in range(9, 0, -1)}, [GoldRecord(1, 9, TWO_STEPS)], [{}], [{}])
    assert fit.rival(0).task_pk == 4


def test_a_task_holding_the_golds_words_is_a_rival_however_far_in_meaning():
    # Tasks 2 to 8 closer in meaning (0.25: score 2.5); task 9, least close, holds words worth 3.
    fit = _fit(_numbered(9), [GoldRecord(1, 1, TWO_STEPS)], [{9: 3.0}],
               [{pk: 0.25 for pk in range(2, 9)}])
    rival = fit.rival(0)
    assert (rival.task_pk, rival.gap, rival.by_words, rival.closer) == (9, 3.0, False, 0.0)


def test_the_own_task_is_never_its_own_rival_even_when_it_fits_best():
    fit = _fit(_numbered(3), [GoldRecord(1, 1, TWO_STEPS)], [{1: 8.0, 2: 1.0}], [{1: 0.5, 3: 0.25}])
    # Own 8 + 5 = 13; task 2 1 + 0 = 1; task 3 0 + 2.5 = 2.5.
    rival = fit.rival(0)
    assert (rival.task_pk, rival.gap, rival.by_words, rival.closer) == (3, -10.5, False, -0.25)


# Clearly better


def test_a_rival_by_words_four_ahead_is_clearly_better_and_just_under_four_is_not():
    # Own 2 + 0, task 2 6 + 0: a gap of exactly 4, by words (6 >= 6 and 6 > 2 x 2).
    at = _fit(_numbered(2), [GoldRecord(1, 1, ("Click 'a'",))], [{1: 2.0, 2: 6.0}], [{}])
    assert at.clearly_better(0).task_pk == 2
    # Own 2.5: a gap of 3.5, still by words (6 > 5).
    under = _fit(_numbered(2), [GoldRecord(1, 1, ("Click 'a'",))], [{1: 2.5, 2: 6.0}], [{}])
    assert under.rival(0).by_words is True and under.clearly_better(0) is None


def test_a_gold_without_steps_or_a_benchmark_of_one_task_has_no_clearly_better_rival():
    no_steps = _fit(_numbered(2), [GoldRecord(1, 1, ())], [{2: 9.0}], [{}])
    assert no_steps.clearly_better(0) is None
    alone = _fit(_numbered(1), [GoldRecord(1, 1, TWO_STEPS)], [{1: 9.0}], [{}])
    assert alone.clearly_better(0) is None


def _by_meaning(steps=TWO_STEPS, rival_similarity=0.5, rival_words=2.0, better=29) -> GoldFit:
    """Own task 1 at similarity 0.25 (score 2.5); rival task 2 with words under six (never by words);
    `better` tasks more at 0.375 (score 3.75, over the own); two tasks at 0, under it."""
    count = 2 + better + 2
    similarity = {1: 0.25, 2: rival_similarity} | {pk: 0.375 for pk in range(3, 3 + better)}
    return _fit(_numbered(count), [GoldRecord(1, 1, steps)], [{2: rival_words}], [similarity])


def test_by_meaning_a_rival_needs_a_quarter_closer_several_steps_and_thirty_intents_fitting_better():
    # Rival 2 + 5 = 7: 4.5 ahead, 0.25 closer; with the 29 others 30 intents fit better than the own task.
    fit = _by_meaning()
    assert fit.rank_of_own(0) == 30
    rival = fit.clearly_better(0)
    assert (rival.task_pk, rival.gap, rival.by_words, rival.closer) == (2, 4.5, False, 0.25)
    # One step only.
    assert _by_meaning(steps=("Click 'a'",)).clearly_better(0) is None
    # 29 intents fitting better.
    assert _by_meaning(better=28).clearly_better(0) is None
    # 0.234375 closer (similarity 0.484375), though 5.34375 ahead with words worth 3.
    closer = _by_meaning(rival_similarity=0.484375, rival_words=3.0)
    assert closer.rival(0).gap == 5.34375 and closer.clearly_better(0) is None


def test_by_words_alone_a_single_step_gold_its_own_intent_ranks_first_for_has_a_clearly_better_rival():
    fit = _fit(_numbered(3), [GoldRecord(1, 1, ("Click 'a'",))], [{1: 1.0, 2: 7.0}], [{1: 0.5}])
    # Own 1 + 5 = 6, task 2 7 + 0 = 7: only one intent fits better. Gap 1: not clearly better.
    assert fit.rank_of_own(0) == 1 and fit.clearly_better(0) is None
    fit = _fit(_numbered(3), [GoldRecord(1, 1, ("Click 'a'",))], [{1: 1.0, 2: 11.0}], [{1: 0.5}])
    assert fit.clearly_better(0).task_pk == 2


# Belongs to another task


def test_another_task_fitting_clearly_better_is_named_with_both_evidences_and_a_confidence():
    intents = {1: "Find the kettle", 2: "Buy a teapot", 3: "Open the reports"}
    signals = {"kettle": (1.0, "kettle"), "teapot": (0.5, "teapots")}
    golds = [GoldRecord(5, 1, ("Click 'a'",)), GoldRecord(6, 1, ("Click 'a'",))]
    # Own 2 + 10 x 0.25 = 4.5, task 2 12 + 10 x 0.125 = 13.25: 8.75 ahead, by words. Gold 5 is skipped.
    fit = _fit(intents, golds, [{1: 2.0, 2: 12.0}] * 2, [{1: 0.25, 2: 0.125}] * 2, [signals] * 2)

    [finding] = check_other_task(fit, skip={5})

    assert (finding.gold_pk, finding.kind, finding.key, finding.related_task_pk) == (6, "other_task", "task:2", 2)
    assert finding.message == ("fits task T2 better than its own task T1: word fit 12.0 (‘teapots’), similarity 0.12 "
                               "against word fit 2.0 (‘kettle’), similarity 0.25")
    # 4.75 past the margin of 4: 1 - 0.5 x e^-(4.75 / 4) = 0.84752.
    assert finding.confidence == 0.848


# Fits its own task poorly


def _poor(golds: list[GoldRecord], own_words=None, own_similarity=0.1, better=200, count=250) -> GoldFit:
    """Own task 1; task 2 the closest (similarity 0.5: 5); `better` - 1 more tasks at 0.375 (3.75), over
    the own 0.5 + 1 = 1.5; the rest at 0."""
    similarity = {1: own_similarity, 2: 0.5} | {pk: 0.375 for pk in range(3, 2 + better)}
    words = {} if own_words is None else {1: own_words}
    return _fit(_numbered(count), golds, [words] * len(golds), [similarity] * len(golds))


def test_a_gold_two_hundred_intents_fit_better_and_sharing_nothing_with_its_own_fits_it_poorly():
    golds = [GoldRecord(1, 1, TWO_STEPS, cannot_complete=True), GoldRecord(2, 1, ()), GoldRecord(3, 1, TWO_STEPS),
             GoldRecord(4, 1, TWO_STEPS)]

    [finding] = check_poor_fit(_poor(golds, own_words=0.5), skip={3})

    assert (finding.gold_pk, finding.kind, finding.key, finding.related_task_pk) == (4, "poor_fit", "", 2)
    assert finding.message == ("fits its own task T1 poorly (word fit 0.5 (no word of it), similarity 0.10): 200 of 250 "
                               "intents fit its steps better, the closest task T2 (word fit 0.0 (no word of it), "
                               "similarity 0.50)")
    assert finding.confidence == 0.5  # exactly at 200


def test_poor_fit_needs_two_hundred_intents_fitting_better_a_word_fit_under_one_and_a_similarity_under_a_fifth():
    gold = [GoldRecord(1, 1, TWO_STEPS)]
    assert len(check_poor_fit(_poor(gold), skip=set())) == 1  # no word fit at all
    assert check_poor_fit(_poor(gold, better=199), skip=set()) == []
    assert check_poor_fit(_poor(gold, own_words=1.0), skip=set()) == []  # 2 under 3.75: still 200 better
    assert check_poor_fit(_poor(gold, own_similarity=0.2), skip=set()) == []  # 2 under 3.75 too


def test_golds_passed_over_for_their_word_fit_similarity_or_rank_leave_the_next_gold_checked():
    golds = [GoldRecord(1, 1, TWO_STEPS), GoldRecord(2, 1, TWO_STEPS), GoldRecord(3, 1, TWO_STEPS),
             GoldRecord(4, 1, TWO_STEPS)]
    spread = {2: 0.5} | {pk: 0.375 for pk in range(3, 202)}  # 200 tasks over the own 1
    # Gold 1 has a word fit of 1 with its own intent, gold 2 a similarity of 0.25 (2.5, still under 200
    # others), gold 3 only task 2 fitting it better; gold 4 is the one fitting poorly.
    fit = _fit(_numbered(250), golds, [{1: 1.0}, {}, {}, {}],
               [{1: 0.1} | spread, {1: 0.25} | spread, {1: 0.1, 2: 0.5}, {1: 0.1} | spread])

    assert [finding.gold_pk for finding in check_poor_fit(fit, skip=set())] == [4]


def test_a_poor_fits_confidence_grows_with_the_share_of_intents_past_two_hundred():
    [finding] = check_poor_fit(_poor([GoldRecord(1, 1, TWO_STEPS)], better=225), skip=set())
    # 25 of 250 past: 0.1 in units of 0.25 = 0.4; 1 - 0.5 x e^-0.4 = 0.66484.
    assert finding.confidence == 0.665
    assert "225 of 250 intents" in finding.message


# The worse version

INTENTS = {1: "Directions from Harvard to MIT", 2: "Walk to Quincy Market", 3: "Open the reports"}
QUINCY = ("Type 'Quincy Market' into 'From'", "Click 'Go'")
QUINCY_WORDS = {"quincy": (1.0, "quincy"), "market": (1.0, "market")}
HARVARD_WORDS = {"harvard": (1.0, "harvard"), "market": (1.0, "market")}


def test_of_two_versions_sharing_a_third_of_their_words_the_one_fitting_six_worse_is_named_with_the_other():
    golds = [GoldRecord(10, 1, QUINCY), GoldRecord(11, 1, TWO_STEPS)]
    fit = _fit(INTENTS, golds, [{}, {1: 6.0}], [{}, {}], [QUINCY_WORDS, HARVARD_WORDS])

    [finding] = check_worse_version(fit, skip=set())

    assert (finding.gold_pk, finding.kind, finding.key, finding.related_gold_pk, finding.related_task_pk) == (
        10, "worse_version", "gold:11", 11, None)
    # Market of quincy, market, harvard: a third. The other gold is 6 ahead: 1 - 0.5 x e^-(2 / 4) = 0.69673.
    assert finding.message == ("shares 33% of its words with gold #11 of the same task and fits the intent far worse: "
                               "word fit 0.0 (no word of it), similarity 0.00 against word fit 6.0 (‘harvard’), "
                               "similarity 0.00; it types ‘Quincy Market’, which the intent never names")
    assert finding.confidence == 0.697


def test_a_worse_version_fitting_another_task_clearly_better_names_that_task_too():
    golds = [GoldRecord(10, 1, QUINCY), GoldRecord(11, 1, TWO_STEPS)]
    # Gold 10: own 0, task 2 by words 6 (6 ahead); gold 11 4 + 10 x 0.5 = 9 ahead of it: 5 past the margin.
    fit = _fit(INTENTS, golds, [{2: 6.0}, {1: 4.0}], [{}, {1: 0.5}], [QUINCY_WORDS, HARVARD_WORDS])

    [finding] = check_worse_version(fit, skip=set())

    assert (finding.gold_pk, finding.related_gold_pk, finding.related_task_pk) == (10, 11, 2)
    assert finding.message.endswith("; it types ‘Quincy Market’, which the intent never names; it fits task T2 "
                                    "better (word fit 6.0 (‘market’, ‘quincy’), similarity 0.00)")
    assert finding.confidence == 0.857  # 1 - 0.5 x e^-(5 / 4) = 0.85675


def test_a_worse_version_needs_four_worse_and_less_than_half_its_words_shared():
    golds = [GoldRecord(10, 1, TWO_STEPS), GoldRecord(11, 1, TWO_STEPS)]
    first, second = {"a": (1.0, "a"), "b": (1.0, "b")}, {"a": (1.0, "a"), "c": (1.0, "c")}
    # Exactly 4 worse: flagged, at confidence 0.5; the message types nothing the intent lacks.
    [finding] = check_worse_version(_fit(INTENTS, golds, [{}, {1: 4.0}], [{}, {}], [first, second]), skip=set())
    assert (finding.gold_pk, finding.confidence) == (10, 0.5)
    assert finding.message.endswith("similarity 0.00 against word fit 4.0 (no word of it), similarity 0.00")
    # 3.5 worse: not.
    assert check_worse_version(_fit(INTENTS, golds, [{}, {1: 3.5}], [{}, {}], [first, second]), skip=set()) == []
    # Half the words shared (a and b of a, b, c, d), though 9 worse: not.
    half = {"a": (1.0, "a"), "b": (1.0, "b"), "d": (1.0, "d")}
    assert check_worse_version(_fit(INTENTS, golds, [{}, {1: 9.0}], [{}, {}], [first | {"c": (1.0, "c")}, half]),
                               skip=set()) == []


def test_the_better_version_is_the_best_of_the_tasks_other_golds_with_steps_that_can_be_completed():
    golds = [GoldRecord(10, 1, TWO_STEPS), GoldRecord(11, 1, TWO_STEPS, cannot_complete=True),
             GoldRecord(12, 1, ()), GoldRecord(14, 1, TWO_STEPS), GoldRecord(13, 1, TWO_STEPS),
             GoldRecord(15, 2, TWO_STEPS), GoldRecord(16, 3, TWO_STEPS), GoldRecord(17, 3, ())]
    # Task 1: gold 10 at 0, 14 at 8 (the best, 8 ahead of 10, 3 of 13), 13 at 5 (5 ahead of 10, and
    # the last of its golds); golds 11 and 12, fitting best, cannot count. Task 2 has one gold; task 3
    # one with steps.
    fits = [{}, {1: 20.0}, {1: 20.0}, {1: 8.0}, {1: 5.0}, {}, {}, {3: 20.0}]
    signals = [{"a": (1.0, "a")}, {}, {}, {"c": (1.0, "c")}, {"b": (1.0, "b")}, {}, {}, {"d": (1.0, "d")}]
    fit = _fit(INTENTS, golds, fits, [{}] * len(golds), signals)

    found = {finding.gold_pk: (finding.related_gold_pk, finding.confidence)
             for finding in check_worse_version(fit, skip=set())}

    # 8 - 4 = 4 past the margin: 1 - 0.5 x e^-1 = 0.81606; 13 is 3 behind 14: not flagged.
    assert found == {10: (14, 0.816)}
    # Gold 10 skipped: gold 13, after it, is still checked (3 behind: not flagged), and nothing is found.
    assert check_worse_version(fit, skip={10}) == []
    moved = _fit(INTENTS, golds, [{}, {1: 20.0}, {1: 20.0}, {1: 8.0}, {}, {}, {}, {}], [{}] * len(golds), signals)
    assert [finding.gold_pk for finding in check_worse_version(moved, skip={10})] == [13]
