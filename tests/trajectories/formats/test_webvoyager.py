"""WebVoyager task folders read from the real sample (shared/data/agent-outputs/webvoyager), values
pinned from the file."""

import json

import pytest
from hypothesis import given, settings, strategies as st

from trajectories.formats import webvoyager
from trajectories.formats.canonical import TrajectoryFormatError
from trajectories.formats.readers import read_file
from trajectories.formats.sources import Catalogue, Limits

LIMITS = Limits(max_files=100, max_total_bytes=1 << 30, max_file_bytes=1 << 26, max_compression_ratio=100)


def _record(folder):
    with Catalogue([folder], LIMITS) as catalogue:
        [source] = [source for source in catalogue if source.kind == "trajectories"]
        [record] = read_file(source, LIMITS.max_file_bytes)
    return record


def test_the_sample_task_folder(shared_data):
    record = _record(shared_data / "agent-outputs" / "webvoyager" / "taskGitHub--0")
    assert record.error is None and record.format == "webvoyager_messages" and record.notes == ()
    trajectory = record.trajectory
    assert (trajectory.task.benchmark, trajectory.task.task_id) == ("webvoyager", "GitHub--0")
    assert trajectory.task.intent == ("Search for an open-source project related to 'climate change data "
                                      "visualization' on GitHub and report the project with the most stars.")
    assert [step.action for step in trajectory.steps] == [
        "Click [5]", "Type [0]; climate change data visualization", "Click [29]", "Click [52]",
        "ANSWER; resource-watch/resource-watch with 63 stars"]
    # Set-of-marks labels are kept as element ids, named where the message before lists the labelled
    # elements (steps 3 and 4; WebVoyager left the list out of the first two messages).
    assert [(s.action_parts.type, s.action_parts.element_id, s.action_parts.element_label)
            for s in trajectory.steps[:4]] == [("click", "5", ""), ("type", "0", ""),
                                               ("click", "29", '<button> "Sort by: Best match"'),
                                               ("click", "52", '"Most stars"')]
    assert trajectory.steps[1].action_parts.press_enter is True
    assert trajectory.steps[0].reasoning.startswith("The search functionality is available in element [5]")
    # What the model saw: left out of the context for the first steps, the element list after.
    assert [bool(step.observation) for step in trajectory.steps] == [False, False, True, True, True]
    assert '[52]: "Most stars"' in trajectory.steps[3].observation
    assert trajectory.final_answer == "resource-watch/resource-watch with 63 stars"
    assert (trajectory.outcome.status, trajectory.outcome.success) == ("answered", None)
    assert len(record.images) == 5 and len({step.screenshot for step in trajectory.steps}) == 5


@pytest.mark.parametrize(("action", "expected"), [
    ("Scroll [WINDOW]; down", ("scroll", "", "down")),
    ("Scroll [12]; up", ("scroll", "12", "up")),
    ("Type [3]; [new york]", ("type", "3", "new york")),
    ("GoBack", ("go_back", "", "")),
    ("Google", ("goto", "", "https://www.google.com/")),
    ("Wait", ("none", "", "")),
    ("ANSWER; [42]", ("stop", "", "42")),
    ("ANSWER; a [b] c", ("stop", "", "a [b] c")),
    ("Dance [3]", ("none", "", "")),
])
def test_action_kinds(action, expected):
    parts = webvoyager.action_parts(action)
    assert (parts.type, parts.element_id, parts.value) == expected


def test_a_mark_is_named_as_the_observation_lists_it():
    observation = 'Look.\n[1]: <button> "Product";\t[38]: "63", "63 stars";\t[4]: "Pricing";'
    assert webvoyager.action_parts("Click [38]", observation).element_label == '"63", "63 stars"'
    assert webvoyager.action_parts("Type [4]; x", observation).element_label == '"Pricing"'
    assert webvoyager.action_parts("Scroll [1]; down", observation).element_label == '<button> "Product"'
    assert webvoyager.action_parts("Click [3]", observation).element_label == ""  # not listed


def test_a_missing_screenshot_is_a_note_and_no_answer_is_no_stop(tmp_path):
    folder = tmp_path / "taskAllrecipes--3"
    folder.mkdir()
    (folder / "interact_messages.json").write_text(json.dumps([
        {"role": "system", "content": "..."},
        {"role": "user", "content": "Now given a task: Find a vegan lasagna recipe.  Please interact with "
                                    "https://www.allrecipes.com/ and get the answer. Observation: ..."},
        {"role": "assistant", "content": "Thought: search.\nAction: Type [2]; vegan lasagna"},
    ]))
    record = _record(folder)
    trajectory = record.trajectory
    assert (trajectory.task.task_id, trajectory.task.intent) == ("Allrecipes--3", "Find a vegan lasagna recipe.")
    assert record.notes == ("step 1: screenshot1.png is not beside interact_messages.json",)
    assert (trajectory.outcome.status, trajectory.final_answer) == ("no_stop", None)


def test_a_plain_chat_list_is_not_taken_for_webvoyagers():
    assert not webvoyager.looks_like_interact_messages([{"role": "user", "content": "hi"}])
    assert not webvoyager.looks_like_interact_messages([{"schema": "trajectory/v1"}])


_CONTENT = st.text(max_size=40) | st.sampled_from(["Thought: t\nAction: Click [3]", "Action: Type [2]; [x", "Action:",
                                                   "Now given a task: q  Please interact with s and get the answer.",
                                                   "Action: ANSWER;", "Action: Scroll [WINDOW];"])
_MESSAGE = st.fixed_dictionaries({"role": st.sampled_from(["system", "user", "assistant", "tool"]),
                                  "content": _CONTENT | st.none() | st.lists(st.dictionaries(
                                      st.sampled_from(["type", "text", "image_url"]), _CONTENT | st.integers()))})


@settings(max_examples=300, deadline=None)
@given(messages=st.lists(_MESSAGE, max_size=6))
def test_any_chat_is_read_or_refused_with_a_format_error(messages):
    if not webvoyager.looks_like_interact_messages(messages):
        return
    try:
        trajectory, _ = webvoyager.parse_interact_messages(messages, "run/task1/interact_messages.json",
                                                           lambda name: b"")
    except TrajectoryFormatError:
        return
    assert len(trajectory.steps) == sum(message["role"] == "assistant" for message in messages)
