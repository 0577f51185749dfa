"""The Who&When reader on the shared logs (both layouts) and on odd ones."""

import json

import pytest

from trajectories.formats.canonical import TrajectoryFormatError
from trajectories.formats.who_and_when import LABEL_SOURCE, benchmark_of, looks_like_log, parse_log, speaker_agent


@pytest.fixture
def logs(shared_data):
    return shared_data / "failure-attribution" / "who-and-when"


def _log(logs, name):
    return json.loads((logs / name).read_text(encoding="utf-8"))


def test_a_hand_crafted_log_is_one_step_per_message_with_its_speaker(logs):
    trajectory = parse_log(_log(logs, "hand-crafted/1.json"))

    assert (trajectory.task.benchmark, trajectory.task.task_id[:12]) == ("assistantbench", "6e3be83d1949")
    assert trajectory.task.intent.startswith("Where can I take martial arts classes within a five-minute walk")
    assert trajectory.task.reference_answer == "Renzo Gracie Jiu-Jitsu Wall Street"
    assert len(trajectory.steps) == 29
    assert [(s.index, s.agent, s.action) for s in trajectory.steps[:4]] == [
        (1, "human", "human"), (2, "Orchestrator", "Orchestrator (thought)"),
        (3, "Orchestrator", "Orchestrator (thought)"), (4, "Orchestrator", "Orchestrator (-> WebSurfer)")]
    step = trajectory.steps[12]
    assert (step.agent, step.action_parts.type) == ("WebSurfer", "message")
    assert step.reasoning.startswith("I clicked 'NY Jidokwan Taekwondo'.")
    assert step.url.startswith("https://www.keyence.com.tw/")
    assert trajectory.final_answer == "Alliance Jiu Jitsu, NY Jidokwan Taekwondo"
    assert (trajectory.outcome.status, trajectory.outcome.success) == ("answered", False)
    [label] = trajectory.failure_labels
    # mistake_step "12" is the 13th message, WebSurfer's click on an irrelevant site.
    assert (label.source, label.step, label.agent) == (LABEL_SOURCE, 13, "WebSurfer")
    assert label.reason == "WebSurfer clicks on an irrelevant website and disrupts the task-solving process."
    assert trajectory.run.agent == "Magentic-One" and trajectory.run.meta == {"layout": "hand-crafted"}


def test_an_algorithm_generated_log_names_its_speakers_in_name(logs):
    trajectory = parse_log(_log(logs, "algorithm-generated/1.json"))

    assert (trajectory.task.benchmark, trajectory.task.task_id) == ("gaia", "4d51c4bf-4b0e-4f3d-897b-3f6687a7d9f2")
    assert trajectory.task.reference_answer == "8"
    assert [s.agent for s in trajectory.steps] == ["Excel_Expert", "Computer_terminal", "BusinessLogic_Expert",
                                                   "Computer_terminal", "DataVerification_Expert",
                                                   "DataVerification_Expert"]
    assert trajectory.steps[5].reasoning == "TERMINATE"
    assert trajectory.final_answer is None and trajectory.outcome.status == "no_stop"
    [label] = trajectory.failure_labels
    assert (label.step, label.agent) == (1, "Excel_Expert")
    assert trajectory.run.agent == "CaptainAgent"
    assert trajectory.run.meta == {"layout": "algorithm-generated", "gaia_level": "2"}


def test_a_mistake_type_is_kept_in_the_reason(logs):
    [label] = parse_log(_log(logs, "hand-crafted/3.json")).failure_labels

    assert label.reason.endswith("(mistake type: Tool failure)")


def test_every_shared_log_is_read_with_its_label_on_a_step_of_the_labelled_agent_or_noted(logs):
    read = {path.relative_to(logs).as_posix(): parse_log(json.loads(path.read_text(encoding="utf-8")))
            for path in sorted(logs.glob("*/*.json"))}

    assert len(read) == 30
    assert sum(len(t.steps) for t in read.values()) == 1216  # 1,135 messages hand-crafted, 81 generated
    # In one hand-crafted log the annotators' step is the Orchestrator's request to the WebSurfer they blame.
    mismatched = [name for name, t in read.items()
                  if t.steps[t.failure_labels[0].step - 1].agent != t.failure_labels[0].agent]
    assert mismatched == ["hand-crafted/20.json"]
    assert {t.task.benchmark for t in read.values()} == {"gaia", "assistantbench"}


@pytest.mark.parametrize(("change", "where", "message"), [
    ({"mistake_step": "6"}, "mistake_step", "not the index of one of the 6 messages"),
    ({"mistake_step": "two"}, "mistake_step", "'two' is not the index"),
    ({"question_ID": "q-7"}, "question_ID", "neither a GAIA id"),
    ({"history": []}, "history", "no messages"),
    ({"history": [{"content": "hi", "role": ""}]}, "history[0]", "names no speaker"),
    ({"history": [{"content": ["x"], "role": "user", "name": "A"}]}, "history[0].content", "expected text"),
])
def test_a_bad_log_is_refused_naming_the_field(logs, change, where, message):
    document = {**_log(logs, "algorithm-generated/1.json"), **change}

    with pytest.raises(TrajectoryFormatError, match=message) as raised:
        parse_log(document)
    assert raised.value.where == where


def test_a_log_without_labels_has_none():
    document = {"history": [{"content": "hello", "role": "user", "name": "A"}], "question": "Q?",
                "question_ID": "4d51c4bf-4b0e-4f3d-897b-3f6687a7d9f2"}

    assert looks_like_log(document)
    assert parse_log(document).failure_labels == []


def test_speakers_and_ids():
    assert speaker_agent("Orchestrator (-> WebSurfer)") == "Orchestrator"
    assert speaker_agent("(thought)") == "(thought)"
    assert benchmark_of("a" * 64) == "assistantbench"
