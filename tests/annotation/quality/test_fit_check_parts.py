"""The fit checks' parts that need no sentence model: a template sibling's values, the confidence of a
flag, the overlap of two golds' words. Expected values by hand."""

from annotation.quality.fit_checks import _agreement, _confidence, _unnamed_values, check_sibling_values
from annotation.quality.records import GoldRecord, TaskRecord

TASKS = {
    1: TaskRecord(1, "81", "Walk from Univ of Pittsburgh to the Zoo", 7,
                  (("place_A", "Univ of Pittsburgh"), ("place_B", "Zoo"))),
    2: TaskRecord(2, "80", "Walk from Carnegie Mellon University to Schenley Park", 7,
                  (("place_A", "Carnegie Mellon University"), ("place_B", "Schenley Park"))),
    3: TaskRecord(3, "99", "Walk from Univ of Pittsburgh to Schenley Park", None,
                  (("place_A", "Univ of Pittsburgh"),)),
}
COPIED = ("Click 'Directions'", "Type into 'From': Carnegie Mellon", "University", "Type 'Schenley Park' into 'To'")


def test_a_gold_typing_a_siblings_values_and_missing_its_own_names_the_sibling_and_both():
    golds = [GoldRecord(10, 3, COPIED),  # a task of no template: not checked
             GoldRecord(11, 1, ()),  # no steps: not checked
             GoldRecord(12, 1, COPIED)]

    [finding] = check_sibling_values(TASKS, golds)

    # "Carnegie Mellon" and "University" are typed in two steps: the steps are read as one text. Both
    # own values are missing, "Zoo" of three letters too. Two values typed: 1 - 0.5 * e^-2 = 0.932.
    assert (finding.gold_pk, finding.kind, finding.key, finding.related_task_pk, finding.confidence) == (
        12, "sibling_values", "task:2", 2, 0.932)
    assert finding.message == ("types ‘Carnegie Mellon University’, ‘Schenley Park’, the place_A, place_B of task 80 "
                               "(same template), and never ‘Univ of Pittsburgh’, ‘Zoo’ that its own intent names")


def test_a_gold_typing_its_own_values_is_no_siblings_copy():
    own = ("Type 'Univ of Pittsburgh' into 'From'", "Type 'Schenley Park' into 'To'", "Type 'zoo'")
    assert check_sibling_values(TASKS, [GoldRecord(13, 1, own)]) == []


def test_confidence_maps_the_margin_past_a_threshold_into_a_half_to_one():
    assert _confidence(0.0, 1.0) == 0.5
    assert _confidence(-3.0, 1.0) == 0.5  # under the threshold counts as at it
    assert _confidence(0.5, 1.0) == 0.697  # 1 - 0.5 * e^-0.5 = 0.69673
    assert _confidence(2.0, 4.0) == 0.697  # the margin in units of the scale


def test_agreement_is_the_jaccard_overlap_of_two_golds_words():
    assert _agreement({"a": 1, "b": 1}, {"b": 1, "c": 1}) == 1 / 3
    assert _agreement({}, {}) == 1.0  # two golds naming nothing agree
    assert _agreement({"a": 1}, {}) == 0.0
    assert _agreement({}, {"a": 1}) == 0.0


def test_a_worse_versions_unnamed_values_are_at_most_four_in_the_order_typed():
    steps = tuple(f"Type '{value}'" for value in ("Quincy Market", "Jamaica Pond", "harvard", "Quincy Market",
                                                  "Arnold Arboretum", "Fenway", "Back Bay"))

    assert _unnamed_values(steps, "Directions from Harvard to MIT") == [
        "‘Quincy Market’", "‘Jamaica Pond’", "‘Arnold Arboretum’", "‘Fenway’"]
