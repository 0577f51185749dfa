import json

import pytest

from trajectories.formats.canonical import TrajectoryFormatError
from trajectories.formats.format_traces import align_outputs, looks_like_trace, parse_trace, task_id_from_name


@pytest.fixture
def trace_3(shared_data):
    return json.loads((shared_data / "results-sample" / "format_traces" / "task_3" / "3.json").read_text())


def test_the_real_trace_gives_the_verdict_and_one_output_per_record(trace_3):
    assert looks_like_trace(trace_3)
    trace = parse_trace(trace_3, "results/format_traces/task_3/3.json")
    assert (trace.task_id, trace.success, trace.verdict_field) == ("3", False, "meta_data.result")
    assert trace.intent == "What are the top-2 best-selling product in 2022"
    assert len(trace.model_outputs) == 9
    assert trace.model_outputs[-1] == "stop [Early stop: Failed to parse actions for 3 times]"


@pytest.mark.parametrize(("name", "task_id"), [
    ("format_traces/task_3/3.json", "3"), ("format_traces/12.json", "12"), ("results.zip/x/task_7/trace.json", "7"),
    ("3.json", "3"), ("format_traces/trace-3.json", ""),
])
def test_the_task_id_comes_from_the_file_name(name, task_id):
    assert task_id_from_name(name) == task_id


def test_both_verdict_endings(trace_3):
    records = trace_3[:-1]
    assert parse_trace([*records, {"result": "PASS"}], "format_traces/3.json").success is True
    assert parse_trace([*records, {"result": "fail"}], "format_traces/3.json").verdict_field == "result"
    no_verdict = parse_trace(records, "format_traces/3.json")
    assert (no_verdict.success, len(no_verdict.model_outputs)) == (None, 9)


def test_a_bad_verdict_names_its_field(trace_3):
    with pytest.raises(TrajectoryFormatError) as raised:
        parse_trace([*trace_3[:-1], {"meta_data": {"intent": "x", "result": "MAYBE"}}], "format_traces/3.json")
    assert raised.value.where == "[9].meta_data.result" and "PASS" in raised.value.message
    with pytest.raises(TrajectoryFormatError, match="no task id"):
        parse_trace(trace_3, "format_traces/trace-3.json")


def test_what_is_not_a_trace():
    assert not looks_like_trace([{"schema": "trajectory/v1", "task": {}, "steps": [], "outcome": {}}])
    assert not looks_like_trace({"result": "PASS"})
    assert not looks_like_trace([])
    assert looks_like_trace([{"result": "PASS"}])


def test_outputs_align_by_order_dropping_the_harness_stop():
    outputs = ["click [1]", "none", "stop [Early stop: Failed to parse actions for 3 times]"]
    assert align_outputs(outputs, 2, "Early stop: Failed to parse actions for 3 times") == outputs[:2]
    assert align_outputs(outputs, 3, "") == outputs
    assert align_outputs(outputs, 5, "") is None
    assert align_outputs(["click [1]", "stop [x]"], 1, "Early stop: x") is None
