import pytest

from metrics.definitions import RequirementCheck, answer_quality, partial_success, requirements_needing_judge
from metrics.definitions.final_answer import NO_ANSWER, NOT_APPLICABLE, NOT_GROUNDED_KNOWN, NOT_OBSERVED

# Task 3's must_include list in ../shared/data/webarena/test.raw.json.
TASK_3 = ["Quest Lumaflex™ Band", "Sprite Stasis Ball 65 cm"]
# Task 6's.
TASK_6 = [
    "Sprite Yoga Strap 6 foot",
    "Overnight Duffle",
    "Ida Workout Parachute Pant-29-Purple",
    "Hawkeye Yoga Short-32-Blue",
    "Sprite Stasis Ball 65 cm",
]


class TestPartialSuccess:
    def test_every_requirement_found_as_a_substring_needs_no_judge(self):
        answer = "The top two were quest lumaflex™ band and SPRITE STASIS BALL 65 CM."
        assert requirements_needing_judge(TASK_3, answer) == ()
        result = partial_success(TASK_3, answer)
        assert (result.value, result.applicable, result.satisfied) == (1.0, True, 2)
        assert result.requirements == (
            RequirementCheck("Quest Lumaflex™ Band", True, "substring"),
            RequirementCheck("Sprite Stasis Ball 65 cm", True, "substring"),
        )

    def test_single_requirement_task_is_not_applicable(self):
        assert requirements_needing_judge(["Quest Lumaflex™ Band"], "something else") == ()
        result = partial_success(["Quest Lumaflex™ Band"], "Quest Lumaflex™ Band")
        assert (result.value, result.applicable, result.requirements) == (None, False, ())

    def test_no_requirements_is_not_applicable(self):
        assert partial_success([], "an answer").value is None

    def test_blank_requirements_do_not_count(self):
        assert partial_success(["Overnight Duffle", "  ", ""], "Overnight Duffle").applicable is False
        result = partial_success([" Overnight Duffle ", "Hawkeye", " "], "overnight duffle", {"Hawkeye": 0.0})
        assert result.value == 0.5
        assert [check.requirement for check in result.requirements] == ["Overnight Duffle", "Hawkeye"]

    def test_no_final_answer_is_zero(self):
        assert requirements_needing_judge(TASK_3, None) == ()
        result = partial_success(TASK_3, None)
        assert (result.value, result.applicable, result.satisfied) == (0.0, True, 0)
        assert {check.by for check in result.requirements} == {"no_answer"}

    def test_empty_final_answer_is_zero(self):
        assert partial_success(TASK_3, "  ").value == 0.0

    def test_judge_decides_what_substrings_cannot(self):
        answer = "Sprite Yoga Strap (6 ft), the overnight duffle bag, Ida parachute pants"
        needing = requirements_needing_judge(TASK_6, answer)
        assert needing == (
            "Sprite Yoga Strap 6 foot",
            "Ida Workout Parachute Pant-29-Purple",
            "Hawkeye Yoga Short-32-Blue",
            "Sprite Stasis Ball 65 cm",
        )
        scores = {needing[0]: 0.9, needing[1]: 0.7, needing[2]: 0.1, needing[3]: 0.0}
        result = partial_success(TASK_6, answer, scores)
        assert (result.satisfied, result.value) == (3, 3 / 5)
        assert [(check.requirement, check.satisfied, check.by, check.judge_score) for check in result.requirements] == [
            ("Sprite Yoga Strap 6 foot", True, "judge", 0.9),
            ("Overnight Duffle", True, "substring", None),
            ("Ida Workout Parachute Pant-29-Purple", True, "judge", 0.7),
            ("Hawkeye Yoga Short-32-Blue", False, "judge", 0.1),
            ("Sprite Stasis Ball 65 cm", False, "judge", 0.0),
        ]

    def test_tau_is_a_parameter(self):
        scores = {"Sprite Stasis Ball 65 cm": 0.6}
        assert partial_success(TASK_3, "Quest Lumaflex™ Band and a ball", scores).value == 0.5
        assert partial_success(TASK_3, "Quest Lumaflex™ Band and a ball", scores, tau=0.5).value == 1.0

    def test_a_substring_hit_wins_over_a_judge_score(self):
        result = partial_success(TASK_3, "Quest Lumaflex™ Band, Sprite Stasis Ball 65 cm", {TASK_3[0]: 0.0})
        assert result.value == 1.0

    def test_weak_agent_na_answer_to_a_five_item_task(self):
        answer = "'N/A'"
        assert requirements_needing_judge(TASK_6, answer) == tuple(TASK_6)
        assert partial_success(TASK_6, answer, dict.fromkeys(TASK_6, 0.0)).value == 0.0

    def test_missing_judge_score_names_the_requirement(self):
        with pytest.raises(ValueError, match="no judge score for requirement 'Sprite Stasis Ball 65 cm'"):
            partial_success(TASK_3, "Quest Lumaflex™ Band", {})

    def test_judge_score_outside_unit_range_is_refused(self):
        with pytest.raises(ValueError, match="requirement 'Sprite Stasis Ball 65 cm'"):
            partial_success(TASK_3, "Quest Lumaflex™ Band", {"Sprite Stasis Ball 65 cm": 7})


class TestAnswerQuality:
    def test_no_final_answer_is_null(self):
        result = answer_quality(None, 1.0, 1.0)
        assert (result.grounded, result.relevant, result.correct) == (None, None, None)
        assert (result.grounded_score, result.relevant_score) == (None, None)

    def test_empty_final_answer_is_null(self):
        assert answer_quality("", 1.0, 1.0).correct is None

    @pytest.mark.parametrize(
        "grounded_score, relevant_score, expected",
        [
            (0.9, 0.8, (True, True, True)),
            (0.9, 0.2, (True, False, False)),
            (0.1, 0.8, (False, True, False)),
            (0.0, 0.0, (False, False, False)),
            (0.7, 0.7, (True, True, True)),
        ],
    )
    def test_correct_is_grounded_and_relevant(self, grounded_score, relevant_score, expected):
        result = answer_quality("Quest Lumaflex™ Band", grounded_score, relevant_score)
        assert (result.grounded, result.relevant, result.correct) == expected
        assert (result.grounded_score, result.relevant_score) == (grounded_score, relevant_score)

    def test_tau_is_a_parameter(self):
        assert answer_quality("42", 0.6, 0.6, tau=0.5).correct is True

    def test_an_answer_needs_both_scores(self):
        with pytest.raises(ValueError, match="grounded_score and relevant_score"):
            answer_quality("42", 0.9)

    def test_score_outside_unit_range_is_refused(self):
        with pytest.raises(ValueError, match="relevant_score"):
            answer_quality("42", 0.9, -1)

    def test_no_final_answer_says_why_for_each(self):
        assert answer_quality(None).null_reasons == {"grounded": NO_ANSWER, "relevant": NO_ANSWER,
                                                     "correct": NO_ANSWER}

    @pytest.mark.parametrize("relevant_score, relevant", [(0.9, True), (0.2, False)])
    def test_with_nothing_observed_groundedness_and_so_correct_are_unknown(self, relevant_score, relevant):
        # No observation text: grounded is unknown, not false; correct = grounded and relevant is
        # unknown with it, even when the answer is not relevant (a mean of correct over the trajectories
        # that happen to be irrelevant would be a mean of zeros).
        result = answer_quality("42", None, relevant_score, observed=False)
        assert (result.grounded, result.relevant, result.correct) == (None, relevant, None)
        assert result.null_reasons == {"grounded": NOT_OBSERVED, "correct": NOT_GROUNDED_KNOWN}
        assert answer_quality("42", 0.9, 0.9).null_reasons == {}


def test_partial_success_of_fewer_than_two_requirements_says_why():
    assert partial_success(["one"], "one").null_reason == NOT_APPLICABLE
    assert partial_success(["one", "two"], "one two").null_reason == ""


def test_partial_success_gives_the_whole_result_with_and_without_an_answer():
    assert partial_success(["one"], "one", tau=0.6).to_dict() == {
        "value": None, "applicable": False, "satisfied": 0, "requirements": [], "tau": 0.6,
        "null_reason": "not applicable: the task has fewer than two requirements"}
    assert partial_success(["red", "blue"], None, tau=0.6).to_dict() == {
        "value": 0.0, "applicable": True, "satisfied": 0, "tau": 0.6, "null_reason": "",
        "requirements": [{"requirement": "red", "satisfied": False, "by": "no_answer", "judge_score": None},
                         {"requirement": "blue", "satisfied": False, "by": "no_answer", "judge_score": None}]}


def test_answer_quality_gives_the_whole_result_and_names_a_bad_score():
    assert answer_quality(None, tau=0.6).to_dict() == {
        "grounded": None, "relevant": None, "correct": None, "grounded_score": None, "relevant_score": None,
        "tau": 0.6, "null_reasons": {"grounded": "no final answer", "relevant": "no final answer",
                                     "correct": "no final answer"}}
    assert answer_quality("x", relevant_score=0.6, tau=0.6, observed=False).to_dict() == {
        "grounded": None, "relevant": True, "correct": None, "grounded_score": None, "relevant_score": 0.6,
        "tau": 0.6, "null_reasons": {"grounded": NOT_OBSERVED, "correct": NOT_GROUNDED_KNOWN}}
    assert answer_quality("x", 0.9, 0.5, tau=0.6).to_dict() == {
        "grounded": True, "relevant": False, "correct": False, "grounded_score": 0.9, "relevant_score": 0.5,
        "tau": 0.6, "null_reasons": {}}
    for grounded, relevant, message in [
            (None, 0.5, "a final answer needs both judge scores: grounded_score and relevant_score"),
            (0.5, 2, "relevant_score: a judge score must be a number in [0, 1], got 2"),
            (-1, 0.5, "grounded_score: a judge score must be a number in [0, 1], got -1")]:
        with pytest.raises(ValueError) as raised:
            answer_quality("x", grounded, relevant)
        assert str(raised.value) == message
