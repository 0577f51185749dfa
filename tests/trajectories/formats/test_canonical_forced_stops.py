"""A `trajectory/v1` JSON file ending in the harness's own stop reads as the render file does."""

import io
import json
import re

import pytest

from trajectories.formats.readers import read_records
from trajectories.formats.webarena_render import parse_render

RENDER_3 = "trajectory-samples/llama3-8b_render_3.html"


def _json_of_render(shared_data, **outcome) -> dict:
    """llama3-8b_render_3.html written as trajectory/v1 JSON the way a naive converter writes it:
    every step block of the file, the harness's closing `stop [Early stop: ...]` included."""
    html = (shared_data / RENDER_3).read_text(encoding="utf-8")
    executed = [a.strip() for a in re.findall(r"<div class='parsed_action'[^>]*><pre>(.*?)</pre>", html, re.S)]
    assert executed[-1] == "stop [Early stop: Failed to parse actions for 3 times]"
    steps = [{"index": n, "action": action} for n, action in enumerate(executed, start=1)]
    return {"schema": "trajectory/v1", "task": {"task_id": "3"}, "steps": steps, "outcome": outcome}


def _read(document: dict):
    [record] = read_records("render_3.json", io.BytesIO(json.dumps(document).encode()), 1 << 20)
    return record


@pytest.mark.parametrize("outcome", [{"status": "no_stop"}, {"status": "early_stop"},
                                     {"status": "early_stop", "reason": "invalid_actions", "success": False}])
def test_a_last_harness_stop_is_the_outcome_as_in_the_render_file(shared_data, outcome):
    record = _read(_json_of_render(shared_data, **outcome))
    assert record.error is None
    trajectory = record.trajectory
    from_html = parse_render((shared_data / RENDER_3).read_text(encoding="utf-8"))
    assert [step.action for step in trajectory.steps] == [step.action for step in from_html.steps]
    assert len(trajectory.steps) == 8
    assert (trajectory.outcome.status, trajectory.outcome.reason, trajectory.outcome.message) == (
        "early_stop", "invalid_actions", "Early stop: Failed to parse actions for 3 times")
    assert trajectory.outcome.success == outcome.get("success")
    assert trajectory.final_answer is None


@pytest.mark.parametrize("document_outcome, extra, said", [
    ({"status": "answered"}, {}, "outcome.status is 'answered'"),
    ({"status": "na"}, {}, "outcome.status is 'na'"),
    ({"status": "early_stop"}, {"final_answer": "42"}, "final_answer is given"),
])
def test_a_file_saying_the_agent_answered_is_refused(shared_data, document_outcome, extra, said):
    document = {**_json_of_render(shared_data, **document_outcome), **extra}
    record = _read(document)
    assert record.trajectory is None
    assert record.error.where == "steps[8].action"
    assert "is the harness's forced stop (early stop, invalid_actions)" in record.error.message
    assert said in record.error.message


def test_a_reason_contradicting_the_stop_is_refused(shared_data):
    record = _read(_json_of_render(shared_data, status="early_stop", reason="max_steps"))
    assert record.error.where == "outcome.reason"
    assert "'max_steps' contradicts" in record.error.message


def test_steps_after_a_harness_stop_are_refused(shared_data):
    document = _json_of_render(shared_data, status="early_stop")
    document["steps"].append({"index": 10, "action": "click [5]"})
    record = _read(document)
    assert record.error.where == "steps[8].action"
    assert "1 step(s) follow it" in record.error.message


def test_the_agents_own_stop_stays_a_step(shared_data):
    document = _json_of_render(shared_data, status="answered")
    document["steps"][-1]["action"] = "stop [Early bird special]"
    record = _read(document)
    assert record.error is None
    assert len(record.trajectory.steps) == 9 and record.trajectory.outcome.status == "answered"
