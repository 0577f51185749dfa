"""WebArena-Verified's structured answer check, on the real tasks and agent_response examples."""

import json

import pytest

from metrics.definitions.agent_response import (AgentResponseCheck, FieldCheck, agent_response_check, fold_to_ascii,
                                                 task_answer_check)
from metrics.definitions.task_success import task_success
from trajectories.formats.task_files import read_task_file

MORE = "more-benchmarks"


@pytest.fixture(scope="module")
def verified(shared_data):
    return {config.task_id: config for config in read_task_file(shared_data / MORE / "webarena-verified.excerpt.json").configs}


@pytest.fixture(scope="module")
def responses(shared_data):
    return {number: (shared_data / MORE / f"examples__agent_logs__demo__{number}__agent_response.json").read_text()
            for number in (107, 108)}


def answer(**fields) -> str:
    return json.dumps({"task_type": "RETRIEVE", "status": "SUCCESS", "retrieved_data": None, **fields})


def test_strings_are_normalised_as_webarena_verified_documents():
    assert fold_to_ascii("  Quest Lumaflex™   Band ") == "quest lumaflex band"
    assert fold_to_ascii("Buffalo–Niagara") == "buffalo niagara"
    assert fold_to_ascii("123-4567") == "123-4567"
    assert fold_to_ascii("Café") == "cafe"


def test_a_retrieve_answer_matches_in_any_order_with_alternatives(verified):
    task = verified["3"]  # Quest Lumaflex™ Band, and one of three tied products
    passed = task_success(task.eval_config, final_answer=answer(retrieved_data=["cruise stasis ball 65 CM",
                                                                                "Quest Lumaflex Band"]))
    assert (passed.value, passed.source) == (True, "agent_response")
    fenced = "```json\n" + answer(retrieved_data=["Quest Lumaflex Band", "Sprite Stasis Ball 55 cm"]) + "\n```"
    assert task_success(task.eval_config, final_answer=fenced).value is True


def test_a_mismatch_is_explained_field_by_field(verified):
    check = task_answer_check(verified["3"].eval_config,
                              answer(task_type="NAVIGATE", retrieved_data=["Quest Lumaflex Band", "Sprite Yoga Mat"]))
    assert check.passed is False
    task_type, status, data = check.fields
    assert (task_type.passed, task_type.reason) == (False, "expected 'retrieve', got 'NAVIGATE'")
    assert status.passed is True
    assert data.passed is False
    assert data.reason == ('not in the answer: "Sprite Stasis Ball 65 cm" or "Cruise Stasis Ball 65 cm" or '
                           '"Sprite Stasis Ball 55 cm"; not expected: "Sprite Yoga Mat"')
    short = task_answer_check(verified["3"].eval_config, answer(retrieved_data="Quest Lumaflex Band"))
    assert short.fields[2].reason == "expected 2 item(s), got 1"


def test_an_answer_that_is_not_json_fails_every_field(verified):
    check = task_answer_check(verified["0"].eval_config, "Quest Lumaflex Band")
    assert check.passed is False and check.note.startswith("the final answer is not a JSON object")
    assert task_answer_check(verified["0"].eval_config, None).note == "no final answer"
    assert task_answer_check({"eval_types": ["string_match"]}, "x") is None


def test_navigation_tasks_need_the_network_log(verified, responses):
    result = task_success(verified["44"].eval_config, final_answer=responses[107])
    assert result.value is None
    (response, network) = result.evaluators
    assert response.passed is True and response.response_check.fields[2].passed is None
    assert (network.evaluator, network.passed, network.note) == (
        "network_event", None,
        "the task's NetworkEventEvaluator requests need the browser's network log, which the trajectory does not carry")
    wrong = task_success(verified["44"].eval_config, final_answer=answer())
    assert (wrong.value, wrong.source) == (False, "agent_response")


def test_objects_and_numbers_compare_by_schema(responses):
    evaluator = {
        "evaluator": "AgentResponseEvaluator",
        "results_schema": {"type": "array", "items": {"type": "object", "properties": {
            "month": {"type": "string"}, "count": {"type": "number"}}}},
        "expected": {"task_type": "retrieve", "status": "success", "retrieved_data": [
            {"month": "jan", "count": "12"}, {"month": "Feb", "count": 7}, {"month": ["March", "Mar"], "count": 5},
            {"month": "April", "count": 9.0}, {"month": "May", "count": 5}]},
    }
    assert agent_response_check(evaluator, responses[108]).passed is True
    evaluator["expected"]["retrieved_data"][1]["count"] = 8
    check = agent_response_check(evaluator, responses[108])
    assert check.passed is False and '{"month": "Feb", "count": 8}' in check.fields[2].reason


def _items_reason(expected: list, actual: list, items: dict | None = None, ordered: bool = False) -> str:
    """Why the answer's retrieved_data differs from the expected items ("" when they match)."""
    evaluator = {"expected": {"task_type": "retrieve", "status": "success", "retrieved_data": expected},
                 "ordered": ordered}
    if items is not None:
        evaluator["results_schema"] = {"type": "array", "items": items}
    response = json.dumps({"task_type": "retrieve", "status": "success", "retrieved_data": actual})
    field = agent_response_check(evaluator, response).fields[2]
    assert field.passed is (field.reason == "")
    return field.reason


def test_ordered_items_are_compared_place_by_place():
    assert _items_reason(["a", "b"], ["A", "b"], ordered=True) == ""
    assert _items_reason(["a", "b"], ["a", "c"], ordered=True) == 'item 2: expected "b", got "c"'
    assert _items_reason(["a", "b"], ["b", "a"], ordered=True) == 'item 1: expected "a", got "b"'
    assert _items_reason(["a", "b"], ["b", "a"]) == ""  # unordered: a multiset
    # The item schema holds in both: "12" and 12.0 are one number.
    assert _items_reason(["12"], [12.0], {"type": "number"}, ordered=True) == ""
    assert _items_reason(["12"], [12.0], {"type": "number"}) == ""
    assert _items_reason(["12"], [12.0]) == 'not in the answer: "12"; not expected: 12.0'


def test_differences_name_every_missing_and_extra_item_and_two_alternatives_as_either():
    assert _items_reason(["a", "b", "c"], ["a", "x", "y"]) == 'not in the answer: "b", "c"; not expected: "x", "y"'
    assert _items_reason([["Sprite", "Cruise"]], ["Yoga"]) == (
        'not in the answer: "Sprite" or "Cruise"; not expected: "Yoga"')
    assert _items_reason(["Café"], ["Tea"]) == 'not in the answer: "Café"; not expected: "Tea"'


def test_numbers_compare_within_a_billionth_of_the_larger_of_one_and_the_expected_value():
    assert _items_reason([5], ["5.0"]) == ""  # no schema: an expected number compares as a number
    assert _items_reason([5], ["$5"]) == "" and _items_reason([1234.5], ["$1,234.50"]) == ""
    assert _items_reason([0], [1e-9]) == ""  # exactly the tolerance: equal
    assert _items_reason([0], [1.5e-9]) == "not in the answer: 0; not expected: 1.5e-09"
    assert _items_reason([1e10], [1e10 + 5]) == ""  # 5 <= 1e-9 * 1e10
    assert _items_reason([True], ["true"]) == ""  # a boolean is no number: compared as text
    assert _items_reason([5], [None]) == "not in the answer: 5; not expected: null"
    assert _items_reason([5], [[5]]) == "not in the answer: 5; not expected: [5]"


def test_the_schema_says_the_kind_format_before_type_and_an_array_has_no_alternatives():
    assert _items_reason(["1,234"], ["1234"], {"type": "string", "format": "integer"}) == ""
    assert _items_reason(["1,234"], ["1234"], {"type": "string"}) != ""
    assert _items_reason(["Abc"], ["abc"]) == ""  # no schema, a string: compared as normalised text
    # Under an array schema a list is one value, not alternatives.
    assert _items_reason([["a", "b"]], [["a", "b"]], {"type": "array"}) == ""
    assert _items_reason([["a", "b"]], ["a"], {"type": "array"}) != ""
    assert _items_reason([["12", "13"]], [12.0], {"type": "number"}) == ""


def test_objects_compare_by_their_properties_schemas_and_may_come_as_json_text():
    items = {"type": "object", "properties": {"count": {"type": "number"}}}
    assert _items_reason([{"count": "12"}], [{"count": 12.0}], items) == ""
    assert _items_reason([{"count": "12"}], [{"count": 12.0}]) != ""
    assert _items_reason([{"count": "12"}], ['{"count": 12}'], items) == ""
    assert _items_reason([{"count": "12"}], ["count: 12"], items) != ""  # not JSON
    assert _items_reason([{"count": "12"}], [12], items) != ""


def test_null_equals_only_null():
    assert _items_reason([None], [None]) == ""
    assert _items_reason([None], ["x"]) == 'not in the answer: null; not expected: "x"'
    assert _items_reason(["None"], [None]) == 'not in the answer: "None"; not expected: null'


def test_normalising_makes_whitespace_one_space_drops_control_characters_and_what_ascii_cannot_hold():
    assert fold_to_ascii("a\tb\nc\rd") == "a b c d"
    assert fold_to_ascii("aX\x07b\x00") == "axb"
    assert fold_to_ascii("Ωmega 東京 ok") == "mega ok"


def test_an_answer_that_is_no_object_fails_each_field_with_what_was_expected():
    evaluator = {"expected": {"task_type": "retrieve", "status": "success", "retrieved_data": ["a"]}}
    check = agent_response_check(evaluator, "[1, 2]")
    note = "the final answer is not a JSON object {task_type, status, retrieved_data}"
    assert check == AgentResponseCheck(passed=False, note=note, fields=(
        FieldCheck("task_type", "retrieve", None, False, note), FieldCheck("status", "success", None, False, note),
        FieldCheck("retrieved_data", ["a"], None, False, note)))
    with pytest.raises(ValueError) as raised:
        agent_response_check({"expected": ["a"]}, "x")
    assert str(raised.value) == "eval.AgentResponseEvaluator.expected: expected an object, got ['a']"


def test_each_field_says_what_was_expected_what_came_and_why_not():
    evaluator = {"expected": {"task_type": "navigate", "status": "success", "retrieved_data": None}}
    # The legacy key stands for task_type; a blank status is missing; a navigation retrieves nothing.
    check = agent_response_check(evaluator, json.dumps(
        {"performed_operation": "NAVIGATE", "status": "  ", "retrieved_data": ["x"]}))
    assert check == AgentResponseCheck(passed=False, fields=(
        FieldCheck("task_type", "navigate", "NAVIGATE", True, ""),
        FieldCheck("status", "success", "  ", False, "missing from the answer"),
        FieldCheck("retrieved_data", None, ["x"], None, "not compared: the task retrieves nothing")))
    # Without task_type, status is still read; performed_operation never stands for status.
    check = agent_response_check(evaluator, json.dumps({"status": "Success"}))
    assert check.fields[:2] == (FieldCheck("task_type", "navigate", None, False, "missing from the answer"),
                                FieldCheck("status", "success", "Success", True, ""))
    check = agent_response_check(evaluator, json.dumps({"task_type": "navigate", "performed_operation": "success"}))
    assert check.fields[1] == FieldCheck("status", "success", None, False, "missing from the answer")
    assert agent_response_check(evaluator, json.dumps({"task_type": "navigate", "status": "success"})).passed is True


def test_retrieved_data_may_be_one_value_or_a_list_as_json_text_and_none_is_no_items():
    assert _items_reason("Quest Lumaflex Band", ["quest lumaflex band"]) == ""
    assert _items_reason(["a", "b"], '["b", "a"]') == ""  # a list written as JSON text
    assert _items_reason(["x"], '"x"') == 'not in the answer: "x"; not expected: "\\"x\\""'  # text, not a list
    assert _items_reason(["a"], "") == "expected 1 item(s), the answer has none"
    assert _items_reason(["a", "b"], None) == "expected 2 item(s), the answer has none"
    assert _items_reason([], None) == ""
    evaluator = {"expected": {"task_type": "retrieve", "status": "success", "retrieved_data": ["a"]}}
    check = agent_response_check(evaluator, json.dumps({"task_type": "retrieve", "status": "success",
                                                        "retrieved_data": "b"}))
    assert check.fields[2] == FieldCheck("retrieved_data", ["a"], "b", False,
                                         'not in the answer: "a"; not expected: "b"')


def test_a_schema_saying_no_kind_or_no_object_leaves_the_expected_value_to_say_it():
    assert _items_reason([5], ["5.0"], {}) == ""  # an item schema without type: 5 is a number
    evaluator = {"expected": {"task_type": "retrieve", "status": "success", "retrieved_data": [5]},
                 "results_schema": "array"}
    response = json.dumps({"task_type": "retrieve", "status": "success", "retrieved_data": ["5.0"]})
    assert agent_response_check(evaluator, response).passed is True


def test_data_expected_of_a_task_that_retrieves_nothing_is_shown_but_not_compared():
    evaluator = {"expected": {"task_type": "mutate", "status": "success", "retrieved_data": ["x"]}}
    check = agent_response_check(evaluator, json.dumps({"task_type": "mutate", "status": "success"}))
    assert check.fields[2] == FieldCheck("retrieved_data", ["x"], None, None,
                                         "not compared: the task retrieves nothing")


def test_the_evaluator_result_carries_the_checks_note(verified):
    [result] = task_success(verified["3"].eval_config, final_answer=None).evaluators
    assert (result.evaluator, result.passed, result.note) == ("agent_response", False, "no final answer")
