"""The content hash is stored with every trajectory: a re-import is recognised as unchanged only
if the same content hashes to the same value as when it was first imported."""

import dataclasses
import hashlib
import json

import pytest

from trajectories.formats.readers import prepare, read_records

from .test_readers import _document, _read


# Fields added since: they enter the hash only when set, so older trajectories keep theirs.
LATER_FIELDS = ("verdicts", "failure_labels", "tokens_in", "tokens_out", "cost", "duration", "agent")
LATER_PARTS = ("selector", "x", "y", "delta_x", "delta_y")


def _hash_as_first_defined(trajectory) -> str:
    body = dataclasses.asdict(trajectory)
    body.pop("run")
    for part in (body, *body["steps"]):
        for name in LATER_FIELDS:
            assert part.pop(name, None) in (None, [], "")
    for step in body["steps"]:
        for name in LATER_PARTS:
            assert step["action_parts"].pop(name) in (None, "")
    assert body["outcome"].pop("source") == ""
    assert body["task"].pop("reference_answer") == ""
    encoded = json.dumps(body, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(encoded.encode("utf-8")).hexdigest()


def test_the_hash_is_the_one_first_defined_for_every_field_a_trajectory_holds():
    document = _document(plan=["Open reports", "Read ✓ total"], run={"agent": "a", "meta": {"k": [1, {"n": None}]}})
    document["steps"][0].update(url="http://shop/", prev_action="none", action_parts=None)
    document["outcome"] = {"status": "early_stop", "reason": "max_steps", "success": False, "message": "stopped"}
    [record] = _read("t.json", json.dumps(document).encode())
    prepare(record, None)
    assert record.error is None
    assert record.content_hash == _hash_as_first_defined(record.trajectory)
    assert record.trajectory.to_dict() == dataclasses.asdict(record.trajectory)


def test_usage_and_verdicts_count_in_the_hash_once_set():
    [record] = _read("t.json", json.dumps(_document()).encode())
    prepare(record, None)
    before = record.content_hash
    document = _document(verdicts=[{"kind": "agent_self_report", "name": "agent self-report", "success": True}])
    document["steps"][0]["tokens_in"] = 120
    [changed] = _read("t.json", json.dumps(document).encode())
    prepare(changed, None)
    assert changed.error is None
    assert changed.content_hash != before
    assert changed.trajectory.verdicts[0].success is True
    assert changed.trajectory.steps[0].tokens_in == 120


def test_a_speaker_failure_label_or_reference_answer_counts_in_the_hash_once_set():
    hashes = set()
    for agent, labels, answer in (("", [], ""), ("WebSurfer", [], ""),
                                  ("", [{"source": "Who&When annotators", "step": 1}], ""), ("", [], "8")):
        document = _document(failure_labels=labels)
        document["steps"][0]["agent"] = agent
        document["task"]["reference_answer"] = answer
        [record] = _read("t.json", json.dumps(document).encode())
        prepare(record, None)
        assert record.error is None
        hashes.add(record.content_hash)
    assert len(hashes) == 4


def test_a_point_or_selector_counts_in_the_hash_once_set():
    hashes = set()
    for extra in ({}, {"x": 10, "y": 20}, {"x": 10, "y": 21}, {"selector": "input#q"}, {"delta_x": 0, "delta_y": 0}):
        document = _document()
        document["steps"][0]["action_parts"] = {"type": "click", **extra}
        [record] = _read("t.json", json.dumps(document).encode())
        prepare(record, None)
        assert record.error is None
        hashes.add(record.content_hash)
    assert len(hashes) == 5


@pytest.mark.parametrize("name, digest", [
    ("gpt4turbo_render_0.html", "fbd99c8b0aac87bc7f9a8def2a6eedd248b565784a72f47b8050018ce2bed49f"),
    ("llama3-8b_render_3.html", "38f90e8b4183954a67a509ab3493bf23f58b1c6d6b71ddd385e4a178e32adea5"),
    ("llama3-8b_render_6.html", "962375d32513a2ab9373b6bc28a5c99dd4cf687400aa15c39d7cb8caa3954fd6"),
])
def test_the_real_render_files_keep_the_hash_they_were_stored_with(samples, name, digest):
    with (samples / name).open("rb") as stream:
        [record] = [prepare(record, None) for record in read_records(name, stream, 1 << 30)]
    assert record.content_hash == digest
