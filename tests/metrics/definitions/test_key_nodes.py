"""Key-node Completion on the real Mind2Web-Live checkpoints."""

import json

import pytest

from metrics.definitions import KeyNodeCheck, SemanticQuestion, VisitedStep, key_node_completion, key_node_questions


@pytest.fixture(scope="module")
def live_tasks(shared_data):
    return json.loads((shared_data / "more-benchmarks" / "mind2web-live.excerpt.json").read_text(encoding="utf-8"))


def test_url_checkpoints_included_and_exact_by_query_key(live_tasks):
    nodes = live_tasks[0]["evaluation"]  # gamestop: "gamestop." in a URL; ?store=2630
    steps = [VisitedStep(url="https://www.google.com/search?q=gamestop"),
             VisitedStep(url="https://www.gamestop.com/stores/?store=1000"),
             VisitedStep(url="https://www.gamestop.com/search/?q=x&store=2630")]
    result = key_node_completion(nodes, steps)
    assert (result.value, result.satisfied, result.total, result.all_satisfied) == (1.0, 2, 2, True)
    assert [check.step for check in result.checks] == [2, 3]  # "gamestop." is not in "q=gamestop"
    half = key_node_completion(nodes, steps[:2])
    assert half.value == 0.5 and half.checks[1].satisfied is False and half.all_satisfied is False


def test_element_paths_count_only_on_the_named_site(live_tasks):
    nodes = live_tasks[2]["evaluation"]  # imdb: two URL checkpoints and three selectors on imdb
    selector = nodes[3]["content"]["reference_answer"]  # ".ipc-starbar__touch " (trailing space as published)
    steps = [VisitedStep(url="https://www.imdb.com/title/tt0103064/?ref_=x"),
             VisitedStep(url="https://www.imdb.com/title/tt0103064/", element_path=selector.strip()),
             VisitedStep(url="https://example.org/", element_path=nodes[4]["content"]["reference_answer"])]
    result = key_node_completion(nodes, steps)
    assert [check.satisfied for check in result.checks] == [True, True, False, True, False]
    assert result.value == pytest.approx(3 / 5)


def test_exact_url_and_value_checkpoints():
    nodes = [{"match_function_name": "url_exactly_match", "content": {"key": "", "reference_answer": "https://a.com/x/"}},
             {"match_function_name": "element_value_exactly_match", "content": {"reference_answer": "Boston"}}]
    assert key_node_completion(nodes, [VisitedStep(url="https://a.com/x", value=" Boston ")]).value == 1.0
    assert key_node_completion(nodes, [VisitedStep(url="https://a.com/x/y", value="boston")]).value == 0.0


def test_semantic_checkpoints_ask_the_judge_once_per_distinct_candidate():
    nodes = [{"match_function_name": "element_value_semantic_match", "content": {"reference_answer": "New York"}},
             {"match_function_name": "url_semantic_match", "content": {"reference_answer": "the cart page"}}]
    steps = [VisitedStep(url="https://s.com/", value="NYC"), VisitedStep(url="https://s.com/cart", value="NYC")]
    questions = key_node_questions(nodes, steps)
    assert questions == (SemanticQuestion("element_value_semantic_match", "New York", "NYC"),
                         SemanticQuestion("url_semantic_match", "the cart page", "https://s.com/"),
                         SemanticQuestion("url_semantic_match", "the cart page", "https://s.com/cart"))
    scores = dict(zip(questions, (0.9, 0.1, 1.0)))
    result = key_node_completion(nodes, steps, scores)
    assert [(check.satisfied, check.step, check.judge_score) for check in result.checks] == [
        (True, 1, 0.9), (True, 2, 1.0)]
    low = key_node_completion(nodes, steps, dict(zip(questions, (0.5, 0.1, 0.2))))
    assert (low.value, low.checks[0].judge_score) == (0.0, 0.5)
    with pytest.raises(ValueError, match="no judge score for element_value_semantic_match"):
        key_node_completion(nodes, steps, {})


def test_no_key_nodes_is_no_value_and_bad_nodes_are_refused():
    assert key_node_completion([], [VisitedStep(url="https://a.com")]).value is None
    with pytest.raises(ValueError, match=r"key_nodes\[0\].match_function_name: unknown match function 'fuzzy'"):
        key_node_completion([{"match_function_name": "fuzzy", "content": {"reference_answer": "x"}}], [])


def _node(kind, reference, **content):
    return {"match_function_name": kind, "content": {"reference_answer": reference, **content}}


def test_each_check_names_its_node_kind_reference_step_and_score():
    nodes = [_node("url_included_match", "cart"), _node("element_value_exactly_match", "Boston"),
             _node("element_value_semantic_match", "New York")]
    steps = [VisitedStep(url="https://s.com/", value="NYC"), VisitedStep(url="https://s.com/cart", value="LA")]
    scores = {SemanticQuestion("element_value_semantic_match", "New York", "NYC"): 0.5,
              SemanticQuestion("element_value_semantic_match", "New York", "LA"): 0.2}
    assert key_node_completion(nodes, steps, scores).checks == (
        KeyNodeCheck(1, "url_included_match", "cart", True, 2),
        KeyNodeCheck(2, "element_value_exactly_match", "Boston", False),
        # Neither value reached tau: the best score the judge gave is kept (0.5, not the last 0.2).
        KeyNodeCheck(3, "element_value_semantic_match", "New York", False, None, 0.5),
    )
    passed = key_node_completion(nodes[2:], steps, {**scores, SemanticQuestion(
        "element_value_semantic_match", "New York", "LA"): 0.7}).checks
    assert passed == (KeyNodeCheck(1, "element_value_semantic_match", "New York", True, 2, 0.7),)  # 0.7 = tau


def test_an_exact_url_ignores_one_trailing_slash_on_either_side_and_nothing_else():
    node = [_node("url_exactly_match", "https://a.com/MAX")]
    assert key_node_completion(node, [VisitedStep(url="https://a.com/MAX/")]).value == 1.0
    assert key_node_completion([_node("url_exactly_match", "https://a.com/MAX/")],
                               [VisitedStep(url="https://a.com/MAX")]).value == 1.0
    assert key_node_completion(node, [VisitedStep(url="https://a.com/MA")]).value == 0.0


def test_steps_without_a_value_are_passed_over_and_the_netloc_holds_for_values_only():
    nodes = [_node("element_value_semantic_match", "New York", netloc="s.com"),
             _node("url_semantic_match", "the cart page", netloc="s.com"),
             _node("element_value_exactly_match", "Boston", netloc="s.com")]
    steps = [VisitedStep(url="https://s.com/"), VisitedStep(url="https://other.org/cart", value="NYC"),
             VisitedStep(url="https://s.com/find", value="NYC"), VisitedStep(url="https://other.org/", value="Boston")]
    questions = key_node_questions(nodes, steps)
    # No question of a step without a value; NYC asked once (on s.com); every URL asked, whatever its site.
    assert questions == (SemanticQuestion("element_value_semantic_match", "New York", "NYC"),
                         *(SemanticQuestion("url_semantic_match", "the cart page", step.url) for step in steps))
    scores = dict.fromkeys(questions, 0.0) | {questions[0]: 1.0, questions[2]: 1.0}
    result = key_node_completion(nodes, steps, scores)
    # The value is met on step 3 (step 1 has none, step 2 is off the site); the cart URL on step 2 although
    # off s.com; Boston only off the site: not met.
    assert [(check.satisfied, check.step) for check in result.checks] == [(True, 3), (True, 2), (False, None)]


def test_a_step_without_a_url_is_on_no_site():
    # An empty host holds no netloc, whatever its letters.
    node = [_node("element_value_exactly_match", "Boston", netloc="X")]
    assert key_node_completion(node, [VisitedStep(value="Boston")]).value == 0.0
    # Host names are read lower-case.
    assert key_node_completion(node, [VisitedStep(url="https://X.com/", value="Boston")]).value == 0.0
    assert key_node_completion([_node("element_value_exactly_match", "Boston", netloc="x")],
                               [VisitedStep(url="https://x.com/", value="Boston")]).value == 1.0


def test_a_bad_node_is_named_by_its_place_in_the_questions_too():
    with pytest.raises(ValueError) as raised:
        key_node_questions([_node("url_included_match", "a"), {"content": "x"}], [])
    assert str(raised.value) == "key_nodes[1]: expected {match_function_name, content}, got {'content': 'x'}"


def test_no_key_nodes_gives_the_whole_empty_result_and_bad_scores_and_answers_are_named():
    assert key_node_completion([], [], tau=0.6).to_dict() == {
        "value": None, "satisfied": 0, "total": 0, "all_satisfied": None, "checks": [], "tau": 0.6}
    assert key_node_completion([_node("url_included_match", "a")], [], tau=0.6).tau == 0.6
    question = SemanticQuestion("url_semantic_match", "the cart", "https://s.com/")
    with pytest.raises(ValueError) as raised:
        key_node_completion([], [], {question: 2})
    assert str(raised.value) == ("judge score for url_semantic_match 'the cart': "
                                 "a judge score must be a number in [0, 1], got 2")
    with pytest.raises(ValueError) as raised:
        key_node_completion([_node("url_included_match", 3)], [])
    assert str(raised.value) == "key_nodes[0].content.reference_answer: expected a string, got 3"
    with pytest.raises(ValueError) as raised:
        key_node_completion(["url_included_match"], [])
    assert str(raised.value) == "key_nodes[0]: expected {match_function_name, content}, got 'url_included_match'"
