"""Published verdicts read from the real files in shared (counts taken from the files by hand) and
from AgentRewardBench's documented layout."""

import json
from collections import Counter

import pytest

from tests.trajectories.verdict_samples import JUDGE_AGENT, judge_completion, judge_file

from trajectories.formats.published_verdicts import (
    NOT_EXECUTABLE, UNSURE, RecordProblem, agent_reward_bench_judge_files, judge_answer, read_verdict_file,
)
from trajectories.formats.verdict_files import VerdictFileError

OM2W = "agent-outputs/online-mind2web"
WEBJUDGE = f"{OM2W}/WebJudge_Online_Mind2Web_eval_gpt-4o-mini_score_threshold_3_auto_eval_results.json"


def _read(shared_data, relative, **options):
    path = shared_data / relative
    return read_verdict_file(path.name, path.read_bytes(), **options)


def test_online_mind2web_human_labels_one_run_per_agent_with_not_executable_kept(shared_data):
    verdicts = _read(shared_data, f"{OM2W}/human_label.excerpt.json")
    assert verdicts.format == "online_mind2web_human_labels"
    assert [(source.kind, source.name) for source in verdicts.sources] == [("human", "Online-Mind2Web human labels")]
    by_agent = Counter((record.run, record.success) for record in verdicts.records)
    # 30 tasks x 6 agents; Operator's column holds three 2s (task not executable).
    assert len(verdicts.records) == 180
    assert by_agent[("Operator", True)] == 23 and by_agent[("Operator", False)] == 4
    assert by_agent[("Operator", None)] == 3
    assert by_agent[("Claude Computer Use 3.7", True)] == 25
    assert by_agent[("Agent-E", True)] == by_agent[("Agent-E", False)] == 15
    assert {record.run for record in verdicts.records} == {
        "Operator", "Agent-E", "Browser Use", "Claude Computer Use 3.5", "Claude Computer Use 3.7", "SeeAct"}
    not_executable = [record for record in verdicts.records if record.success is None]
    assert {record.label for record in not_executable} == {NOT_EXECUTABLE}
    first = verdicts.records[0]
    assert (first.task_id, first.run, first.success) == ("b7258ee05d75e6c50673a59914db412e", "Operator", True)


def test_a_human_label_outside_0_1_2_refuses_the_file():
    data = b'[{"task_id": "a", "Operator_human_label": "3"}]'
    with pytest.raises(VerdictFileError, match="item 1: Operator_human_label: '3' is not 1"):
        read_verdict_file("human_label.json", data)


def test_webjudge_json_lines_keep_the_judges_reasoning_key_points_and_screenshot_scores(shared_data):
    verdicts = _read(shared_data, WEBJUDGE)
    [source] = verdicts.sources
    assert (source.kind, source.name, source.model, source.threshold) == (
        "llm_judge", "WebJudge gpt-4o-mini", "gpt-4o-mini", 3.0)
    [record] = verdicts.records
    assert (record.task_id, record.success) == ("browser_use_search_flights", True)
    assert record.explanation.startswith("Thoughts: The agent successfully navigated to the flight search page")
    assert "Key points:" in record.explanation and "Arrival location: SFO." in record.explanation
    assert "Screenshot scores: 3, 4, 3, 4, 5" in record.explanation


def test_webjudge_lines_in_a_file_named_json_are_read_line_by_line(shared_data):
    line = (shared_data / WEBJUDGE).read_bytes().strip()
    two = line + b"\n" + line.replace(b'"predicted_label": 1', b'"predicted_label": 0')
    verdicts = read_verdict_file("WebJudge_x_eval_o4-mini_score_threshold_3_auto_eval_results.json", two)
    assert [record.success for record in verdicts.records] == [True, False]
    assert [record.line for record in verdicts.records] == [1, 2]
    assert verdicts.sources[0].name == "WebJudge o4-mini"


def test_browser_use_judge_scores_against_the_threshold(shared_data):
    folder = shared_data / OM2W / "browser_use_cloud"
    results = {path.parent.name: read_verdict_file("result.json", path.read_bytes())
               for path in folder.glob("*/result.json")}
    records = [record for verdicts in results.values() for record in verdicts.records]
    # 15 results: fourteen judged 100, one judged 0.
    assert Counter(record.score for record in records) == {100.0: 14, 0.0: 1}
    assert Counter(record.success for record in records) == {True: 14, False: 1}
    assert {record.source.threshold for record in records} == {50.0}
    assert all(record.task_id == folder_name for folder_name, verdicts in results.items()
               for record in verdicts.records)
    strict = read_verdict_file("result.json", b'{"task_id": "t", "judge": {"score": 65, "reasoning": "close"}}',
                               threshold=60)
    assert (strict.records[0].success, strict.records[0].explanation) == (True, "close")


def test_a_result_without_a_judge_is_not_a_verdict_file(shared_data):
    path = shared_data / OM2W / "abp_run" / "0059adc6b12a3822305deb68929b2de8" / "result.json"
    assert read_verdict_file("result.json", path.read_bytes()) is None


@pytest.mark.parametrize("name, judged, judge_yes, human_yes, judge_name", [
    ("text_main_chat_eval_gpt4o.excerpt.json", 15, 15, 21, "Agent-E text GPT-4o judge"),
    ("vision_final_eval_gpt4o.excerpt.json", 15, 7, 21, "Agent-E vision GPT-4o judge"),
])
def test_agent_e_records_give_the_human_and_the_judge_verdicts(shared_data, name, judged, judge_yes, human_yes,
                                                               judge_name):
    """Sources and tasks named as `import_trajectories` names them (WebVoyager's task ids)."""
    verdicts = _read(shared_data, f"agent-outputs/agent-e/{name}")
    humans = [record for record in verdicts.records if record.source.kind == "human"]
    judge = [record for record in verdicts.records if record.source.kind == "llm_judge"]
    assert len(humans) == 30 and sum(record.success for record in humans) == human_yes
    assert len(judge) == judged and sum(record.success for record in judge) == judge_yes
    assert judge[0].source.name == judge_name and judge[0].source.model == "gpt-4o"
    assert verdicts.notes == ["15 record(s) without a judge score (pred_score): the judge's verdict is left out"]
    assert humans[0].task_id == "Allrecipes--0"


ANNOTATIONS = """annotator_name,benchmark,task_id,model_name,exp_name,trajectory_success,trajectory_side_effect,trajectory_optimality,trajectory_looping
ann-a,webarena,webarena.10,GPT-4o,GenericAgent-gpt-4o,Successful,No,4. Completely Optimal,No
ann-b,webarena,webarena.10,GPT-4o,GenericAgent-gpt-4o,Unsuccessful,No,2. Suboptimal,Yes
ann-a,assistantbench,assistantbench.validation.3,Claude,GenericAgent-claude,Unsure,Yes,1. Complete Failure,No
"""


def test_agent_reward_bench_annotations_one_record_per_annotator_and_trajectory():
    verdicts = read_verdict_file("annotations.csv", ANNOTATIONS.encode())
    assert verdicts.format == "agent_reward_bench_annotations"
    assert [source.name for source in verdicts.sources] == ["AgentRewardBench experts"]
    first, second, third = verdicts.records
    assert (first.grader, first.benchmark, first.task_id, first.agent_model, first.run, first.success) == (
        "ann-a", "webarena", "webarena.10", "GPT-4o", "GenericAgent-gpt-4o", True)
    assert first.labels == {"side_effect": "No", "optimality": "4. Completely Optimal", "looping": "No"}
    assert (second.grader, second.success, second.labels["looping"]) == ("ann-b", False, "Yes")
    assert (third.success, third.label) == (None, UNSURE)


def test_agent_reward_bench_annotation_with_an_unknown_success_word_names_the_line():
    bad = ANNOTATIONS.replace("Unsuccessful", "Maybe")
    with pytest.raises(VerdictFileError, match="line 3: trajectory_success: 'Maybe'"):
        read_verdict_file("annotations.csv", bad.encode())


def test_an_agent_reward_bench_judge_file_is_the_verdict_of_its_completion_on_the_task_its_name_says():
    """The file as run_judge.py writes it: a `chat_messages` list (whose system prompt lists every answer), the
    completion under response.choices[0].message.content, the task only in the file name."""
    document = judge_file("webarena", "Open issue 3", judge_completion("Successful", optimal="3. Somewhat Optimal"))
    verdicts = read_verdict_file("webarena.100.json", json.dumps(document).encode())
    assert verdicts.format == "agent_reward_bench_judge" and verdicts.problems == []
    [record] = verdicts.records
    assert (record.source.kind, record.source.name, record.source.model) == (
        "llm_judge", "AgentRewardBench gpt-4o-noaxtree", "gpt-4o-2024-11-20")
    assert (record.task_id, record.benchmark, record.agent_model, record.run, record.success, record.intent) == (
        "webarena.100", "webarena", JUDGE_AGENT, "", True, "Open issue 3")
    assert record.labels == {"side_effect": "No", "optimality": "3. Somewhat Optimal", "looping": "No"}
    assert record.explanation.startswith("<reasoning>The agent reached the page")


def test_a_judge_file_whose_completion_gives_no_verdict_is_that_records_problem():
    document = judge_file("webarena", "Open issue 3", "I could not decide from the screenshot.")
    verdicts = read_verdict_file("webarena.101.json", json.dumps(document).encode())
    assert verdicts.records == []
    assert verdicts.problems == [RecordProblem(
        1, "response.choices[0].message.content", "'I could not decide from the screenshot.'",
        "no verdict in the judge's completion: AgentRewardBench reads <success>Successful</success> or "
        "<success>Unsuccessful</success> (or a last 'Status: success|failure' line, or 'Reward: 1-5')")]


def test_judge_files_together_are_one_file_each_record_named_by_its_file():
    files = [("gpt-4o-noaxtree/webarena.100.json", judge_file("webarena", "a", judge_completion("Successful"))),
             ("gpt-4o-noaxtree/webarena.101.json", judge_file("webarena", "b", judge_completion("Unsuccessful"))),
             ("gpt-4o-noaxtree/webarena.102.json", judge_file("webarena", "c", "<success>Maybe</success>")),
             ("gpt-4o-noaxtree/webarena.103_error.json", judge_file("webarena", "d", None)),
             ("gpt-4o-noaxtree/webarena.104.json", {**judge_file("webarena", "e", "x"), "response": None}),
             ("gpt-4o-noaxtree/notes.json", {"note": "not a judge file"})]
    verdicts = agent_reward_bench_judge_files(
        "judgments.zip", [(name, json.dumps(document).encode()) for name, document in files]
        + [("README.md", b"# judgments"), ("broken.json", b"{")])
    assert [(r.line, r.task_id, r.success) for r in verdicts.records] == [
        ("gpt-4o-noaxtree/webarena.100.json", "webarena.100", True),
        ("gpt-4o-noaxtree/webarena.101.json", "webarena.101", False)]
    assert len(verdicts.sources) == 1
    assert [(p.line, p.field, p.reason.split(":")[0]) for p in verdicts.problems] == [
        ("gpt-4o-noaxtree/notes.json", "(file)", "not an AgentRewardBench judge file (no response with choices "
                                                 "beside chat_messages, judge or judge_model_name)"),
        ("broken.json", "(file)", "not JSON"),
        ("gpt-4o-noaxtree/webarena.102.json", "response.choices[0].message.content", "no verdict in the judge's completion"),
        ("gpt-4o-noaxtree/webarena.103_error.json", "error", "the judge's request failed"),
        ("gpt-4o-noaxtree/webarena.104.json", "response.choices[0].message.content",
         "no completion text in the judge's response")]
    assert verdicts.notes == ["1 file(s) other than .json passed over"]


def test_a_zip_of_no_judge_files_is_refused_saying_what_it_reads():
    with pytest.raises(VerdictFileError, match="no AgentRewardBench judge file in it"):
        agent_reward_bench_judge_files("labels.zip", [("human_label.json", b'[{"task_id": "1"}]')])


@pytest.mark.parametrize("text, success", [
    ("<success>Unsuccessful</success>", False),
    ("<success>'Successful'</success> then <success>Unsuccessful</success>", True),  # the first, as ARB reads it
    ("Thoughts: done.\nStatus: success", True),
    ("Thoughts: no.\nStatus: \"failure\"", False),
    ("Thought: it looped.\nReward: 2", False),
    ("Thought: done.\nReward: 5", True),
    ("I cannot tell.", None),
    ("<success>Partly</success>", None),
])
def test_judge_answers(text, success):
    assert judge_answer(text)[0] is success


def test_other_tables_are_left_to_the_per_task_reader():
    assert read_verdict_file("results.csv", b"task_id,success\n1,1\n") is None


def test_a_judge_file_without_its_agent_names_the_agent_model_it_judged():
    document = judge_file("webarena", "Open issue 3", judge_completion("Unsuccessful"))
    del document["agent"], document["judge"]
    [record] = read_verdict_file("webarena.7.json", json.dumps(document).encode()).records
    assert (record.agent_model, record.source.name, record.success) == (
        "gpt-4o-2024-11-20", "AgentRewardBench judge", False)
