"""Failure labels and speakers in `trajectory/v1` files."""

import json

from trajectories.formats.canonical import FailureLabel

from .test_readers import _document, _read


def test_a_label_and_a_speaker_are_read():
    document = _document(failure_labels=[{"source": "paper annotators", "step": 2, "agent": "WebSurfer",
                                          "failure_type": "looped", "reason": "clicked the same link"}])
    document["steps"][0]["agent"] = "WebSurfer"

    [record] = _read("t.json", json.dumps(document).encode())

    assert record.error is None
    assert record.trajectory.failure_labels == [FailureLabel("paper annotators", 2, "WebSurfer", "looped",
                                                             "clicked the same link")]
    assert [step.agent for step in record.trajectory.steps] == ["WebSurfer", ""]


def test_a_label_on_no_step_of_the_trajectory_is_refused():
    [record] = _read("t.json", json.dumps(_document(failure_labels=[{"source": "a", "step": 3}])).encode())

    assert record.error.where == "failure_labels[0].step"
    assert "decisive step 3 is not one of the trajectory's steps" in record.error.message


def test_a_second_label_of_one_source_is_refused():
    labels = [{"source": "a", "step": 1}, {"source": "b"}, {"source": "a", "step": 2}]

    [record] = _read("t.json", json.dumps(_document(failure_labels=labels)).encode())

    assert record.error.where == "failure_labels[2]"
    assert "failure_labels[0] is the first" in record.error.message


def test_a_speaker_beyond_200_characters_is_refused_by_the_schema():
    document = _document()
    document["steps"][0]["agent"] = "x" * 201

    [record] = _read("t.json", json.dumps(document).encode())

    assert record.error is not None and record.error.where == "steps[0].agent"
