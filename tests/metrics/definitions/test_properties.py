"""Invariants of the metric definitions over generated inputs (hypothesis)."""

import json

from hypothesis import given
from hypothesis import strategies as st

from metrics.definitions import (
    ScoreMatrix,
    answer_quality,
    element_accuracy,
    partial_success,
    recovery,
    repetitiveness,
    requirements_needing_judge,
    step_success,
)

from .judging import exact_matrix, neighbour_scores

# Scores at and around the default threshold are where off-by-one mistakes hide.
scores = st.one_of(st.sampled_from([0.0, 0.69, 0.7, 1.0]), st.floats(min_value=0, max_value=1))
taus = st.one_of(st.just(0.7), st.floats(min_value=0, max_value=1))
actions = st.sampled_from(["click [1]", "click [2]", "type [3] [hello]", "scroll [down]", "go_back", "none"])


@st.composite
def matrices(draw):
    m = draw(st.integers(0, 8))
    n = draw(st.integers(0, 10))
    rows = draw(st.lists(st.lists(scores, min_size=n, max_size=n), min_size=m, max_size=m))
    return ScoreMatrix(rows, agent_steps=n)


def in_unit_range_or_none(value):
    return value is None or 0 <= value <= 1


def round_trips_as_json(result):
    plain = result.to_dict()
    return json.loads(json.dumps(plain)) == plain


@given(matrices(), taus, st.booleans())
def test_step_success_matches_each_step_at_most_once(matrix, tau, ordered):
    result = step_success(matrix, tau=tau, ordered=ordered)
    assert (result.value is None) == (matrix.gold_steps == 0)
    assert in_unit_range_or_none(result.value)
    gold = [pair.gold_step for pair in result.matched]
    agent = [pair.agent_step for pair in result.matched]
    assert len(set(gold)) == len(gold)
    assert len(set(agent)) == len(agent)
    assert sorted(gold + list(result.unmatched_gold_steps)) == list(range(1, matrix.gold_steps + 1))
    for pair in result.matched:
        assert pair.score == matrix.scores[pair.gold_step - 1][pair.agent_step - 1] >= tau
    if matrix.gold_steps:
        assert result.value == len(result.matched) / matrix.gold_steps
    if ordered:
        assert agent == sorted(agent)
    assert round_trips_as_json(result)


@given(matrices(), taus)
def test_step_success_is_greedy(matrix, tau):
    """A gold step left unmatched had no qualifying agent step that an earlier gold step had not taken."""
    result = step_success(matrix, tau=tau)
    taken_by = {pair.agent_step: pair.gold_step for pair in result.matched}
    for gold_step in result.unmatched_gold_steps:
        for i, score in enumerate(matrix.scores[gold_step - 1]):
            if score >= tau:
                assert taken_by[i + 1] < gold_step


@given(matrices(), taus, st.integers(1, 5))
def test_recovery_walks_forward(matrix, tau, window):
    result = recovery(matrix, tau=tau, window=window)
    assert (result.value is None) == (matrix.gold_steps == 0)
    assert in_unit_range_or_none(result.value)
    assert result.recoveries <= result.deviations
    gold = [pair.gold_step for pair in result.matched]
    agent = [pair.agent_step for pair in result.matched]
    assert gold == sorted(set(gold)) and agent == sorted(set(agent))
    assert all(pair.score >= tau for pair in result.matched)
    # Deviations and recoveries alternate: a recovery always ends an open deviation.
    open_deviation = False
    for event in result.events:
        if event.kind == "recovery":
            assert open_deviation and event.cost >= 1
        open_deviation = event.kind == "deviation"
    if result.mean_recovery_cost is not None:
        assert result.mean_recovery_cost >= 1
    if window == 1 and result.deviations == 0 and matrix.gold_steps:
        assert gold == list(range(1, matrix.gold_steps + 1))
    assert round_trips_as_json(result)


@given(st.lists(actions, max_size=12))
def test_following_the_gold_exactly_is_perfect(steps):
    matrix = exact_matrix(steps, steps)
    expected = 1.0 if steps else None
    assert step_success(matrix).value == expected
    assert step_success(matrix, ordered=True).value == expected
    assert recovery(matrix).value == expected
    assert recovery(matrix).deviations == 0


@st.composite
def trajectories_without_equal_neighbours(draw):
    steps = draw(st.lists(actions, max_size=15))
    return [step for k, step in enumerate(steps) if k == 0 or step != steps[k - 1]]


@given(trajectories_without_equal_neighbours())
def test_no_equal_neighbours_is_one_and_doubling_is_half(steps):
    result = repetitiveness(neighbour_scores(steps), len(steps))
    assert result.value == (1.0 if steps else None)
    doubled = [step for step in steps for _ in range(2)]
    assert repetitiveness(neighbour_scores(doubled), len(doubled)).value == (0.5 if steps else None)


@given(st.lists(scores, max_size=20), taus)
def test_repetitiveness_in_unit_range(neighbours, tau):
    result = repetitiveness(neighbours, len(neighbours) + 1, tau=tau)
    assert 0 < result.value <= 1
    assert round_trips_as_json(result)


planned_actions = st.one_of(st.none(), actions, st.sampled_from(["scroll [direction=down]", "action [arg]", ""]))


@given(st.lists(st.tuples(planned_actions, actions), max_size=12))
def test_element_accuracy_in_unit_range(steps):
    result = element_accuracy([planned for planned, _ in steps], [executed for _, executed in steps])
    assert (result.value is None) == (not steps)
    assert in_unit_range_or_none(result.value)
    assert result.hits + len(result.misses) == result.steps == len(steps)
    assert round_trips_as_json(result)


@given(st.lists(actions, max_size=12))
def test_executing_every_planned_action_is_perfect(steps):
    # The harness executes a planned `type` with Enter (the default) by typing a newline, shown as a space.
    result = element_accuracy(steps, [s.replace("type [3] [hello]", "type [3] [hello ]") for s in steps])
    valid = [step for step in steps if step != "none"]
    assert result.hits == len(valid)


requirement_texts = st.text(alphabet="abcXYZ 12", max_size=6)


@given(st.lists(requirement_texts, max_size=6), st.one_of(st.none(), st.text(alphabet="abcXYZ 12", max_size=20)),
       st.lists(scores, min_size=6, max_size=6))
def test_partial_success_in_unit_range(requirements, answer, judge_scores):
    needing = requirements_needing_judge(requirements, answer)
    result = partial_success(requirements, answer, dict(zip(needing, judge_scores)))
    assert in_unit_range_or_none(result.value)
    assert (result.value is None) == (len([text for text in requirements if text.strip()]) < 2)
    assert round_trips_as_json(result)


@given(st.lists(requirement_texts.filter(str.strip), min_size=2, max_size=6))
def test_an_answer_holding_every_requirement_needs_no_judge(requirements):
    answer = " / ".join(text.upper() for text in requirements)
    assert requirements_needing_judge(requirements, answer) == ()
    assert partial_success(requirements, answer).value == 1.0


@given(st.one_of(st.none(), st.text(max_size=5)), scores, scores, taus)
def test_correct_is_grounded_and_relevant(answer, grounded_score, relevant_score, tau):
    result = answer_quality(answer, grounded_score, relevant_score, tau=tau)
    if result.correct is None:
        assert not (answer or "").strip()
    else:
        assert result.correct == (result.grounded and result.relevant)
    assert round_trips_as_json(result)
