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


def _files_of(folder: Path, *, except_for: tuple[str, ...] = ()):
    """A history's neighbours as an upload gives them: the files of its folder, by their path inside it."""
    def read_sibling(name: str) -> bytes:
        if name in except_for:
            raise FileNotFoundError(name)
        return (folder / name).read_bytes()
    return read_sibling


_GMAIL_CLICK_REASONING = (
    "The user wants me to star the email with the subject 'Q1 Product Roadmap Review' from Sarah Chen. I can see "
    "the email in the current browser state. I need to find the star button associated with that email and click it.\n"
    "Evaluation of the previous goal: Successfully loaded the page.\n"
    "Memory: The current page displays a list of emails. I need to find the email from Sarah Chen with the subject "
    "'Q1 Product Roadmap Review' and star it.\n"
    "Next goal: Click the star button associated with the email from Sarah Chen with the subject "
    "'Q1 Product Roadmap Review'.")
_GMAIL_DONE_REASONING = (
    "I have successfully starred the email from Sarah Chen with the subject 'Q1 Product Roadmap Review'. The user "
    "request is now complete.\n"
    "Evaluation of the previous goal: Successfully clicked the star button for the email from Sarah Chen with the "
    "subject 'Q1 Product Roadmap Review'. Verdict: Success\n"
    "Memory: Successfully starred the email from Sarah Chen with the subject 'Q1 Product Roadmap Review'.\n"
    "Next goal: The task is complete. Prepare to call done.")
_GMAIL_ANSWER = "Successfully starred the email from Sarah Chen with the subject 'Q1 Product Roadmap Review'."


def test_every_step_of_the_current_layout_sample_in_full(samples):
    folder = samples / "webarena-infinity-gmail" / "task_e1"
    document = json.loads((folder / "history.json").read_text())
    trajectory, notes = browser_use.parse_history(document, "task_e1/history.json", _files_of(folder))
    assert notes == ["harness verdict from result.json (WebArena-Infinity verifier)"]
    first, click, done = trajectory.steps
    assert [step.index for step in trajectory.steps] == [1, 2, 3]
    assert [json.loads(step.action) for step in trajectory.steps] == [
        {"navigate": {"url": "http://localhost:8001", "new_tab": False}}, {"click": {"index": 459}},
        {"done": {"text": _GMAIL_ANSWER, "success": True}}]
    assert [step.action_parts for step in trajectory.steps] == [
        ActionParts(type="goto", value="http://localhost:8001"),
        ActionParts(type="click", element_id="459", element_label="button '☆'",
                    selector="html/body/main/div[2]/div[2]/div[1]/button[1]", x=310.0, y=179.5),
        ActionParts(type="stop", value=_GMAIL_ANSWER)]
    # No `thinking` and a null memory in the first: only what it has, each under its heading.
    assert first.reasoning == "Evaluation of the previous goal: Start\nNext goal: Initial navigation"
    assert (click.reasoning, done.reasoning) == (_GMAIL_CLICK_REASONING, _GMAIL_DONE_REASONING)
    # The prompt the model was shown is the observation; the first item has none and no indexed elements.
    assert first.observation == ""
    assert (click.observation, done.observation) == (document["history"][1]["state_message"],
                                                     document["history"][2]["state_message"])
    # The screenshots named by the run's machine, found in the folder's screenshots/.
    assert [step.screenshot for step in trajectory.steps] == [None, "screenshots/step_1.png", "screenshots/step_2.png"]
    assert [step.url for step in trajectory.steps] == ["http://localhost:8001", "http://localhost:8001/",
                                                       "http://localhost:8001/"]
    assert [(step.tokens_in, step.tokens_out, step.cost) for step in trajectory.steps] == [(None, None, None)] * 3
    assert (trajectory.tokens_in, trajectory.tokens_out, trajectory.cost) == (None, None, None)
    assert (trajectory.run.agent, trajectory.final_answer) == ("browser-use", _GMAIL_ANSWER)


def test_the_current_layout_sample_alone_is_a_task_of_its_folder_with_the_request_its_prompt_showed(samples):
    folder = samples / "webarena-infinity-gmail" / "task_e1"
    document = json.loads((folder / "history.json").read_text())
    trajectory, notes = browser_use.parse_history(document, "task_e1/history.json",
                                                  _files_of(folder, except_for=browser_use.RESULT_FILES))
    assert notes == []
    assert (trajectory.task.benchmark, trajectory.task.task_id, trajectory.task.intent) == (
        "browser-use", "task_e1", "You are interacting with a web application at http://localhost:8001. Your task: "
                                  "Star the email with the subject 'Q1 Product Roadmap Review' from Sarah Chen.")
    outcome = trajectory.outcome
    # Without the verifier's result no harness verdict: the agent's word and browser-use's judge only.
    assert (outcome.status, outcome.success, outcome.source, outcome.message) == ("answered", None, "", "")
    assert [(v.kind, v.name, v.success) for v in trajectory.verdicts] == [
        ("agent_self_report", "agent self-report", True), ("llm_judge", "browser-use judge", True)]
    assert trajectory.duration is None


def test_the_early_layout_sample_uploaded_alone_in_full(samples):
    document = json.loads((samples / "legacy-2024-11" / "AgentHistoryList.json").read_text())
    trajectory, notes = browser_use.parse_history(document, "AgentHistoryList.json", _nothing_beside)
    assert notes == []
    # Named by its content's digest (sha256 of the keys-sorted JSON), pinned from the file.
    assert trajectory.task.task_id == "AgentHistoryList-c0813a0d7def"
    # The screenshots are inline base64 PNGs, made data: URIs.
    assert [step.screenshot for step in trajectory.steps] == [
        "data:image/png;base64," + item["state"]["screenshot"] for item in document["history"]]
    assert [step.reasoning for step in trajectory.steps] == [
        "Evaluation of the previous goal: Unknown\nNext goal: Search for 'elon musk' on Google.",
        "Evaluation of the previous goal: Success\nNext goal: Accept cookies to proceed with the search results.",
        "Evaluation of the previous goal: Success\nNext goal: Click on the first search result for Elon Musk on "
        "Wikipedia.",
        "Evaluation of the previous goal: Success\nNext goal: Complete the task as the first search result has been "
        "clicked and opened successfully."]
    # The indexed elements, one a line, a tab per level of depth; text-only ones without their index.
    assert trajectory.steps[0].observation == ""
    assert trajectory.steps[1].observation.split("\n")[:4] == [
        "\tLinks zur Barrierefreiheit", "\t\t\tZu den Hauptinhalten springen", "\t\t\tHilfe zur Barrierefreiheit",
        "\t\t\t\tFeedback zur Barrierefreiheit"]
    assert "\n" + "\t" * 9 + '[40]<button id="L2AGLb"' in trajectory.steps[1].observation
    # Element 131 is 43 levels deep: indented by 32 tabs at most.
    [deepest] = [line for line in trajectory.steps[2].observation.split("\n") if "[131]" in line]
    assert deepest.startswith("\t" * 32 + "[131]<span") and not deepest.startswith("\t" * 33)
    assert trajectory.steps[1].action_parts.element_label == (
        '<button id="L2AGLb" class="tHlp8d" data-ved="0ahUKEwj0xZvMmPyJAxUo0wIHHZlVIbAQiZAHCGQ">Alle akzeptieren\n'
        'Alle akzeptieren</button>')


def test_a_generically_named_history_alone_is_named_by_its_content_whatever_its_key_order():
    document = {"task": "Find shoes", "history": []}
    reordered = {"history": [], "task": "Find shoes"}
    assert browser_use._task_id("history.json", document) == browser_use._task_id("history.json", reordered)
    assert browser_use._task_id("history.json", document).startswith("history-")
    # A lone surrogate (valid JSON, `"\ud800"`) still gives a name.
    lone = json.loads('{"task": "\\ud800", "history": []}')
    assert len(browser_use._task_id("agent_history.json", lone)) == len("agent_history-") + 12


def test_a_task_id_longer_than_the_database_holds_is_refused_naming_where_it_came_from(tmp_path):
    longest = "t" * 255
    trajectory, _ = browser_use.parse_history({"history": []}, f"{longest}.json", _nothing_beside)
    assert trajectory.task.task_id == longest
    with pytest.raises(TrajectoryFormatError) as refused:
        browser_use.parse_history({"history": []}, f"{longest}t.json", _nothing_beside)
    assert (refused.value.where, refused.value.message) == (
        "(file name)", f"task id longer than 255 characters: {'t' * 40}...")
    result = json.dumps({"task_id": "r" * 256, "instruction": "x", "passed": True, "verifier_message": ""})
    with pytest.raises(TrajectoryFormatError) as refused:
        browser_use.parse_history({"history": []}, "task_1/history.json",
                                  lambda name: result.encode() if name == "result.json" else _nothing_beside(name))
    assert refused.value.where == "result.json.task_id"
    with pytest.raises(TrajectoryFormatError) as refused:
        browser_use.parse_history({"history": []}, "/", _nothing_beside)
    assert (refused.value.where, refused.value.message) == (
        "(file name)", "no task id: name the file or its folder after the task")


def _beside(files: dict[str, object]):
    """An upload of the given JSON documents beside the history, by name."""
    def read_sibling(name: str) -> bytes:
        if name not in files:
            raise FileNotFoundError(name)
        return json.dumps(files[name]).encode()
    return read_sibling


def test_the_harness_result_is_looked_for_in_result_json_then_results_json():
    result = {"task_id": "task_m4", "instruction": " Archive it. ", "passed": False, "verifier_message": " Not archived. ",
              "elapsed": 61.25}
    trajectory, notes = browser_use.parse_history(
        {"history": [], "task": "Something else"}, "task_1/history.json",
        _beside({"result.json": {"status": "ok"}, "results.json": result}))
    assert notes == ["harness verdict from results.json (WebArena-Infinity verifier)"]
    assert (trajectory.task.benchmark, trajectory.task.task_id, trajectory.task.intent) == (
        "webarena-infinity", "task_m4", "Archive it.")
    assert (trajectory.outcome.status, trajectory.outcome.success, trajectory.outcome.message,
            trajectory.outcome.source) == ("crashed", False, "Not archived.", "WebArena-Infinity verifier")
    assert trajectory.duration == 61.25
    trajectory, notes = browser_use.parse_history({"history": []}, "task_1/history.json",
                                                  _beside({"results.json": result}))
    assert (trajectory.task.task_id, notes) == (
        "task_m4", ["harness verdict from results.json (WebArena-Infinity verifier)"])
    # A result without a task id: the history's folder names the task.
    trajectory, _ = browser_use.parse_history({"history": []}, "task_1/history.json",
                                              _beside({"result.json": {**result, "task_id": ""}}))
    assert trajectory.task.task_id == "task_1"
    # A verdict that is not true or false is refused where it is.
    with pytest.raises(TrajectoryFormatError) as refused:
        browser_use.parse_history({"history": []}, "task_1/history.json",
                                  _beside({"result.json": {**result, "passed": "yes"}}))
    assert (refused.value.where, refused.value.message) == ("result.json.passed", "expected true or false, got 'yes'")


def _unreadable(name: str) -> bytes:
    raise ValueError(f"{name}: not a file of the upload")


def test_neighbours_that_cannot_be_read_are_passed_over():
    trajectory, notes = browser_use.parse_history({"history": []}, "task_1/history.json", _unreadable)
    assert (trajectory.task.benchmark, notes) == ("browser-use", [])
    assert browser_use.companion_history(_unreadable) is None
    notes = []
    assert browser_use._screenshot({"screenshot_path": "/tmp/a/step_1.png"}, _unreadable, notes, 0) is None
    assert len(notes) == 1


def test_the_history_beside_a_result_is_any_of_its_names_in_order():
    assert browser_use.companion_history(_beside({"agent_history.json": {}})) == "agent_history.json"
    assert browser_use.companion_history(_beside({"AgentHistoryList.json": {}, "agent_history.json": {}})) == (
        "AgentHistoryList.json")
    assert browser_use.companion_history(_beside({"history.json": {}, "agent_history.json": {}})) == "history.json"
    assert browser_use.companion_history(_beside({"result.json": {}})) is None


def test_what_is_taken_for_a_history_or_a_result():
    assert browser_use.looks_like_history({"history": []})
    assert browser_use.looks_like_history({"history": [{"model_output": None, "state": {}}]})
    assert browser_use.looks_like_history({"history": [{"model_output": None, "state": {}, "result": []}, "step"]})
    assert not browser_use.looks_like_history({"history": [{"model_output": {}}]})
    assert not browser_use.looks_like_history({"history": [{"state": {}}]})
    assert not browser_use.looks_like_history({"history": ["step"]})
    assert not browser_use.looks_like_history({"history": {"model_output": {}, "state": {}}})
    assert not browser_use.looks_like_history([{"history": []}])
    exactly = {"task_id": "t", "instruction": "x", "passed": True, "verifier_message": ""}
    assert browser_use.looks_like_infinity_result(exactly)
    assert not browser_use.looks_like_infinity_result({k: v for k, v in exactly.items() if k != "verifier_message"})
    assert not browser_use.looks_like_infinity_result([exactly])


def test_a_result_alone_without_the_agents_answer_or_finish_has_no_answer():
    result = {"task_id": "task_h2", "instruction": " Label it. ", "passed": False, "verifier_message": " Wrong label. ",
              "is_done": False, "final_result": "Labelled.", "elapsed": 41}
    trajectory = browser_use.parse_infinity_result(result)
    assert (trajectory.task.benchmark, trajectory.task.task_id, trajectory.task.intent) == (
        "webarena-infinity", "task_h2", "Label it.")
    outcome = trajectory.outcome
    assert (outcome.status, outcome.success, outcome.message, outcome.source) == (
        "no_stop", False, "Wrong label.", "WebArena-Infinity verifier")
    assert (trajectory.final_answer, trajectory.duration, trajectory.steps, trajectory.run.agent) == (
        None, 41.0, [], "browser-use")
    # Finished (or not said otherwise): the answer, N/A read as such.
    answered = browser_use.parse_infinity_result({**result, "is_done": None})
    assert (answered.outcome.status, answered.final_answer) == ("answered", "Labelled.")
    na = browser_use.parse_infinity_result({**result, "is_done": True, "final_result": "N/A"})
    assert (na.outcome.status, na.final_answer) == ("na", "N/A")
    unanswered = browser_use.parse_infinity_result({**result, "is_done": True, "final_result": None})
    assert (unanswered.outcome.status, unanswered.final_answer) == ("no_stop", None)
    # An answer that is not text is none.
    unanswered = browser_use.parse_infinity_result({**result, "is_done": True, "final_result": 5})
    assert (unanswered.outcome.status, unanswered.final_answer) == ("no_stop", None)


def test_a_result_alone_is_refused_without_its_task_id_or_with_a_verdict_not_true_or_false():
    result = {"task_id": "task_h2", "instruction": "x", "passed": True, "verifier_message": ""}
    with pytest.raises(TrajectoryFormatError) as refused:
        browser_use.parse_infinity_result({**result, "task_id": None})
    assert refused.value.where == "task_id"
    with pytest.raises(TrajectoryFormatError) as refused:
        browser_use.parse_infinity_result({**result, "passed": 1})
    assert (refused.value.where, refused.value.message) == ("(document).passed", "expected true or false, got 1")


_LABELS = {"5": "Colour"}  # element 5's text in the early layout's indexed elements
_SCROLL = {"type": "scroll", "delta_x": 0.0}


@pytest.mark.parametrize(("name", "params", "expected"), [
    ("click", {"index": 5}, ActionParts(type="click", element_id="5", element_label="Colour")),
    ("click_element", {"index": 5, "num_clicks": 1}, ActionParts(type="click", element_id="5", element_label="Colour")),
    ("click_element_by_index", {"index": 6}, ActionParts(type="click", element_id="6")),
    ("click", {"coordinate_x": "12", "coordinate_y": 0}, ActionParts(type="click", x=12.0, y=0.0)),
    ("click", {"index": True}, ActionParts(type="click")),  # neither a bool nor a string is an element index
    ("click", {"index": "5"}, ActionParts(type="click")),
    ("input", {"index": 5, "text": " blue "},
     ActionParts(type="type", element_id="5", element_label="Colour", value="blue", press_enter=False)),
    ("input_text", {"index": 5, "text": 42},
     ActionParts(type="type", element_id="5", element_label="Colour", value="42", press_enter=False)),
    ("select_dropdown", {"index": 5, "text": " Red "},
     ActionParts(type="select", element_id="5", element_label="Colour", value="Red")),
    ("select_dropdown_option", {"index": 5, "text": "Blue"},
     ActionParts(type="select", element_id="5", element_label="Colour", value="Blue")),
    ("navigate", {"url": " https://a.test/ ", "new_tab": True, "index": 5}, ActionParts(type="goto", value="https://a.test/")),
    ("go_to_url", {"url": "https://b.test/"}, ActionParts(type="goto", value="https://b.test/")),
    ("open_tab", {"url": "https://c.test/"}, ActionParts(type="goto", value="https://c.test/")),
    ("search", {"query": "a b", "engine": " Bing "}, ActionParts(type="goto", value="https://www.bing.com/search?q=a%20b")),
    ("search", {"query": "a&b", "engine": "yahoo"}, ActionParts(type="goto", value="https://www.google.com/search?q=a%26b")),
    ("search", {"query": "x/y"}, ActionParts(type="goto", value="https://www.google.com/search?q=x/y")),
    ("search_google", {"query": 5}, ActionParts(type="goto", value="https://www.google.com/search?q=")),
    ("scroll", {}, ActionParts(type="scroll", value="down")),
    ("scroll", {"down": None, "amount": "2"}, ActionParts(**_SCROLL, value="down", delta_y=2.0)),
    ("scroll", {"down": False, "amount": 2, "index": 5},
     ActionParts(**_SCROLL, value="up", delta_y=-2.0, element_id="5", element_label="Colour")),
    ("scroll_down", {"amount": 300, "down": False}, ActionParts(**_SCROLL, value="down", delta_y=300.0)),
    ("scroll_up", {}, ActionParts(type="scroll", value="up")),
    ("scroll_up", {"amount": 0}, ActionParts(**_SCROLL, value="up", delta_y=0.0)),
    ("send_keys", {"keys": " Control+a "}, ActionParts(type="press", value="Control+a")),
    ("go_back", {"index": 5}, ActionParts(type="go_back")),
    ("switch", {"tab_id": "AB12", "page_id": 1}, ActionParts(type="tab_focus", value="AB12")),
    ("switch_tab", {"page_id": 0}, ActionParts(type="tab_focus", value="0")),
    ("switch_tab", {}, ActionParts(type="tab_focus", value="")),
    ("close", {"tab_id": "AB12"}, ActionParts(type="close_tab")),
    ("close_tab", {"page_id": 1}, ActionParts(type="close_tab")),
    ("done", {"text": " Found it. ", "success": True}, ActionParts(type="stop", value="Found it.")),
    ("done", {"success": False}, ActionParts(type="stop")),
    ("extract", {"query": "prices", "index": 5}, ActionParts(type="none")),
    ("upload_file", {"index": 5, "path": "a.pdf"}, ActionParts(type="none")),
])
def test_each_browser_use_action_in_the_platforms_action_kinds(name, params, expected):
    assert browser_use._parts(name, params, None, None, _LABELS) == expected


@pytest.mark.parametrize(("element", "label"), [
    ({"node_name": "BUTTON", "ax_name": "Star", "attributes": {"aria-label": "Mark", "title": "t"}}, "button 'Star'"),
    ({"node_name": "A", "ax_name": " ", "attributes": {"aria-label": " Home ", "title": "Go home"}}, "a 'Home'"),
    ({"node_name": "SPAN", "attributes": {"title": "Close"}}, "span 'Close'"),
    ({"node_name": "INPUT", "attributes": {"placeholder": "Search", "name": "q"}}, "input 'Search'"),
    ({"node_name": "INPUT", "attributes": {"name": "q"}}, "input 'q'"),
    ({"attributes": {"title": "Close"}}, "Close"),  # no role: the name alone
    ({"node_name": " DIV ", "attributes": "class=x"}, "div"),  # no name: the role alone
    ({"node_name": "IMG", "attributes": ["alt"], "ax_name": "Logo"}, "img 'Logo'"),
    ({}, ""),
    ("button", ""),
    (None, ""),
])
def test_an_interacted_element_is_named_as_the_accessibility_tree_would(element, label):
    assert browser_use._element_label(element) == label


def test_the_element_and_its_xpath_come_from_the_interacted_element_before_the_indexed_elements():
    element = {"node_name": "INPUT", "attributes": {"name": "q"}, "x_path": " html/body/input[1] "}
    assert browser_use._parts("input_text", {"index": 5, "text": "red"}, element, None, _LABELS) == ActionParts(
        type="type", element_id="5", element_label="input 'q'", value="red", press_enter=False,
        selector="html/body/input[1]")
    # Nameless, the element is named by the indexed elements; a non-object element has no XPath.
    assert browser_use._parts("click", {"index": 5}, {"x_path": "html/a[2]"}, None, _LABELS) == ActionParts(
        type="click", element_id="5", element_label="Colour", selector="html/a[2]")
    assert browser_use._parts("click", {"index": 5}, "html/a[2]", None, {}) == ActionParts(type="click",
                                                                                          element_id="5")


def test_a_click_lands_where_the_action_said_else_where_its_result_recorded():
    at = {"metadata": {"click_x": 5, "click_y": "6.5"}}
    assert browser_use._point({"coordinate_x": 1, "coordinate_y": 2}, at) == (1.0, 2.0)
    assert browser_use._point({"coordinate_x": 1, "coordinate_y": None}, at) == (5.0, 6.5)
    assert browser_use._point({"coordinate_y": 2}, at) == (5.0, 6.5)
    assert browser_use._point({}, {"metadata": {"click_x": 5}}) == (None, None)
    assert browser_use._point({}, {"metadata": [5, 6]}) == (None, None)
    assert browser_use._point({}, None) == (None, None)


def test_the_early_layouts_indexed_elements_as_observation_and_names():
    state = {"items": [
        {"index": 0, "text": " Welcome ", "is_text_only": True, "depth": 1},
        {"index": 1, "text": "<a>Home</a>", "is_text_only": False, "depth": 2},
        "stray",
        {"index": 2, "text": "<b>x</b>", "depth": -3},
        {"index": 3, "text": "deep", "depth": 40, "is_text_only": True},
        {"index": 4, "text": None, "depth": "2"},
        {"text": "no index", "depth": 32},
    ]}
    assert browser_use._legacy_observation(state) == (
        "\tWelcome\n\t\t[1]<a>Home</a>\n[2]<b>x</b>\n" + "\t" * 32 + "deep\n[4]\n" + "\t" * 32 + "[None]no index")
    # Text that is not an element (is_text_only) names none, nor does an item without an index.
    assert browser_use._legacy_labels(state) == {"1": "<a>Home</a>", "2": "<b>x</b>", "4": ""}
    assert (browser_use._legacy_observation({"items": "x"}), browser_use._legacy_labels({"items": {}})) == ("", {})


def test_the_actions_of_a_model_output_in_order():
    where = "history[0].model_output"
    assert browser_use._actions({"action": {"click": {"index": 1}}}, where) == [("click", {"index": 1})]
    # A null action is none; a bare value is the action's value.
    assert browser_use._actions({"action": [{"wait": None, "go_back": {}}, {"send_keys": "Enter"}]}, where) == [
        ("go_back", {}), ("send_keys", {"value": "Enter"})]
    assert browser_use._actions({}, where) == browser_use._actions({"action": None}, where) == []
    with pytest.raises(TrajectoryFormatError) as refused:
        browser_use._actions({"action": "click"}, where)
    assert (refused.value.where, refused.value.message) == (
        "history[0].model_output.action", "expected an action object {name: {params}}")
    with pytest.raises(TrajectoryFormatError) as refused:
        browser_use._actions({"action": [{"go_back": {}}, 5]}, where)
    assert refused.value.where == "history[0].model_output.action[1]"


def _item(actions, **fields) -> dict:
    return {"model_output": {"action": actions}, "result": [], "state": {}, **fields}


def test_a_history_items_elements_results_time_and_tokens_go_to_its_actions():
    element = {"node_name": "A", "ax_name": "Next", "x_path": "html/body/a[1]"}
    item = _item([{"click": {"index": 2}}, {"click": {"index": 3}}],
                 state={"interacted_element": element, "url": " http://shop.test/ "},
                 result={"metadata": {"click_x": 1, "click_y": 2}},
                 metadata={"step_start_time": "10", "step_end_time": 12.1234567, "input_tokens": "1200",
                           "output_tokens": 12.5})
    [first, second], actions = browser_use._steps(item, 0, _nothing_beside, [])
    # One interacted element and one result (the early layout): the first action's.
    assert first.action_parts == ActionParts(type="click", element_id="2", element_label="a 'Next'",
                                             selector="html/body/a[1]", x=1.0, y=2.0)
    assert second.action_parts == ActionParts(type="click", element_id="3")
    assert (first.url, second.url) == ("http://shop.test/", "http://shop.test/")
    assert (first.duration, first.tokens_in, first.tokens_out) == (2.123457, 1200, None)
    assert actions == [("click", {"index": 2}), ("click", {"index": 3})]
    # The action as the model wrote it, its text unescaped.
    [typed], _ = browser_use._steps(_item([{"input_text": {"index": 3, "text": "Müller ☆"}}]), 0, _nothing_beside, [])
    assert typed.action == '{"input_text": {"index": 3, "text": "Müller ☆"}}'
    # A screenshot not in the upload is named with the place of its item.
    notes = []
    [step], _ = browser_use._steps(_item([], state={"screenshot_path": "/tmp/shots/step_7.png"}), 6, _nothing_beside,
                                   notes)
    assert (step.index, step.screenshot) == (7, None)
    assert notes == ["history[6]: screenshot 'step_7.png' is not in the upload (looked for beside the history and in "
                     "its screenshots folder)"]
    # A step that ends before it starts has no duration; a count of tokens is whole.
    item["metadata"] = {"step_start_time": 12.5, "step_end_time": 10.0, "input_tokens": 7.5}
    [first, _], _ = browser_use._steps(item, 0, _nothing_beside, [])
    assert (first.duration, first.tokens_in) == (None, None)


def test_a_history_item_without_actions_is_one_step_of_no_action():
    [step], actions = browser_use._steps({"model_output": None, "state": "lost", "result": None}, 3, _nothing_beside, [])
    assert (step.index, step.action, step.action_parts, step.url, step.reasoning, actions) == (
        4, "", ActionParts(type="none"), "", "", [])
    with pytest.raises(TrajectoryFormatError) as refused:
        browser_use._steps({"model_output": "click", "state": {}}, 3, _nothing_beside, [])
    assert (refused.value.where, refused.value.message) == ("history[3].model_output", "expected an object or null")


def test_the_agents_reasoning_in_either_layout():
    early = {"current_state": {"evaluation_previous_goal": "Failed", "valuation_previous_goal": "Old",
                               "memory": " Page 2 ", "next_goal": "Retry"}, "thinking": "Hm"}
    assert browser_use._reasoning(early) == (
        "Hm\nEvaluation of the previous goal: Failed\nMemory: Page 2\nNext goal: Retry")
    assert browser_use._reasoning({"current_state": "x", "memory": "M", "valuation_previous_goal": "Old"}) == (
        "Evaluation of the previous goal: Old\nMemory: M")
    assert browser_use._reasoning({"thinking": " ", "next_goal": None}) == ""


def test_the_done_actions_answer_and_the_agents_own_success():
    assert browser_use._done([("click", {})], [{"success": True}]) is None
    assert browser_use._done([("click", {}), ("done", {"text": "y"})], []) == ("y", None)
    assert browser_use._done([("done", {"text": 5})], [{"success": "yes"}]) == ("", None)
    # Its own `success` first, else the first result's that is true or false.
    assert browser_use._done([("done", {"text": "x"})], [{"success": "yes"}, {"success": False},
                                                         {"success": True}]) == ("x", False)
    assert browser_use._done([("done", {"text": "x", "success": True})], [{"success": False}]) == ("x", True)


def _done_item(text, success=None, judgement=None) -> dict:
    params = {"text": text} if success is None else {"text": text, "success": success}
    result = {"is_done": True} if judgement is None else {"is_done": True, "judgement": judgement}
    return _item([{"done": params}], result=[result])


def test_how_a_history_ended_and_who_said_whether_it_succeeded():
    def read(*items, **fields):
        trajectory, _ = browser_use.parse_history({"history": list(items), **fields}, "task_1/history.json",
                                                  _nothing_beside)
        return trajectory

    empty = read()
    assert (empty.steps, empty.outcome.status, empty.final_answer, empty.verdicts, empty.task.intent) == (
        [], "crashed", None, [], "")
    unfinished = read(_item([{"go_back": {}}]))
    assert (unfinished.outcome.status, unfinished.final_answer) == ("no_stop", None)
    # The last `done` and the last judgement stand.
    twice = read(_done_item("first", False, {"verdict": False}), _done_item("second", True, {"verdict": True}))
    assert (twice.outcome.status, twice.final_answer) == ("answered", "second")
    assert [(v.kind, v.success) for v in twice.verdicts] == [("agent_self_report", True), ("llm_judge", True)]
    after = read(_done_item("first", False, {"verdict": False}), _item([{"go_back": {}}]))
    assert [(v.kind, v.success) for v in after.verdicts] == [("agent_self_report", False), ("llm_judge", False)]
    assert after.final_answer == "first"
    # No word of its own: no self-report.
    silent = read(_done_item("Paris"))
    assert (silent.outcome.status, silent.verdicts) == ("answered", [])
    with pytest.raises(TrajectoryFormatError) as refused:
        read(_item([]), "step")
    assert (refused.value.where, refused.value.message) == ("history[1]", "expected a history item object")


def test_the_task_text_is_the_historys_own_before_the_prompts():
    prompt = _item([], state_message="<agent_state>\n<user_request>\n  Buy socks.\nBlue ones.\n</user_request>\n"
                                     "</agent_state>")
    trajectory, _ = browser_use.parse_history({"history": [prompt], "task": " Buy shoes. "}, "t/history.json",
                                              _nothing_beside)
    assert trajectory.task.intent == "Buy shoes."
    trajectory, _ = browser_use.parse_history({"history": [_item([]), prompt, _item([], state_message="x")]},
                                              "t/history.json", _nothing_beside)
    assert trajectory.task.intent == "Buy socks.\nBlue ones."
    assert trajectory.steps[1].observation == prompt["state_message"]


def test_the_runs_usage_is_its_tokens_and_cost():
    usage = {"total_prompt_tokens": 1500, "total_completion_tokens": "90", "total_cost": 0.0125}
    trajectory, _ = browser_use.parse_history({"history": [], "usage": usage}, "t/history.json", _nothing_beside)
    assert (trajectory.tokens_in, trajectory.tokens_out, trajectory.cost) == (1500, 90, 0.0125)
    # Counts of tokens are whole.
    fractions = {**usage, "total_prompt_tokens": 1500.5, "total_completion_tokens": "90.5"}
    trajectory, _ = browser_use.parse_history({"history": [], "usage": fractions}, "t/history.json", _nothing_beside)
    assert (trajectory.tokens_in, trajectory.tokens_out, trajectory.cost) == (None, None, 0.0125)
    trajectory, _ = browser_use.parse_history({"history": [], "usage": [usage]}, "t/history.json", _nothing_beside)
    assert (trajectory.tokens_in, trajectory.tokens_out, trajectory.cost) == (None, None, None)


def test_a_screenshot_is_looked_for_in_the_screenshots_folder_then_beside_the_history():
    asked, notes = [], []

    def beside_only(name):
        asked.append(name)
        if name != "step_3.png":
            raise FileNotFoundError(name)
        return PNG

    state = {"screenshot_path": "C:\\Temp\\agent\\screenshots\\step_3.png"}
    assert browser_use._screenshot(state, beside_only, notes, 2) == "step_3.png"
    assert (asked, notes) == (["screenshots/step_3.png", "step_3.png"], [])
    assert browser_use._screenshot({"screenshot_path": "C:\\run\\shots\\step_4.png"}, _nothing_beside, notes, 5) is None
    assert notes == ["history[5]: screenshot 'step_4.png' is not in the upload (looked for beside the history and "
                     "in its screenshots folder)"]
    # An inline screenshot is a data: URI; none, or a blank path, is no screenshot and no note.
    assert browser_use._screenshot({"screenshot": "data:image/jpeg;base64,/9j/"}, _nothing_beside, notes, 0) == (
        "data:image/jpeg;base64,/9j/")
    assert browser_use._screenshot({"screenshot": "iVBOR"}, _nothing_beside, notes, 0) == "data:image/png;base64,iVBOR"
    assert browser_use._screenshot({"screenshot": "", "screenshot_path": " "}, _nothing_beside, notes, 0) is None
    assert browser_use._screenshot({"screenshot": 5, "screenshot_path": 5}, _nothing_beside, notes, 0) is None
    assert len(notes) == 1
    # A parent folder is never looked in; a path of separators only names no file: nothing is looked for.
    asked.clear()
    assert browser_use._screenshot({"screenshot_path": "/run/../step_3.png"}, beside_only, notes, 1) == "step_3.png"
    assert asked == ["step_3.png"]
    asked.clear()
    assert browser_use._screenshot({"screenshot_path": "//"}, beside_only, notes, 1) is None
    assert asked == [] and notes[-1].startswith("history[1]: screenshot '' is not in the upload")


def test_the_run_summary_marks_a_tasks_folder_by_its_history_or_result():
    entry = {"task_id": " task_e1 ", "instruction": " Star it. ", "passed": True, "verifier_message": ""}
    summary = browser_use.parse_infinity_summary({"total": 1, "passed": 1, "model": " gemini ", "tasks": [entry]})
    assert summary.folder_files == ("history.json", "AgentHistoryList.json", "agent_history.json", "result.json",
                                    "results.json")
    assert (summary.format, summary.run.agent, summary.run.model, summary.problems) == (
        "webarena_infinity_summary", "browser-use", "gemini", [])
    [found] = summary.entries
    # An entry that is not an object is quoted in its problem, cut at 80 characters.
    summary = browser_use.parse_infinity_summary({"total": 2, "passed": 1, "tasks": [entry, "x" * 100]})
    assert summary.problems == [f'tasks[1]: expected a task object, got "{"x" * 79}']
    assert (found.task.task_id, found.task.benchmark, found.task.intent, found.folder, found.success, found.line) == (
        "task_e1", "webarena-infinity", "Star it.", "task_e1", True, "tasks[0]")
