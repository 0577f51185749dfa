import pytest

from tests.trajectories.renders import RenderStep, png, render_html
from trajectories.formats.canonical import TrajectoryFormatError
from trajectories.formats.text import decode_utf8
from trajectories.formats.webarena_render import decode_render, parse_header, parse_render


def _sample(shared_data, name):
    path = shared_data / "trajectory-samples" / name
    return parse_render(path.read_text(encoding="utf-8"), path.name)


def test_gpt4turbo_sample_two_steps_answered(shared_data):
    trajectory = _sample(shared_data, "gpt4turbo_render_0.html")
    assert trajectory.task.task_id == "0"
    assert trajectory.task.intent == "What is the top-1 best-selling product in 2022"
    assert len(trajectory.steps) == 2
    assert trajectory.final_answer == "Quest Lumaflex™ Band"
    assert (trajectory.outcome.status, trajectory.outcome.reason) == ("answered", None)
    first, second = trajectory.steps
    assert first.url == "http://localhost:7780/admin/admin/dashboard/"
    assert first.observation.startswith("Tab 0 (current): Dashboard / Magento Admin\n\n[251] RootWebArea")
    assert first.screenshot.startswith("data:image/png;base64,iVBOR")
    assert first.prev_action == ""
    assert first.planned_action == "click [1090]"
    assert first.action.startswith("click [1090] where [1090] is [1090] link 'Go to Advanced Reporting")
    parts = first.action_parts
    assert (parts.type, parts.element_id, parts.value) == ("click", "1090", "")
    assert parts.element_label.startswith("link 'Go to Advanced Reporting \\ue644' url: http://localhost:7780/")
    assert second.prev_action.startswith("click [1090] where [1090] is link 'Go to Advanced Reporting")
    assert second.reasoning.endswith("In summary, the next action I will perform is ```stop [Quest Lumaflex™ Band]```")
    assert second.planned_action == second.action == "stop [Quest Lumaflex™ Band]"


def test_llama_render_3_eight_agent_steps_then_a_forced_stop(shared_data):
    trajectory = _sample(shared_data, "llama3-8b_render_3.html")
    assert len(trajectory.steps) == 8  # the ninth block is the harness's stop, not an agent step
    assert [step.action for step in trajectory.steps] == [
        "none",
        "click [20] where [20] is Today Last 24 Hours Last 7 Days Current Month YTD 2YTD",
        "click [14] where [14] is All Store Views",
        "none",
        "new_tab",
        "none",
        "none",
        "none",
    ]
    assert [step.planned_action for step in trajectory.steps] == [
        None,  # `type [21] [] [1]` in single backticks states no action
        "click [20]",
        "click [14]",
        None,
        "new_tab",
        None,
        "goto ['http://homepage.com']",  # after a stray "````action [arg] ...```" earlier in the text
        "action [arg]",
    ]
    assert [step.action_parts.type for step in trajectory.steps[-3:]] == ["none"] * 3
    assert trajectory.steps[1].action_parts.element_label == "Today Last 24 Hours Last 7 Days Current Month YTD 2YTD"
    assert trajectory.steps[5].url == "about:blank"
    assert trajectory.outcome.status == "early_stop"
    assert trajectory.outcome.reason == "invalid_actions"
    assert trajectory.outcome.message == "Early stop: Failed to parse actions for 3 times"
    assert trajectory.final_answer is None
    assert all(step.screenshot for step in trajectory.steps)


def test_llama_render_6_stops_with_its_own_na(shared_data):
    trajectory = _sample(shared_data, "llama3-8b_render_6.html")
    assert [step.planned_action for step in trajectory.steps] == ["click [20]", "click [21]", "stop ['N/A']"]
    assert [step.action for step in trajectory.steps] == [
        "click [20] where [20] is Today Last 24 Hours Last 7 Days Current Month YTD 2YTD",
        "click [21] where [21] is Bestsellers",
        "stop ['N/A']",
    ]
    assert trajectory.outcome.status == "na"
    assert trajectory.final_answer == "'N/A'"
    assert trajectory.steps[2].prev_action == "click [21] where [21] is"


def test_header_values_are_python_reprs_except_text():
    header = parse_header(
        "sites: ['gitlab', 'reddit']\ntask_id: 44\nrequire_login: True\ngeolocation: None\n"
        "intent: Open my todos: all of them\ncontinued on a second line\n"
        "eval: {'eval_types': ['url_match'], 'reference_answers': None}\n"
    )
    assert header["sites"] == ["gitlab", "reddit"]
    assert header["task_id"] == 44 and header["require_login"] is True and header["geolocation"] is None
    assert header["intent"] == "Open my todos: all of them\ncontinued on a second line"
    assert header["eval"] == {"eval_types": ["url_match"], "reference_answers": None}


def test_unescaped_markup_in_page_text_and_reasoning_stays_text():
    observation = "Tab 0 (current): Code\n\n[7] StaticText '</pre><div> <img src=x> <h3 class='url'>'"
    reasoning = "The page shows <script>alert(1)</script> and </pre></div>. In summary ```click [7]```"
    trajectory = parse_render(render_html(steps=[RenderStep(action="click [7]", observation=observation,
                                                            reasoning=reasoning, screenshot=png())]))
    step = trajectory.steps[0]
    assert step.observation == observation
    assert step.reasoning == reasoning
    assert step.planned_action == "click [7]"
    assert step.screenshot.startswith("data:image/png;base64,")
    # The label comes from the step's own tree when the action has no `where` suffix.
    assert step.action_parts.element_label == "StaticText '</pre><div> <img src=x> <h3 class='url'>'"


def test_steps_without_screenshots_and_an_answer_holding_brackets():
    trajectory = parse_render(render_html(steps=[
        RenderStep(action="type [5] [blue shoes] [1] where [5] is combobox 'Search'",
                   reasoning="```type [5] [blue shoes] [1]```"),
        RenderStep(action="stop [The answer is [42]]", prev_action="type [5] [blue shoes] [1]"),
    ]))
    typed, stop = trajectory.steps
    assert typed.screenshot is None
    parts = typed.action_parts
    assert (parts.type, parts.element_id, parts.value, parts.press_enter, parts.element_label) == (
        "type", "5", "blue shoes", True, "combobox 'Search'")
    assert trajectory.final_answer == "The answer is [42]"
    assert trajectory.outcome.status == "answered"


@pytest.mark.parametrize(
    ("stop", "reason"),
    [
        ("stop [Early stop: Same action for 3 times]", "repeated_action"),
        ("stop [Early stop: Failed to parse actions for 3 times]", "invalid_actions"),
        ("stop [Early stop: Reach max steps 30]", "max_steps"),
        ("stop [Reach max steps 30]", "max_steps"),
    ],
)
def test_forced_stops_end_the_agent_steps(stop, reason):
    trajectory = parse_render(render_html(steps=[RenderStep(action="scroll [down]"), RenderStep(action=stop)]))
    assert [step.action for step in trajectory.steps] == ["scroll [down]"]
    assert (trajectory.outcome.status, trajectory.outcome.reason) == ("early_stop", reason)
    assert trajectory.outcome.message == stop[len("stop ["):-1]


def test_zero_steps_is_a_crashed_run():
    trajectory = parse_render(render_html(task_id="17", steps=[]))
    assert trajectory.task.task_id == "17"
    assert trajectory.steps == []
    assert trajectory.outcome.status == "crashed"


def test_trajectory_without_a_stop():
    trajectory = parse_render(render_html(steps=[RenderStep(action="scroll [down]")]))
    assert trajectory.outcome.status == "no_stop"
    assert trajectory.final_answer is None


def test_task_id_from_the_file_name_when_the_header_lacks_it():
    text = render_html(steps=[RenderStep(action="scroll [down]")]).replace("task_id: 3\n", "")
    assert parse_render(text, "results/render_123.html").task.task_id == "123"
    with pytest.raises(TrajectoryFormatError, match="no task_id"):
        parse_render(text, "trajectory.html")


def test_a_step_cut_off_while_being_written_names_its_line():
    text = render_html(steps=[RenderStep(action="scroll [down]"), RenderStep(action="scroll [up]")])
    cut = text[: text.rindex("<div class='predict_action'>")]
    with pytest.raises(TrajectoryFormatError) as caught:
        parse_render(cut)
    assert caught.value.where == "step block 2"
    assert caught.value.line == cut[: cut.rindex("<h2>New Page</h2>")].count("\n") + 1
    assert "no parsed_action" in str(caught.value)


@pytest.mark.parametrize("text", ["<html><body><p>hello</p></body></html>",
                                  "<html><body><pre>note: a page with a pre</pre></body></html>"])
def test_not_a_render_file(text):
    with pytest.raises(TrajectoryFormatError, match="not a WebArena render file"):
        parse_render(text, "render_5.html")


def _read_as_bytes(data: bytes, name: str = "render_3.html"):
    text, screenshots, valid = decode_render(data)
    return parse_render(text, name, screenshots), valid


def _read_as_text(data: bytes, name: str = "render_3.html"):
    text, valid = decode_utf8(data)
    return parse_render(text, name), valid


@pytest.mark.parametrize("folder, name", [
    ("trajectory-samples", "gpt4turbo_render_0.html"), ("trajectory-samples", "llama3-8b_render_3.html"),
    ("trajectory-samples", "llama3-8b_render_6.html"), ("results-sample", "render_3.html"),
    ("results-sample", "render_6.html"),
])
def test_screenshots_kept_apart_while_decoding_give_the_same_trajectory(shared_data, folder, name):
    data = (shared_data / folder / name).read_bytes()
    text, screenshots, valid = decode_render(data)
    assert screenshots and valid
    assert all(value.isascii() and len(value) > 1000 for value in screenshots.values())
    assert _read_as_bytes(data, name)[0].to_dict() == _read_as_text(data, name)[0].to_dict()


def _render_bytes(steps, **kwargs) -> bytes:
    return render_html(steps=steps, **kwargs).encode("utf-8")


@pytest.mark.parametrize("observation", [
    # an image in the page text: its payload goes back into the observation
    "Tab 0: page <img src='data:image/png;base64,QUJD'> and text",
    "<img src=\"data:image/png;base64,QUJD\"></pre><div>\n<img src='data:image/png;base64,QUJD'/>",
    "text é ✓ 😀 <img src='data:image/gif;base64,R0lGOD",  # never closed
])
def test_images_in_page_text_stay_in_the_observation(observation):
    data = _render_bytes([RenderStep("click [1]", observation=observation, screenshot=png()),
                          RenderStep("stop [done]", screenshot=png((1, 2, 3)))])
    trajectory, _ = _read_as_bytes(data)
    assert trajectory.steps[0].observation == observation
    assert trajectory.to_dict() == _read_as_text(data)[0].to_dict()


@pytest.mark.parametrize("mangle", [
    lambda data: data.replace(b"base64,iVBOR", b"base64,\xe2\x9c\x93iVBOR", 1),  # not ASCII
    lambda data: data.replace(b"base64,iVBOR", b"base64,iVB\nOR", 1),  # wrapped: lines must not move
    lambda data: data.replace(b"base64,iVBOR", b"base64,iVB\r\nOR", 1),
    lambda data: data.replace(b"src='", b"src=\"", 1).replace(b"' style=", b"\" style=", 1),
    lambda data: b"\xef\xbb\xbf" + data,  # byte-order mark
    lambda data: data.replace(b"Tab 0", b"Tab \xff 0", 1),  # not UTF-8 outside the images
    lambda data: data.replace(b"style='width", b"style='\xffwidth", 1),  # ... and right after one
    lambda data: data.replace(b"data:image/png;base64,", b"data:image/png,", 1),  # not base64
    lambda data: data[: data.rindex(b"<div class='parsed_action'")],  # cut off while written
])
def test_odd_files_read_alike_with_screenshots_kept_apart_or_not(mangle):
    data = mangle(_render_bytes([RenderStep("click [1]", screenshot=png()), RenderStep("stop [x]", screenshot=png())]))
    try:
        expected = _read_as_text(data)
    except TrajectoryFormatError as error:
        with pytest.raises(TrajectoryFormatError) as raised:
            _read_as_bytes(data)
        assert (raised.value.message, raised.value.where, raised.value.line) == (error.message, error.where, error.line)
        return
    trajectory, valid = _read_as_bytes(data)
    assert (trajectory.to_dict(), valid) == (expected[0].to_dict(), expected[1])
