"""WebArena-Verified's structured answer check, on the real tasks and agent_response examples."""

import json

import pytest

from metrics.definitions.agent_response import agent_response_check, fold_to_ascii, task_answer_check
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
    assert network.evaluator == "network_event" and "network log" in network.note
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
