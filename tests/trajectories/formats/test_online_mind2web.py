"""Online-Mind2Web's task list and result folders, read from the real samples in shared/data/agent-outputs."""

import json

import pytest
from hypothesis import given, settings, strategies as st

from trajectories.formats import online_mind2web
from trajectories.formats.canonical import TASK_ID_MAX_LENGTH, ActionParts, TrajectoryFormatError
from trajectories.formats.readers import read_records
from trajectories.formats.task_files import read_task_file
from trajectories.formats.webarena_tasks import TaskConfigError

ABP_QATAR = "005be9dd91c95669d6ddde9ae667125c"
ABP_PETFINDER = "0b2623e9fa5cea997f76490bcbc5220f"
ADOPTAPET = "0a54069a0ef542e571d1fee7f39c93d5"
PNG = b"\x89PNG\r\n\x1a\n" + b"\0" * 16


@pytest.fixture(scope="module")
def om2w(shared_data):
    return shared_data / "agent-outputs" / "online-mind2web"


def _read(path, name: str, read_sibling=None):
    with path.open("rb") as stream:
        return list(read_records(name, stream, 10_000_000, read_sibling))


def _result(om2w, folder: str, task_id: str, read_sibling=None):
    [record] = _read(om2w / folder / task_id / "result.json", f"online-mind2web/{folder}/{task_id}/result.json",
                     read_sibling)
    assert record.format == online_mind2web.RESULTS_FORMAT and record.error is None
    return record.trajectory


def test_the_task_list_keeps_both_versions_of_updated_tasks(om2w):
    parsed = read_task_file(om2w / "Online_Mind2Web.excerpt.json")
    assert parsed.kind == "online-mind2web" and len(parsed.configs) == 30
    by_id = {config.task_id: config for config in parsed.configs}
    first = by_id["b7258ee05d75e6c50673a59914db412e_110325"]
    assert first.intent == ("Find the store location and hours of the closest Trader Joe's to zip code 90028 "
                            "and set it as my home store.")
    assert (first.start_url, first.sites, first.reference_length) == ("https://www.traderjoes.com/",
                                                                      ["traderjoes.com"], 6)
    assert first.config["level"] == "medium" and first.benchmark == "online-mind2web"
    assert sum("_" in task_id for task_id in by_id) == 6
    assert by_id["c698ff3fc0f6cbce39947c597ab5749b_121425"].intent == (
        "Help me find a list of school activity events in New York for this month.")


def test_a_bad_task_entry_is_skipped_naming_the_entry_and_field(om2w):
    entries = json.loads((om2w / "Online_Mind2Web.excerpt.json").read_text())
    entries[3]["level"] = "impossible"
    entries[5]["reference_length"] = "six"
    entries[6]["task_id"] = "x" * (TASK_ID_MAX_LENGTH + 1)
    entries[7]["website"] = "http://[::1"
    read = online_mind2web.parse_tasks(entries)
    text = "\n".join(str(problem) for problem in read.skipped)
    assert "entry 4): field 'level': expected one of easy, medium, hard, got 'impossible'" in text
    assert "entry 6): field 'reference_length': expected an integer, got str" in text
    assert f"entry 7): field 'task_id': longer than {TASK_ID_MAX_LENGTH} characters" in text
    assert "entry 8)" not in text  # a website that is not a URL is kept as written, without a site
    assert len(read.configs) == len(entries) - 3
    assert online_mind2web.parse_tasks(entries[7:8]).configs[0].sites == []
    with pytest.raises(TaskConfigError, match="refused by --strict"):
        read.checked("Online_Mind2Web.json", strict=True)


def test_an_abp_result_pairs_actions_with_thoughts_and_ends_with_the_answer(om2w):
    trajectory = _result(om2w, "abp_run", ABP_QATAR)
    assert trajectory.task.task_id == ABP_QATAR and trajectory.task.benchmark == "online-mind2web"
    assert trajectory.task.intent == "Find the weight of baggage allowance for economy class on Qatar Airways."
    assert [step.index for step in trajectory.steps] == list(range(1, 11))
    assert [step.action for step in trajectory.steps][:5] == [
        "Navigate to https://www.qatarairways.com/", "Click at (963, 72)", "Click at (560, 224)",
        'Type "baggage allowance"', "Press ENTER"]
    assert trajectory.steps[0].reasoning == ""
    assert trajectory.steps[1].reasoning.startswith("The Qatar Airways homepage has loaded. I need to find baggage")
    assert trajectory.final_answer.startswith("Based on the Qatar Airways baggage allowance page, here is")
    # `success` is how the agent's session ended; whether the task was done is for the judges.
    outcome = trajectory.outcome
    assert (outcome.status, outcome.success, outcome.message) == ("answered", None, "result_status: success")
    assert trajectory.verdicts == [] and trajectory.run.name == "abp_run"


def test_a_run_out_of_turns_is_an_early_stop_without_answer(om2w):
    trajectory = _result(om2w, "abp_run", ABP_PETFINDER)
    assert len(trajectory.steps) == 35 and trajectory.final_answer is None
    assert (trajectory.outcome.status, trajectory.outcome.reason) == ("early_stop", "max_steps")
    assert trajectory.outcome.message == "result_status: error_max_turns"


def test_a_browser_use_cloud_result_is_an_answer_with_the_judges_verdict(om2w):
    trajectory = _result(om2w, "browser_use_cloud", ADOPTAPET)
    assert trajectory.steps == [] and trajectory.run.name == "browser_use_cloud"
    assert trajectory.final_answer.startswith("Successfully navigated to https://www.adoptapet.com/ and browsed")
    assert trajectory.outcome.status == "answered" and trajectory.outcome.success is None
    [verdict] = trajectory.verdicts
    assert (verdict.kind, verdict.name, verdict.score, verdict.threshold, verdict.success) == (
        "llm_judge", "browser-use judge", 0.0, 50.0, False)
    assert verdict.explanation.endswith("despite reaching the correct search URL transiently.")
    passed = _result(om2w, "browser_use_cloud", ABP_QATAR)
    assert [(v.score, v.success) for v in passed.verdicts] == [(100.0, True)]


def test_the_judges_pass_mark_can_be_set(om2w):
    document = json.loads((om2w / "browser_use_cloud" / ABP_QATAR / "result.json").read_text())
    trajectory, _ = online_mind2web.parse_result(document, "r/x/result.json", judge_threshold=101)
    assert [(v.threshold, v.success) for v in trajectory.verdicts] == [(101, False)]


def test_the_official_example_reads_element_actions(om2w):
    trajectory = _result(om2w, "official-example", "fb7b4f784cfde003e2548fdf4e8d6b4f")
    assert [step.action_parts for step in trajectory.steps] == [
        ActionParts(type="click", element_label='<div role="button">'),
        ActionParts(type="click", element_label="<button>"),
        ActionParts(type="click", element_label="<button>"),
        ActionParts(type="click", element_label='<a href="https://support.discogs.com/hc/articles/360004016474-'
                                                'Overview-of-Submission-Guidelines-for-Releases" role="menuitem">'),
    ]
    assert trajectory.steps[3].reasoning == (
        "Click on 'Database Guidelines' to find information about submission of releases.")
    assert trajectory.outcome.status == "answered" and trajectory.final_answer.startswith("The page with an overview")


@pytest.mark.parametrize("action, parts", [
    ("Click at (600, 475)", ActionParts(type="click", x=600, y=475)),
    ("Double click at (12.5, 40)", ActionParts(type="click", x=12.5, y=40)),
    ('Type "support services"', ActionParts(type="type", value="support services")),
    ('Type ""', ActionParts(type="type", value="")),
    ("Press ENTER", ActionParts(type="press", value="ENTER")),
    ("Press CONTROL+HOME", ActionParts(type="press", value="CONTROL+HOME")),
    ("Navigate to https://careers.walmart.com/", ActionParts(type="goto", value="https://careers.walmart.com/")),
    ("Navigate back", ActionParts(type="go_back")),
    ("Scroll (delta_x=0, delta_y=400)", ActionParts(type="scroll", value="down", delta_x=0, delta_y=400)),
    ("Scroll (delta_x=0, delta_y=-400)", ActionParts(type="scroll", value="up", delta_x=0, delta_y=-400)),
    ("Scroll (delta_x=-300, delta_y=0)", ActionParts(type="scroll", value="left", delta_x=-300, delta_y=0)),
    ("Select picker sp_4 -> Select option(s) [211]", ActionParts(type="select", element_label="picker sp_4",
                                                                 value="[211]")),
    # From (1100, 500) to (400, 500): moved 400 - 1100 = -700 right, 0 down.
    ("Drag from (1100, 500) to (400, 500)", ActionParts(type="drag", x=1100, y=500, delta_x=-700, delta_y=0)),
    # WebJudge's own example record
    ("<https://kayak.com> -> NAVIGATE", ActionParts(type="goto", value="https://kayak.com")),
    ("<input#origin> -> TYPE 'NYC'", ActionParts(type="type", element_label="<input#origin>", value="NYC",
                                                 selector="input#origin")),
    ("<button#search> -> CLICK", ActionParts(type="click", element_label="<button#search>", selector="button#search")),
    ("<select#size> -> SELECT: Large", ActionParts(type="select", element_label="<select#size>", value="Large",
                                                   selector="select#size")),
    ("<input.q.big> -> PRESS ENTER", ActionParts(type="press", element_label="<input.q.big>", value="ENTER",
                                                 selector="input.q.big")),
    ("Wiggle the mouse", ActionParts(type="none")),
])
def test_every_action_form_of_the_samples(action, parts):
    assert online_mind2web.action_parts(action) == parts


def test_every_action_of_the_samples_is_understood(om2w):
    for path in sorted(om2w.glob("*/*/result.json")):
        for action in json.loads(path.read_text()).get("action_history", []):
            assert online_mind2web.action_parts(action).type != "none", (path, action)


def test_screenshots_beside_the_result_go_with_their_steps(om2w):
    files = {"trajectory/0_full_screenshot.png": PNG, "trajectory/2_full_screenshot.png": PNG}

    def read_sibling(relative):
        if relative not in files:
            raise FileNotFoundError(relative)
        return files[relative]

    trajectory = _result(om2w, "official-example", "fb7b4f784cfde003e2548fdf4e8d6b4f", read_sibling)
    assert [step.screenshot for step in trajectory.steps] == [
        "trajectory/0_full_screenshot.png", None, "trajectory/2_full_screenshot.png", None]


def test_verdict_files_and_the_task_list_are_passed_over_with_what_they_are(om2w):
    for name, start in (("human_label.excerpt.json", "Online-Mind2Web human labels"),
                        ("Online_Mind2Web.excerpt.json", "Online-Mind2Web task list"),
                        (next(om2w.glob("WebJudge_*")).name, "Online-Mind2Web WebJudge results")):
        [record] = _read(om2w / name, name)
        assert record.trajectory is None and record.error is None and record.skipped.startswith(start)


def test_webjudge_results_of_many_lines_are_recognised(om2w, tmp_path):
    line = next(om2w.glob("WebJudge_*")).read_text().strip()
    path = tmp_path / "WebJudge_results.json"
    path.write_text(f"{line}\n{line}\n")
    [record] = _read(path, path.name)
    assert record.skipped.startswith("Online-Mind2Web WebJudge results")


@pytest.mark.parametrize("change, where, message", [
    ({"action_history": "click"}, "action_history", "expected a list of strings, got str"),
    ({"thoughts": ["only one"]}, "thoughts", "1 thoughts for 2 actions"),
    ({"final_result_response": 3}, "final_result_response", "expected a string, got int"),
    ({"judge": {"score": "high"}}, "judge.score", "expected a number from 0 to 100"),
    ({"result_status": 1}, "result_status", "expected a string, got int"),
    ({"task_id": "x" * (TASK_ID_MAX_LENGTH + 1)}, "task_id", f"a task id of more than {TASK_ID_MAX_LENGTH} characters"),
])
def test_a_bad_result_names_the_field(change, where, message):
    document = {"task_id": "t1", "task": "Do it.", "final_result_response": "done",
                "action_history": ["Click at (1, 2)", "Press ENTER"], "thoughts": ["a", "b"], **change}
    with pytest.raises(TrajectoryFormatError) as error:
        online_mind2web.parse_result(document, "run/t1/result.json")
    assert error.value.where == where and message in error.value.message


def test_the_task_id_comes_from_the_folder_when_the_result_has_none():
    trajectory, _ = online_mind2web.parse_result({"task_id": "", "task": "Do it.", "final_result_response": ""},
                                              "run/abc123/result.json")
    assert trajectory.task.task_id == "abc123" and trajectory.outcome.status == "no_stop"


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=20),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=12)
_fields = st.fixed_dictionaries({"task_id": _json, "task": st.text(max_size=30)}, optional={
    "final_result_response": _json, "action_history": _json | st.lists(st.text(max_size=40), max_size=5),
    "thoughts": _json, "result_status": _json, "judge": _json | st.fixed_dictionaries(
        {"score": _json, "reasoning": _json})})


@settings(max_examples=300, deadline=None)
@given(document=_fields)
def test_any_result_document_is_read_or_refused_with_a_field(document):
    try:
        trajectory, _ = online_mind2web.parse_result(document, "run/t/result.json")
    except TrajectoryFormatError as error:
        assert error.where
    else:
        assert trajectory.task.benchmark == "online-mind2web"


@settings(max_examples=300, deadline=None)
@given(action=st.text(max_size=60) | st.from_regex(r"<[a-z#.\"= ]{0,12}> -> [A-Z ]{0,12}.{0,8}", fullmatch=True))
def test_any_action_string_has_parts(action):
    assert online_mind2web.action_parts(action).type
