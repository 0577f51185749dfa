import numpy as np

from failures.themes import FailureText, themes


def _unit(*rows):
    vectors = np.array(rows, dtype=float)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def test_failures_group_by_their_vectors_and_are_named_by_shared_phrases():
    failures = [FailureText(1, "Blocked by a captcha on the login page"),
                FailureText(2, "A captcha blocked the login"),
                FailureText(3, "Typed the wrong date in the search box"),
                FailureText(4, "Wrong date typed into the form"),
                FailureText(5, "Captcha again at login")]
    vectors = _unit([1, 0.1, 0], [1, 0, 0.1], [0, 1, 0.1], [0.1, 1, 0], [1, 0.05, 0.05])

    found = themes(failures, vectors)

    assert [(theme.size, set(theme.trajectories)) for theme in found] == [(3, {1, 2, 5}), (2, {3, 4})]
    # "captcha" and "login" are in all three and in neither other failure; "blocked" in two of three.
    assert found[0].phrases == ("captcha", "login", "blocked")
    assert found[1].phrases == ("wrong date", "typed")
    assert found[1].label == "wrong date · typed"
    assert found[0].representatives[0] == 5  # nearest the centre of its theme


def test_one_failure_is_one_theme_and_none_is_none():
    [theme] = themes([FailureText(7, "Looped on the same link")], _unit([1, 0]))

    assert (theme.size, theme.representatives) == (1, (7,))
    assert theme.phrases == ("looped same", "same link")
    assert themes([], np.zeros((0, 2))) == []
