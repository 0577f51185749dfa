"""The greedy matching of steps on its own: the checks on its input and what `ordered` changes."""

import pytest

from judges.matching import MatchedPair, ScoreMatrix, match_steps


@pytest.mark.parametrize("count", [-1, True, 1.0, "2"])
def test_a_score_matrix_refuses_an_agent_step_count_that_is_not_a_count_naming_it(count):
    with pytest.raises(ValueError, match=rf"\Aagent_steps must be a non-negative integer, got {count!r}\Z"):
        ScoreMatrix(scores=(), agent_steps=count)


def test_steps_match_out_of_order_unless_ordered_is_asked():
    # Gold step 1 fits agent step 2, gold step 2 fits agent step 1 (both >= tau = 0.5).
    matrix = ScoreMatrix(scores=((0.1, 0.9), (0.8, 0.2)), agent_steps=2)

    # Unordered (the default, as annotator agreement uses it): each gold step takes the first unused fit.
    assert match_steps(matrix, tau=0.5) == ((MatchedPair(1, 2, 0.9), MatchedPair(2, 1, 0.8)), ())
    # Ordered: after gold 1 took agent step 2, only later agent steps qualify; gold 2 finds none.
    assert match_steps(matrix, tau=0.5, ordered=True) == ((MatchedPair(1, 2, 0.9),), (2,))
