"""The three Who&When walks over a log (Django-free), with a model that knows the decisive step."""

import math

import pytest

from failures import llm_methods
from judges import attribution, schema
from judges.schema import MalformedAnswer

TYPES = [{"key": "looped", "name": "Looped", "definition": "Repeated itself."}]


def _case(steps: int) -> llm_methods.Case:
    return llm_methods.Case("Find the kettle.", "", [attribution.shown_step(number, f"agent{number % 3}", f"s{number}")
                                                    for number in range(1, steps + 1)], TYPES)


def _knowing(decisive: int, asked: list):
    """`ask` of a model that always answers right, recording each question."""

    def ask(question):
        asked.append(question)
        numbers = [step["step"] for step in question.inputs["steps"]]
        if question.kind == attribution.STEP:
            return {"decisive": numbers[-1] == decisive, "failure_type": "looped", "reason": "r"}
        first, _ = attribution.halves(question.inputs["steps"])
        return {"half": "first" if decisive <= first[-1]["step"] else "second", "failure_type": "looped",
                "reason": "r"}

    return ask


@pytest.mark.parametrize("steps", range(1, 18))
def test_binary_search_finds_every_step_in_at_most_ceil_log2_n_requests(steps):
    for decisive in range(1, steps + 1):
        asked = []
        found = llm_methods.attribute(llm_methods.BINARY_SEARCH, _case(steps), _knowing(decisive, asked))
        assert (found.step, found.agent) == (decisive, f"agent{decisive % 3}")
        assert found.requests == len(asked) <= math.ceil(math.log2(steps))


def test_step_by_step_asks_up_to_the_decisive_step_each_with_the_log_up_to_it():
    asked = []
    found = llm_methods.attribute(llm_methods.STEP_BY_STEP, _case(7), _knowing(4, asked))
    assert (found.step, found.requests) == (4, 4)
    assert [len(question.inputs["steps"]) for question in asked] == [1, 2, 3, 4]


def test_a_question_that_got_no_answer_stops_the_walk():
    def unanswered(question):
        raise llm_methods.Unanswered("gave up after 4 requests: HTTP 500 (InternalServerError)")

    with pytest.raises(llm_methods.Unanswered, match="HTTP 500"):
        llm_methods.attribute(llm_methods.ALL_AT_ONCE, _case(3), unanswered)
    with pytest.raises(ValueError, match="without steps"):
        llm_methods.attribute(llm_methods.ALL_AT_ONCE, _case(0), unanswered)


def test_a_long_step_is_shown_by_its_head_and_tail():
    text = "a" * 1_200 + "b" * 500 + "c" * 300
    shown = attribution.step_text(text)
    assert shown == "a" * 1_200 + "\n[... 500 characters cut ...]\n" + "c" * 300


def test_the_answer_names_a_step_agent_and_type_the_request_offers():
    bounds = attribution.bounds(attribution.whole_question("t", "", _case(3).steps, TYPES))
    assert bounds["agents"] == ["agent1", "agent2", "agent0"] and bounds["steps"] == [1, 2, 3]
    read = schema.read(attribution.WHOLE, {"step": 2, "agent": "AGENT2 ", "failure_type": "looped", "reason": "r"},
                       bounds)
    assert read.value["agent"] == "agent2" and read.coerced == ("agent: 'AGENT2 ' read as 'agent2'",)
    with pytest.raises(MalformedAnswer, match="agent must be one of 'agent1', 'agent2', 'agent0', not 'Coder'"):
        schema.read(attribution.WHOLE, {"step": 2, "agent": "Coder", "failure_type": "looped", "reason": "r"}, bounds)
    # A log that names no agent takes whatever is written as none.
    unnamed = {**bounds, "agents": [""]}
    assert schema.read(attribution.WHOLE, {"step": 1, "agent": "the agent", "failure_type": "looped"},
                       unnamed).value == {"step": 1, "agent": "", "failure_type": "looped", "reason": ""}
