import io
import json

from trajectories.formats.readers import NOT_UTF8, read_records


def _document(task_id="3", **overrides):
    document = {
        "schema": "trajectory/v1",
        "run": {"agent": "my-agent", "model": "my-model"},
        "task": {"task_id": task_id},
        "steps": [
            {"index": 1, "action": "click [12] where [12] is link 'Reports'",
             "reasoning": "Open the reports. ```click [12]```", "observation": "[12] link 'Reports'"},
            {"index": 2, "action": "stop [42]", "planned_action": None},
        ],
        "final_answer": "42",
        "outcome": {"status": "answered"},
    }
    document.update(overrides)
    return document


def _read(name, data: bytes, max_bytes=1 << 20):
    return list(read_records(name, io.BytesIO(data), max_bytes))


def test_a_json_document_with_what_the_writer_may_leave_out_derived():
    [record] = _read("t.json", json.dumps(_document()).encode())
    assert record.error is None and record.format == "trajectory_v1_json"
    first, second = record.trajectory.steps
    assert first.planned_action == "click [12]"  # derived from the reasoning when not given
    assert second.planned_action is None  # given as null: kept
    assert (first.action_parts.type, first.action_parts.element_label) == ("click", "link 'Reports'")
    assert record.trajectory.run.agent == "my-agent"


def test_the_parts_of_an_action_by_coordinates_read_as_written():
    document = _document()
    document["steps"][0] = {"index": 1, "action": "Scroll (delta_x=0, delta_y=400)",
                            "action_parts": {"type": "scroll", "value": "down", "x": 640, "y": 400.5, "delta_x": 0,
                                             "delta_y": 400, "selector": "main > div.results"}}
    [record] = _read("t.json", json.dumps(document).encode())
    parts = record.trajectory.steps[0].action_parts
    assert (parts.x, parts.y, parts.delta_x, parts.delta_y, parts.selector) == (640, 400.5, 0, 400, "main > div.results")
    assert record.trajectory.to_dict()["steps"][0]["action_parts"]["delta_y"] == 400

    document["steps"][0]["action_parts"]["x"] = "640"
    [record] = _read("t.json", json.dumps(document).encode())
    assert record.error.where == "steps[0].action_parts.x" and "is not of type 'number', 'null'" in record.error.message


def test_errors_name_the_path_of_the_bad_field():
    bad = _document()
    del bad["steps"][1]["action"]
    [record] = _read("t.json", json.dumps(bad).encode())
    assert record.trajectory is None
    assert record.error.where == "steps[1]"
    assert "'action' is a required property" in record.error.message

    [record] = _read("t.json", json.dumps(_document(outcome={"status": "finished"})).encode())
    assert record.error.where == "outcome.status"

    [record] = _read("t.json", json.dumps(_document(outcome={"status": "answered", "reason": "max_steps"})).encode())
    assert record.error.where == "outcome.reason"


def test_step_indexes_must_increase():
    document = _document()
    document["steps"][1]["index"] = 1
    [record] = _read("t.json", json.dumps(document).encode())
    assert record.error.where == "steps[1].index"


def test_a_json_list_is_many_trajectories_each_failing_alone():
    broken = _document("4")
    broken["steps"][0]["index"] = 0
    records = _read("run.json.txt.json", json.dumps([_document("3"), broken]).encode())
    assert [record.key for record in records] == ["[0]", "[1]"]
    assert records[0].trajectory.task.task_id == "3"
    assert records[1].error.where == "[1].steps[0].index"


def test_jsonl_lines_fail_alone_with_their_line_number():
    lines = [
        json.dumps(_document("3")),
        "",
        '{"schema": "trajectory/v1", "task": {"task_id": "4"}, ',
        json.dumps(_document("5", steps="none")),
        json.dumps(_document("6")),
    ]
    records = _read("run.jsonl", "\n".join(lines).encode())
    assert [record.line for record in records] == [1, 3, 4, 5]
    assert records[0].trajectory.task.task_id == "3"
    assert records[1].error.line == 3 and "invalid JSON" in records[1].error.message
    assert (records[2].error.line, records[2].error.where) == (4, "steps")
    assert records[3].trajectory.task.task_id == "6"


def test_jsonl_lines_over_the_limit_are_refused_unread():
    long_line = json.dumps(_document("3", final_answer="x" * 5000))
    records = _read("run.jsonl", f"{long_line}\n{json.dumps(_document('4'))}\n".encode(), max_bytes=2000)
    assert records[0].error.line == 1 and "longer than the limit" in records[0].error.message
    assert records[1].trajectory.task.task_id == "4"


def test_invalid_json_names_the_line():
    [record] = _read("t.json", b'{\n  "schema": "trajectory/v1",\n  "task": }\n')
    assert record.error.line == 3
    assert record.error.message.startswith("invalid JSON")


def test_unknown_json_shapes_are_named():
    [record] = _read("t.json", b'{"hello": "world"}')
    assert "html2json" in record.error.message and "trajectory/v1" in record.error.message


def test_text_that_is_not_utf8_is_decoded_leniently():
    document = _document(final_answer="caf\u00e9")
    data = json.dumps(document, ensure_ascii=False).encode("latin-1")
    [record] = _read("t.json", data)
    assert record.trajectory.final_answer == "caf\ufffd"
    assert record.notes == (NOT_UTF8,)


def test_html2json_and_render_files(shared_data):
    html2json = {"example_7": {"task_id": 7, "intent": "x", "messages": [], "success": False}}
    [record] = _read("json_dump.json", json.dumps(html2json).encode())
    assert record.format == "webarena_html2json" and record.key == "example_7"
    assert record.trajectory.outcome.status == "crashed"

    sample = shared_data / "trajectory-samples" / "llama3-8b_render_6.html"
    [record] = _read(sample.name, sample.read_bytes(), max_bytes=10 << 20)
    assert record.format == "webarena_render"
    assert record.trajectory.outcome.status == "na"

    [record] = _read("page.html", b"<html><body>a web page</body></html>")
    assert "not a WebArena render file" in record.error.message
