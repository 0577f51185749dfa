"""Agent-E's evaluation records, read from the real excerpts in shared/data/agent-outputs/agent-e."""

import json

import pytest
from hypothesis import given, settings, strategies as st

from trajectories.formats import agent_e
from trajectories.formats.canonical import TASK_ID_MAX_LENGTH, TrajectoryFormatError
from trajectories.formats.readers import read_records

TEXT = "text_main_chat_eval_gpt4o.excerpt.json"
VISION = "vision_final_eval_gpt4o.excerpt.json"


@pytest.fixture(scope="module")
def folder(shared_data):
    return shared_data / "agent-outputs" / "agent-e"


def _trajectories(folder, name):
    with (folder / name).open("rb") as stream:
        records = list(read_records(f"agent-e/{name}", stream, 10_000_000))
    assert {record.format for record in records} == {agent_e.FORMAT}
    assert [record.error for record in records] == [None] * len(records)
    return [record.trajectory for record in records]


def test_each_record_is_a_results_only_trajectory_with_its_verdicts(folder):
    trajectories = _trajectories(folder, TEXT)
    assert [t.task.task_id for t in trajectories] == [f"Allrecipes--{number}" for number in range(30)]
    first = trajectories[0]
    assert (first.task.benchmark, first.steps, first.run.agent, first.run.name) == (
        "webvoyager", [], "Agent-E", "text_main_chat_eval_gpt4o")
    assert first.task.intent == ("Provide a recipe for vegetarian lasagna with more than 100 reviews and a rating of "
                                 "at least 4.5 stars suitable for 6 people.")
    assert first.final_answer.startswith("Here is a recipe for Vegetarian Four Cheese Lasagna suitable for 6 people")
    assert (first.outcome.status, first.outcome.success) == ("answered", None)
    assert first.outcome.message == "last URL https://www.allrecipes.com/recipe/21090/vegetarian-four-cheese-lasagna/"
    assert (first.duration, first.cost, first.tokens_in, first.tokens_out) == (
        145.61596012115479, 0.19763000000000003, 17390, 791)
    human, judge = first.verdicts
    assert (human.kind, human.name, human.success) == ("human", "Agent-E human evaluators", True)
    assert (judge.kind, judge.name, judge.model, judge.success) == ("llm_judge", "Agent-E text GPT-4o judge",
                                                                    "gpt-4o", True)


# Numbers and ids as Agent-E's test/tasks/webvoyager_test.json pairs them (task_index, task_alias).
@pytest.mark.parametrize("number, start_url, task_id", [
    (44, "https://www.allrecipes.com/", "Allrecipes--44"),
    (45, "https://www.amazon.com/", "Amazon--0"),
    (91, "https://www.apple.com/", "Apple--5"),
    (157, "https://arxiv.org/", "ArXiv--28"),
    (203, "https://www.bbc.com/news/", "BBC News--31"),
    (213, "https://www.bbc.com/news/", "BBC News--41"),
    (214, "https://www.booking.com/", "Booking--0"),
    (258, "https://dictionary.cambridge.org/", "Cambridge Dictionary--0"),
    (316, "https://www.coursera.org/", "Coursera--15"),
    (359, "https://www.espn.com/", "ESPN--16"),
    (403, "https://github.com/", "GitHub--16"),
    (452, "https://www.google.com/travel/flights/", "Google Flights--24"),
    (498, "https://www.google.com/maps/", "Google Map--28"),
    (511, "https://www.google.com/", "Google Search--0"),
    (574, "https://huggingface.co/", "Huggingface--20"),
    (642, "https://www.wolframalpha.com/", "Wolfram Alpha--45"),
    # not WebVoyager's task of that number: Agent-E's number as it is
    (45, "https://www.allrecipes.com/", "45"),
    (643, "https://www.wolframalpha.com/", "643"),
])
def test_agent_e_numbers_are_webvoyager_ids(number, start_url, task_id):
    assert agent_e.webvoyager_task_id(number, start_url) == task_id


def test_the_human_and_the_judge_may_disagree(folder):
    second = _trajectories(folder, TEXT)[2]
    human, judge = second.verdicts
    assert human.success is False and human.explanation.startswith("After reviewing the first three vegetarian")
    assert judge.success is True
    # The task the judge did not evaluate has the human verdict only.
    assert [v.kind for v in _trajectories(folder, TEXT)[1].verdicts] == ["human"]


def test_counts_of_the_verdicts_in_both_files(folder):
    text, vision = _trajectories(folder, TEXT), _trajectories(folder, VISION)
    assert sum(t.verdicts[0].success for t in text) == 21
    judged = [t.verdicts[1].success for t in text if len(t.verdicts) == 2]
    assert (len(judged), sum(judged)) == (15, 15)
    judged = [t.verdicts[1] for t in vision if len(t.verdicts) == 2]
    assert (len(judged), sum(v.success for v in judged)) == (15, 7)
    assert judged[0].name == "Agent-E vision GPT-4o judge"
    assert judged[0].explanation.startswith("The workflow was successfully completed as it met all the criteria")


@pytest.mark.parametrize("change, where", [
    ({"score": "yes"}, "score"),
    ({"pred_score": True}, "pred_score"),
    ({"compute_cost": {"cost": "free"}}, "compute_cost.cost"),
    ({"compute_cost": {"prompt_tokens": 1.5}}, "compute_cost.prompt_tokens"),
    ({"tct": "long"}, "tct"),
    ({"task_id": None}, "task_id"),
    ({"task_id": "9" * (TASK_ID_MAX_LENGTH + 1)}, "task_id"),
])
def test_a_bad_record_names_its_field(folder, change, where):
    record = {**json.loads((folder / TEXT).read_text())[0], **change}
    with pytest.raises(TrajectoryFormatError) as error:
        agent_e.parse_record(record, TEXT)
    assert error.value.where == where


@pytest.mark.parametrize("score", [0.5, -0.1])
def test_a_score_other_than_0_or_1_is_unsure_kept_as_a_label_and_reported(folder, score):
    record = {**json.loads((folder / TEXT).read_text())[0], "score": score}
    trajectory, problems = agent_e.parse_record(record, TEXT)
    assert (trajectory.verdicts[0].success, trajectory.verdicts[0].label) == (None, f"score {score:g}")
    assert problems == [f"score: {score:g} is neither 1 (success) nor 0 (failure): read as unsure"]


def test_negative_cost_and_tokens_are_unknown(folder):
    """Agent-E writes -1 where it did not count."""
    record = {**json.loads((folder / TEXT).read_text())[0],
              "compute_cost": {"cost": -1, "total_tokens": -1, "prompt_tokens": -1, "completion_tokens": 12}}
    trajectory, problems = agent_e.parse_record(record, TEXT)
    assert (trajectory.cost, trajectory.tokens_in, trajectory.tokens_out, problems) == (None, None, 12, [])


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=20),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=12)


@settings(max_examples=300, deadline=None)
@given(record=st.fixed_dictionaries({"task_id": _json, "intent": _json, "last_statement": _json, "score": _json},
                                    optional={"pred_score": _json, "pred_reason": _json, "reason": _json,
                                              "tct": _json, "compute_cost": _json, "last_url": _json}) | _json)
def test_any_record_is_read_or_refused_with_a_message(record):
    try:
        trajectory, _ = agent_e.parse_record(record, "agent-e/x.json")
    except TrajectoryFormatError as error:
        assert error.message
    else:
        assert trajectory.task.benchmark == "webvoyager" and trajectory.steps == []
