"""browser-use histories read from the real samples (shared/data/agent-outputs/browser-use), values
pinned from the files."""

import base64
import json
import shutil
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from trajectories.formats import browser_use
from trajectories.formats.canonical import ActionParts, TrajectoryFormatError
from trajectories.formats.readers import prepare, prepared_records, read_file, read_records
from trajectories.formats.sources import Catalogue, Limits

LIMITS = Limits(max_files=100, max_total_bytes=1 << 30, max_file_bytes=1 << 26, max_compression_ratio=100)
PNG = base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=")


@pytest.fixture
def samples(shared_data) -> Path:
    return shared_data / "agent-outputs" / "browser-use"


def _records(*paths: Path) -> dict:
    """Every record of the import of `paths`, by file name (the part after the top folder)."""
    found = {}
    with Catalogue(list(paths), LIMITS) as catalogue:
        for source in catalogue:
            if source.kind == "trajectories":
                found[source.name.split("/", 1)[1]] = list(prepared_records(source, LIMITS.max_file_bytes))
    return found


def test_the_early_layout_with_base64_screenshots_in_state(samples):
    [record] = _records(samples / "legacy-2024-11")["AgentHistoryList.json"]
    assert record.error is None and record.format == "browser_use_history" and record.notes == ()
    trajectory = record.trajectory
    # No task in the file: the folder names it, in the benchmark of one's own browser-use runs.
    assert (trajectory.task.benchmark, trajectory.task.task_id, trajectory.task.intent) == (
        "browser-use", "legacy-2024-11", "")
    assert [step.action for step in trajectory.steps] == [
        '{"search_google": {"query": "elon musk"}}',
        '{"click_element": {"index": 40, "num_clicks": 1}}',
        '{"click_element": {"index": 97, "num_clicks": 1}}',
        '{"done": {"text": "The first search result for \'Elon Musk\' on Wikipedia was clicked and opened '
        'successfully."}}',
    ]
    kinds = [(step.action_parts.type, step.action_parts.element_id, step.action_parts.value)
             for step in trajectory.steps]
    assert kinds[:3] == [("goto", "", "https://www.google.com/search?q=elon%20musk"), ("click", "40", ""),
                         ("click", "97", "")]
    # The clicked element named by the state's indexed elements.
    assert "Alle akzeptieren" in trajectory.steps[1].action_parts.element_label
    assert trajectory.steps[2].action_parts.element_label.startswith(
        '<a href="https://de.wikipedia.org/wiki/Elon_Musk"')
    assert [step.url for step in trajectory.steps] == [
        "about:blank", "https://www.google.com/search?q=elon%20musk", "https://www.google.com/search?q=elon%20musk",
        "https://de.wikipedia.org/wiki/Elon_Musk"]
    assert trajectory.steps[1].reasoning == ("Evaluation of the previous goal: Success\n"
                                             "Next goal: Accept cookies to proceed with the search results.")
    assert "[40]<button" in trajectory.steps[1].observation
    assert trajectory.final_answer == "The first search result for 'Elon Musk' on Wikipedia was clicked and opened " \
                                      "successfully."
    assert trajectory.outcome.status == "answered" and trajectory.outcome.success is None
    # `done` without `success` (the early layout): no self-report.
    assert trajectory.verdicts == []
    assert len(record.images) == 4 and all(step.screenshot.startswith("sha256:") for step in trajectory.steps)


def test_the_current_layout_with_webarena_infinitys_verdict_beside_it(samples):
    records = _records(samples / "webarena-infinity-gmail")
    [record] = records["task_e1/history.json"]
    assert record.error is None
    assert record.notes == ("harness verdict from result.json (WebArena-Infinity verifier)",)
    trajectory = record.trajectory
    assert (trajectory.task.benchmark, trajectory.task.task_id, trajectory.task.intent) == (
        "webarena-infinity", "task_e1", "Star the email with the subject 'Q1 Product Roadmap Review' from Sarah Chen.")
    assert [(s.action_parts.type, s.action_parts.element_id, s.action_parts.element_label, s.action_parts.value)
            for s in trajectory.steps] == [
        ("goto", "", "", "http://localhost:8001"),
        ("click", "459", "button '☆'", ""),
        ("stop", "", "",
         "Successfully starred the email from Sarah Chen with the subject 'Q1 Product Roadmap Review'."),
    ]
    # The click's element by its XPath, and where it landed (result[0].metadata.click_x, click_y).
    click = trajectory.steps[1].action_parts
    assert (click.selector, click.x, click.y) == ("html/body/main/div[2]/div[2]/div[1]/button[1]", 310.0, 179.5)
    assert trajectory.steps[1].reasoning.startswith("The user wants me to star the email")
    assert "Memory: The current page displays a list of emails." in trajectory.steps[1].reasoning
    assert "<browser_state>" in trajectory.steps[1].observation
    assert trajectory.final_answer == ("Successfully starred the email from Sarah Chen with the subject "
                                       "'Q1 Product Roadmap Review'.")
    # The verifier is the harness of record; the agent's own word and browser-use's judge are other sources.
    outcome = trajectory.outcome
    assert (outcome.status, outcome.success, outcome.source, outcome.message) == (
        "answered", True, "WebArena-Infinity verifier", "Task completed successfully.")
    assert [(v.kind, v.name, v.success) for v in trajectory.verdicts] == [
        ("agent_self_report", "agent self-report", True), ("llm_judge", "browser-use judge", True)]
    # The judgement's flags are kept as labels; its failure reason, empty here, would be the verdict's note.
    judge = trajectory.verdicts[1]
    assert (judge.labels, judge.note) == ({"not_executable": "no", "reached_captcha": "no"}, "")
    assert judge.explanation.startswith("The agent successfully navigated to the provided URL")
    assert trajectory.duration == 23.5
    assert [s.duration for s in trajectory.steps] == [0.0, pytest.approx(8.868176), pytest.approx(3.973034)]
    # Screenshots found inside the upload by file name: none for the initial navigation.
    assert trajectory.steps[0].screenshot is None
    assert len(record.images) == 2 and trajectory.steps[1].screenshot != trajectory.steps[2].screenshot
    # The verifier's result is read with the history, not as a trajectory of its own.
    [result] = records["task_e1/result.json"]
    assert (result.trajectory, result.error, result.skipped) == (None, None, "read with history.json")


def _history(screenshot_path: str) -> dict:
    return {"history": [{
        "model_output": {"thinking": "go", "action": [{"input_text": {"index": 3, "text": "shoes"}},
                                                      {"click_element_by_index": {"index": 4}}]},
        "result": [{"is_done": False}, {"is_done": False}],
        "state": {"url": "http://shop.test/", "screenshot_path": screenshot_path, "interacted_element": [None, None]},
        "metadata": {"step_start_time": 10.0, "step_end_time": 12.5, "input_tokens": 1200, "output_tokens": 85,
                     "step_number": 1},
    }]}


@pytest.mark.parametrize("elsewhere", ["/etc/passwd", "outside/secret.png", "../outside/secret.png"])
def test_a_screenshot_path_outside_the_upload_is_never_read(tmp_path, elsewhere):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.png").write_bytes(PNG)
    upload = tmp_path / "upload" / "task_9"
    upload.mkdir(parents=True)
    absolute = elsewhere if elsewhere.startswith("/") else str(tmp_path / "upload" / "task_9" / elsewhere)
    (upload / "history.json").write_text(json.dumps(_history(absolute)))
    asked = []

    with Catalogue([tmp_path / "upload"], LIMITS) as catalogue:
        [source] = catalogue.sources

        def read_sibling(relative):
            asked.append(relative)
            return source.read_sibling(relative)

        with source.open() as stream:
            [record] = [prepare(r, read_sibling) for r in read_records(source.name, stream, 1 << 20, read_sibling)]
    assert record.error is None and record.trajectory.steps[0].screenshot is None and record.images == {}
    assert any("is not in the upload" in note for note in record.notes)
    assert all(not name.startswith("/") and ".." not in name.split("/") for name in asked)


def test_a_screenshot_is_found_by_its_file_name_inside_the_upload(tmp_path):
    folder = tmp_path / "run" / "task_9"
    (folder / "screenshots").mkdir(parents=True)
    (folder / "screenshots" / "step_1.png").write_bytes(PNG)
    (folder / "history.json").write_text(json.dumps(_history("C:\\Users\\me\\Temp\\agent\\screenshots\\step_1.png")))
    [record] = _records(tmp_path / "run")["task_9/history.json"]
    assert record.error is None and record.notes == () and len(record.images) == 1


def test_each_action_of_one_model_output_is_an_agent_step_of_its_own(tmp_path):
    folder = tmp_path / "run" / "task_9"
    folder.mkdir(parents=True)
    history = _history("/nowhere/step_1.png")
    item = history["history"][0]
    item["state"]["interacted_element"] = [
        {"node_name": "INPUT", "attributes": {"placeholder": "Search"}, "x_path": "html/body/form/input[1]"},
        {"node_name": "BUTTON", "ax_name": "Go", "x_path": "html/body/form/button[1]"}]
    item["result"][1]["metadata"] = {"click_x": 410.0, "click_y": 96.5}
    history["history"].append({"model_output": {"action": [{"done": {"text": "found", "success": True}}]},
                               "result": [{"is_done": True}], "state": {"url": "http://shop.test/?q=shoes"},
                               "metadata": {"input_tokens": 800}})
    (folder / "history.json").write_text(json.dumps(history))
    [record] = _records(tmp_path / "run")["task_9/history.json"]
    first, second, third = record.trajectory.steps
    assert [step.index for step in (first, second, third)] == [1, 2, 3]
    assert [json.loads(step.action) for step in (first, second)] == [
        {"input_text": {"index": 3, "text": "shoes"}}, {"click_element_by_index": {"index": 4}}]
    assert first.action_parts == ActionParts(type="type", element_id="3", element_label="input 'Search'",
                                             value="shoes", press_enter=False, selector="html/body/form/input[1]")
    assert second.action_parts == ActionParts(type="click", element_id="4", element_label="button 'Go'",
                                              selector="html/body/form/button[1]", x=410.0, y=96.5)
    # What the model output had once stays on its first action; the second is on the same page.
    assert (first.tokens_in, first.tokens_out, first.duration, first.reasoning) == (1200, 85, 2.5, "go")
    assert (second.tokens_in, second.duration, second.reasoning, second.url) == (None, None, "", "http://shop.test/")
    assert (third.action_parts.type, third.tokens_in) == ("stop", 800)
    # 1200 + 800 tokens, summed over the steps as before the split.
    assert sum(step.tokens_in or 0 for step in record.trajectory.steps) == 2000
    assert (record.trajectory.task.benchmark, record.trajectory.task.task_id) == ("browser-use", "task_9")


@pytest.mark.parametrize(("name", "task_id"), [
    ("task_e1/history.json", "task_e1"),  # a generic name: the folder names the task
    ("run\\task_e1\\AgentHistoryList.json", "task_e1"),  # Windows separators, any case of the generic stem
    ("task_e1.json", "task_e1"),  # a file named after its task
    ("runs/task_e1/task_e1.json", "task_e1"),
    ("", ""),
])
def test_a_histories_task_id_comes_from_its_folder_or_its_file_name(name, task_id):
    assert browser_use._task_id(name, {"history": []}) == task_id


def _nothing_beside(name: str) -> bytes:
    raise FileNotFoundError(name)


def test_two_histories_uploaded_alone_under_a_generic_name_are_two_tasks_with_the_text_they_keep(samples):
    document = json.loads((samples / "legacy-2024-11" / "AgentHistoryList.json").read_text())
    other = {**document, "history": document["history"][:2], "task": "  Open the first result for Elon Musk  "}
    first, _ = browser_use.parse_history(document, "AgentHistoryList.json", _nothing_beside)
    second, _ = browser_use.parse_history(other, "AgentHistoryList.json", _nothing_beside)
    assert first.task.task_id.startswith("AgentHistoryList-") and len(first.task.task_id) == len("AgentHistoryList-") + 12
    assert second.task.task_id != first.task.task_id
    assert (first.task.intent, second.task.intent) == ("", "Open the first result for Elon Musk")
    again, _ = browser_use.parse_history(document, "AgentHistoryList.json", _nothing_beside)
    assert again.task.task_id == first.task.task_id  # the same file imported again is the same task


@pytest.mark.parametrize(("action", "expected"), [
    ({"scroll": {"down": False, "num_pages": 1.0}}, ("scroll", "", "up")),
    ({"scroll_down": {}}, ("scroll", "", "down")),
    ({"scroll_up": {"amount": 300}}, ("scroll", "", "up")),
    ({"send_keys": {"keys": "Enter"}}, ("press", "", "Enter")),
    ({"go_to_url": {"url": "https://a.test/"}}, ("goto", "", "https://a.test/")),
    ({"open_tab": {"url": "https://b.test/"}}, ("goto", "", "https://b.test/")),
    ({"search": {"query": "a b", "engine": "duckduckgo"}}, ("goto", "", "https://duckduckgo.com/?q=a%20b")),
    ({"go_back": {}}, ("go_back", "", "")),
    ({"switch_tab": {"page_id": 1}}, ("tab_focus", "", "1")),
    ({"select_dropdown_option": {"index": 7, "text": "Red"}}, ("select", "7", "Red")),
    ({"extract_content": {"goal": "prices"}}, ("none", "", "")),
    ({"wait": {"seconds": 3}}, ("none", "", "")),
])
def test_action_kinds(action, expected):
    [(name, params)] = action.items()
    parts = browser_use._parts(name, params, None, None, {})
    assert (parts.type, parts.element_id, parts.value) == expected


def test_a_scroll_by_pixels_keeps_its_amount_and_a_click_at_a_point_its_coordinates():
    assert browser_use._parts("scroll_up", {"amount": 300}, None, None, {}).delta_y == -300
    assert browser_use._parts("scroll", {"down": True, "num_pages": 1.0}, None, None, {}).delta_y is None
    click = browser_use._parts("click", {"coordinate_x": 12, "coordinate_y": 30.5}, None, None, {})
    assert (click.x, click.y, click.element_id) == (12.0, 30.5, "")


def test_a_result_without_its_history_is_a_results_only_trajectory(samples, tmp_path):
    folder = tmp_path / "run" / "task_e1"
    folder.mkdir(parents=True)
    shutil.copy(samples / "webarena-infinity-gmail" / "task_e1" / "result.json", folder)
    [record] = _records(tmp_path / "run")["task_e1/result.json"]
    trajectory = record.trajectory
    assert record.format == "webarena_infinity_result" and trajectory.steps == []
    assert (trajectory.outcome.status, trajectory.outcome.success, trajectory.outcome.source) == (
        "answered", True, "WebArena-Infinity verifier")
    assert trajectory.final_answer.startswith("Successfully starred the email")


def test_online_mind2web_results_are_not_taken_for_webarena_infinitys(shared_data):
    for path in (shared_data / "agent-outputs" / "online-mind2web").rglob("result.json"):
        document = json.loads(path.read_text())
        assert not browser_use.looks_like_infinity_result(document) and not browser_use.looks_like_history(document)


def test_a_bad_action_names_its_place(tmp_path):
    folder = tmp_path / "run" / "task_9"
    folder.mkdir(parents=True)
    (folder / "history.json").write_text(json.dumps({"history": [
        {"model_output": {"action": ["click"]}, "result": [], "state": {}}]}))
    with Catalogue([tmp_path / "run"], LIMITS) as catalogue:
        [record] = read_file(catalogue.sources[0], 1 << 20)
    assert record.error.where == "history[0].model_output.action[0]"


_JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
                     | st.text(max_size=20),
                     lambda inner: st.lists(inner, max_size=4)
                     | st.dictionaries(st.text(max_size=8), inner, max_size=4),
                     max_leaves=20)
_KEYS = st.sampled_from(["model_output", "result", "state", "metadata", "action", "current_state", "thinking",
                         "memory", "next_goal", "evaluation_previous_goal", "index", "text", "success", "url",
                         "screenshot", "screenshot_path", "interacted_element", "items", "judgement", "verdict",
                         "done", "click", "input_text", "scroll", "step_start_time", "step_end_time", "state_message"])
_SHAPED = st.recursive(_JSON, lambda inner: st.dictionaries(_KEYS, inner, max_size=6) | st.lists(inner, max_size=3),
                       max_leaves=30)


@settings(max_examples=300, deadline=None)
@given(history=st.lists(_SHAPED, max_size=4), usage=_SHAPED)
def test_any_history_is_read_or_refused_with_a_format_error(history, usage):
    def read_sibling(name):
        if name.endswith(".json"):
            raise FileNotFoundError(name)
        return PNG

    try:
        trajectory, _ = browser_use.parse_history({"history": history, "usage": usage}, "run/task_1/history.json",
                                                  read_sibling)
    except TrajectoryFormatError:
        return
    assert [step.index for step in trajectory.steps] == list(range(1, len(history) + 1))


def test_the_agent_saying_it_failed_is_its_own_verdict_not_the_harness(tmp_path):
    folder = tmp_path / "run" / "task_9"
    folder.mkdir(parents=True)
    history = _history("/nowhere/step_1.png")
    history["history"][0]["model_output"]["action"] = [{"done": {"text": "N/A", "success": False}}]
    (folder / "history.json").write_text(json.dumps(history))
    [record] = _records(tmp_path / "run")["task_9/history.json"]
    trajectory = record.trajectory
    assert (trajectory.outcome.status, trajectory.outcome.success, trajectory.final_answer) == ("na", None, "N/A")
    assert [(v.kind, v.success) for v in trajectory.verdicts] == [("agent_self_report", False)]


def test_actions_nested_too_deep_are_refused_before_they_are_walked(tmp_path):
    deep = {}
    for _ in range(40):
        deep = {"x": deep}
    document = {"history": [{"model_output": {"action": [{"click": {"index": 1, "extra": deep}}]}, "state": {}}]}
    with pytest.raises(TrajectoryFormatError) as refused:
        browser_use.parse_history(document, "run/task_1/history.json", lambda name: PNG)
    assert refused.value.where.startswith("history[0].model_output.action")


def test_the_run_summary_gives_every_tasks_verdict_and_its_folder(samples):
    [record] = _records(samples / "webarena-infinity-gmail")["results.json"]
    assert (record.format, record.trajectory, record.error) == ("webarena_infinity_summary", None, None)
    summary = record.summary
    assert (summary.format, summary.noun, summary.problems) == ("webarena_infinity_summary", "tasks", [])
    assert (summary.run.agent, summary.run.model) == ("browser-use", "gemini")
    assert "history.json" in summary.folder_files and "result.json" in summary.folder_files
    assert len(summary.entries) == 30 and sum(entry.success for entry in summary.entries) == 15
    first, fourth = summary.entries[0], summary.entries[3]
    assert (first.task.benchmark, first.task.task_id, first.folder, first.success, first.line) == (
        "webarena-infinity", "task_e1", "task_e1", True, "tasks[0]")
    assert first.task.intent == "Star the email with the subject 'Q1 Product Roadmap Review' from Sarah Chen."
    assert (fourth.task.task_id, fourth.success) == ("task_e3", False)


def test_a_summary_entry_that_cannot_be_read_is_named_and_the_others_are_read(samples):
    document = json.loads((samples / "webarena-infinity-gmail" / "results.json").read_text())
    document["tasks"][1]["passed"] = 1
    document["tasks"][2]["task_id"] = None
    document["tasks"][3] = "task_e3"
    summary = browser_use.parse_infinity_summary(document)
    assert summary.problems == ["tasks[1].passed: expected true or false, got 1",
                                "tasks[2].task_id: no task id: name the file or its folder after the task",
                                'tasks[3]: expected a task object, got "task_e3"']
    assert len(summary.entries) == 27 and summary.entries[1].task.task_id == "task_e4"
    document["tasks"][4]["passed"] = None
    assert browser_use.parse_infinity_summary(document).entries[1].success is None


def test_a_run_summary_is_told_from_a_tasks_result_and_from_other_json():
    entry = {"task_id": "task_e1", "instruction": "x", "passed": True, "verifier_message": "ok"}
    assert browser_use.looks_like_infinity_summary({"total": 1, "passed": 1, "tasks": [entry]})
    assert not browser_use.looks_like_infinity_summary(entry)
    assert not browser_use.looks_like_infinity_summary({"total": 1, "passed": 1, "tasks": [{"task_id": "a"}]})
    assert not browser_use.looks_like_infinity_summary({"passed": 1, "tasks": [entry]})


@pytest.mark.parametrize("judgement, labels, note", [
    ({"verdict": False, "failure_reason": " Blocked. ", "impossible_task": True, "reached_captcha": False},
     {"not_executable": "yes", "reached_captcha": "no"}, "Blocked."),
    ({"verdict": True}, {}, ""),
    ({"verdict": True, "impossible_task": "yes", "reached_captcha": True}, {"reached_captcha": "yes"}, ""),
])
def test_the_judgements_failure_reason_is_its_note_and_its_flags_are_labels(judgement, labels, note):
    verdict = browser_use._judge([{"is_done": True}, {"judgement": {"reasoning": "Seen.", **judgement}}])
    assert (verdict.success, verdict.explanation, verdict.labels, verdict.note) == (
        judgement["verdict"], "Seen.", labels, note)
    assert browser_use._judge([{"judgement": {"verdict": "yes"}}]) is None


def test_the_result_beside_a_history_is_read_by_the_readers_strict_loader(samples, tmp_path):
    folder = tmp_path / "run" / "task_e1"
    folder.mkdir(parents=True)
    shutil.copy(samples / "webarena-infinity-gmail" / "task_e1" / "history.json", folder)
    (folder / "result.json").write_text('{"task_id": "task_e1", "instruction": "x", "passed": true, '
                                        '"verifier_message": "ok", "elapsed": NaN}')
    [record] = _records(tmp_path / "run")["task_e1/history.json"]
    assert (record.error.where, record.error.message) == (
        "result.json", "the harness result beside the history is not JSON: not a JSON number: NaN")
