import re

import pytest

from metrics.definitions import ElementMiss, element_accuracy, points_to_resolve
from metrics.definitions.element_accuracy import (
    BY_COORDINATES,
    BY_SCREENSHOT,
    DIFFERENT_TARGET,
    EXECUTED_ACTION_INVALID,
    NO_PLANNED_ACTION,
    NO_SCREENSHOT_AT_POINT,
    NO_STATED_ACTION,
    OTHER_ELEMENT_AT_POINT,
    PLANNED_ACTION_UNPARSEABLE,
)
from trajectories.formats.actions import extract_planned_action
from trajectories.formats.canonical import ActionParts
from trajectories.formats.webarena_render import parse_render

# Planned (`extract_planned_action` of the reasoning) and executed actions of the nine step
# blocks of llama3-8b_render_3.html in ../shared/data/trajectory-samples.
RENDER_3_PLANNED = [
    None,
    "click [20]",
    "click [14]",
    None,
    "new_tab",
    None,
    "goto ['http://homepage.com']",
    "action [arg]",
    None,
]
RENDER_3_EXECUTED = [
    "none",
    "click [20] where [20] is Today Last 24 Hours Last 7 Days Current Month YTD 2YTD",
    "click [14] where [14] is All Store Views",
    "none",
    "new_tab",
    "none",
    "none",
    "none",
    "stop [Early stop: Failed to parse actions for 3 times]",
]


def _div_texts(html: str, name: str) -> list[str]:
    return re.findall(r"<div class='%s'[^>]*><pre>(.*?)</pre>" % name, html, re.S)


def test_sample_actions_are_those_of_the_file(shared_data):
    html = (shared_data / "trajectory-samples" / "llama3-8b_render_3.html").read_text(encoding="utf-8")
    assert [extract_planned_action(text) for text in _div_texts(html, "raw_parsed_prediction")] == RENDER_3_PLANNED
    assert [text.strip() for text in _div_texts(html, "parsed_action")] == RENDER_3_EXECUTED


def test_weak_agent_sample_with_forced_stop():
    result = element_accuracy(RENDER_3_PLANNED, RENDER_3_EXECUTED)
    assert (result.steps, result.hits, result.value) == (8, 3, 3 / 8)
    assert result.forced_stop_step == 9
    assert [(miss.step, miss.reason) for miss in result.misses] == [
        (1, NO_PLANNED_ACTION),
        (4, NO_PLANNED_ACTION),
        (6, NO_PLANNED_ACTION),
        (7, EXECUTED_ACTION_INVALID),
        (8, PLANNED_ACTION_UNPARSEABLE),
    ]


def test_labels_and_where_suffixes_are_ignored():
    result = element_accuracy(
        ["click [1090]", "stop [Quest Lumaflex™ Band]"],
        [
            "click [1090] where [1090] is [1090] link 'Go to Advanced Reporting \ue644' "
            "url: http://localhost:7780/admin/analytics/reports/show/",
            "stop [Quest Lumaflex™ Band]",
        ],
    )
    assert (result.value, result.misses, result.forced_stop_step) == (1.0, (), None)


def test_no_steps_is_null():
    result = element_accuracy([], [])
    assert (result.value, result.steps) == (None, 0)


def test_only_a_forced_stop_is_null():
    result = element_accuracy([None], ["stop [Early stop: Reach max steps 30]"])
    assert (result.value, result.steps, result.forced_stop_step) == (None, 0, 1)


def test_steps_after_a_forced_stop_are_left_out():
    result = element_accuracy(
        ["click [1]", None, "click [2]"],
        ["click [1]", "stop [Early stop: Same action for 3 times]", "scroll [down]"],
    )
    assert (result.steps, result.hits, result.value, result.forced_stop_step) == (1, 1, 1.0, 2)


def test_single_action():
    assert element_accuracy(["go_back"], ["go_back"]).value == 1.0
    assert element_accuracy(["go_back"], ["go_forward"]).value == 0.0


def test_planned_action_in_a_wrong_format_is_a_miss():
    result = element_accuracy(["scroll [direction=down]"], ["scroll [down]"])
    assert result.value == 0.0
    assert result.misses == (ElementMiss(1, "scroll [direction=down]", "scroll [down]", DIFFERENT_TARGET),)


def test_executed_none_is_a_miss():
    result = element_accuracy(["click [5]"], ["none"])
    assert result.misses[0].reason == EXECUTED_ACTION_INVALID


def test_blank_planned_action_is_no_planned_action():
    assert element_accuracy(["  "], ["click [5]"]).misses[0].reason == NO_PLANNED_ACTION


def test_element_text_and_enter_flag_are_compared():
    executed = "type [12] [hello] [1] where [12] is textbox 'Search'"
    assert element_accuracy(["type [12] [hello] [1]"], [executed]).value == 1.0
    assert element_accuracy(["type [12] [hello]"], [executed]).value == 1.0  # the harness's default is 1
    assert element_accuracy(["type [12] [hello] [0]"], [executed]).misses[0].reason == DIFFERENT_TARGET
    assert element_accuracy(["type [12] [hello world] [1]"], [executed]).misses[0].reason == DIFFERENT_TARGET
    assert element_accuracy(["type [13] [hello]"], [executed]).misses[0].reason == DIFFERENT_TARGET


# The harness types `text + "\n"` for Enter and writes the newline as a space in the executed action.
@pytest.mark.parametrize(
    "planned, executed, hit",
    [
        ("type [257] [Quest Lumaflex Band] [1]", "type [257] [Quest Lumaflex Band ]", True),
        ("type [257] [Quest Lumaflex Band]", "type [257] [Quest Lumaflex Band ]", True),
        ("type [257] [Quest Lumaflex Band] [0]", "type [257] [Quest Lumaflex Band]", True),
        ("type [257] [Quest  Lumaflex\nBand] [0]", "type [257] [Quest Lumaflex Band]", True),
        ("type [257] [Quest Lumaflex Band] [0]", "type [257] [Quest Lumaflex Band ]", False),
        ("type [257] [Quest Lumaflex Band] [1]", "type [257] [Quest Lumaflex Band]", False),
        ("type [257] [Quest Lumaflex] [1]", "type [257] [Quest Lumaflex Band ]", False),
    ],
)
def test_type_with_enter_in_the_harness_encoding_on_a_real_render_file(shared_data, planned, executed, hit):
    """gpt4turbo_render_0.html with its first step made a `type` into the page's real search
    textbox [257], planned and executed as the harness writes them."""
    html = (shared_data / "trajectory-samples" / "gpt4turbo_render_0.html").read_text(encoding="utf-8")
    assert html.count("```click [1090]```") == 2 and "[257] textbox" in html
    executed_click = html[html.index("<pre>click [1090] where") + 5 :].split("</pre>")[0]
    html = html.replace("```click [1090]```", f"```{planned}```").replace(
        executed_click, f"{executed} where [257] is [257] textbox '\\ue60c' required: False"
    )
    trajectory = parse_render(html)
    result = element_accuracy([s.planned_action for s in trajectory.steps], [s.action for s in trajectory.steps])
    assert trajectory.steps[0].planned_action == planned
    assert (result.steps, result.hits) == (2, 2 if hit else 1)
    parts = trajectory.steps[0].action_parts
    assert (parts.type, parts.element_id, parts.value) == ("type", "257", "Quest Lumaflex Band")
    assert parts.press_enter == executed.endswith(" ]")


@pytest.mark.parametrize("name", [
    "trajectory-samples/gpt4turbo_render_0.html", "trajectory-samples/llama3-8b_render_3.html",
    "trajectory-samples/llama3-8b_render_6.html", "results-sample/render_3.html", "results-sample/render_6.html",
])
def test_real_render_files(shared_data, name):
    """Every real render file read as the importer reads it: planned actions against executed ones."""
    trajectory = parse_render((shared_data / name).read_text(encoding="utf-8"))
    result = element_accuracy([s.planned_action for s in trajectory.steps], [s.action for s in trajectory.steps])
    expected = {"gpt4turbo_render_0.html": (2, 2), "llama3-8b_render_3.html": (8, 3), "render_3.html": (8, 3),
                "llama3-8b_render_6.html": (3, 3), "render_6.html": (3, 3)}
    assert (result.steps, result.hits) == expected[name.rsplit("/", 1)[-1]]


def test_the_agents_own_stop_is_a_step():
    result = element_accuracy(["stop [N/A]", "stop [42]"], ["stop [42]", "stop [42]"])
    assert (result.steps, result.hits) == (2, 1)
    assert result.misses[0].step == 1


def test_one_planned_action_per_step():
    with pytest.raises(ValueError, match="2 planned actions for 1 executed actions"):
        element_accuracy(["click [1]", None], ["click [1]"])


# Agents whose own output is the executed action, and agents acting by screen coordinates ---------


def test_an_agent_stating_no_action_apart_from_the_executed_one_is_null():
    executed = ["click('20')", "fill('4', 'shoes')"]  # BrowserGym: no WebArena action, no planned one
    result = element_accuracy([None, None], executed, [ActionParts(type="click", element_id="20"),
                                                       ActionParts(type="type", element_id="4", value="shoes")])
    assert (result.value, result.steps, result.null_reason) == (None, 0, NO_STATED_ACTION)


def test_an_agent_acting_by_coordinates_is_null_unless_a_judge_saw_the_points():
    executed = ["Click at (600, 475)", 'Type "support services"', "Click at (10, 20)"]
    parts = [ActionParts(type="click", x=600, y=475), ActionParts(type="type", value="support services"),
             ActionParts(type="click", x=10, y=20)]
    assert points_to_resolve([None] * 3, executed, parts) == (1, 3)
    plain = element_accuracy([None] * 3, executed, parts)
    assert (plain.value, plain.null_reason, plain.by) == (None, BY_COORDINATES, BY_SCREENSHOT)
    # A judge that sees screenshots, but no step at a point had one.
    assert element_accuracy([None] * 3, executed, parts, {}).null_reason == NO_SCREENSHOT_AT_POINT
    # It found step 1 on the element meant (0.9 >= tau 0.7) and step 3 elsewhere (0.0): 1 hit of 2.
    judged = element_accuracy([None] * 3, executed, parts, {1: 0.9, 3: 0.0})
    assert (judged.value, judged.steps, judged.hits, judged.null_reason) == (0.5, 2, 1, "")
    assert judged.misses == (ElementMiss(step=3, planned=None, executed="Click at (10, 20)",
                                         reason=OTHER_ELEMENT_AT_POINT),)


def test_a_webarena_agent_is_compared_by_the_grammar_even_with_parts_and_no_plan():
    # Its executed actions are WebArena's: stating no plan is a miss per step (METRICS.md 4), not null.
    result = element_accuracy([None, None], ["click [3]", "none"], [ActionParts(type="click", element_id="3"),
                                                                  ActionParts(type="none")])
    assert (result.value, result.hits, result.steps) == (0.0, 0, 2)
    assert points_to_resolve([None, None], ["click [3]", "none"], [None, None]) == ()


def test_no_steps_says_why():
    assert element_accuracy([], []).null_reason == "no agent steps"


def test_a_judge_on_the_points_gives_the_whole_result():
    executed = ["Click at (600, 475)", "Click at (10, 20)"]
    parts = [ActionParts(type="click", x=600, y=475), ActionParts(type="click", x=10, y=20)]
    unseen = {"value": None, "steps": 0, "hits": 0, "misses": [], "forced_stop_step": None,
              "by": "judge_on_screenshot", "null_reason": NO_SCREENSHOT_AT_POINT}
    assert element_accuracy([None] * 2, executed, parts, {}).to_dict() == unseen
    # 0.7 is tau itself: a hit; 0.69 below it: a miss.
    assert element_accuracy([None] * 2, executed, parts, {1: 0.7, 2: 0.69}).to_dict() == {
        "value": 0.5, "steps": 2, "hits": 1, "forced_stop_step": None, "by": "judge_on_screenshot",
        "null_reason": "", "misses": [{"step": 2, "planned": None, "executed": "Click at (10, 20)",
                                       "reason": OTHER_ELEMENT_AT_POINT}]}
    with pytest.raises(ValueError) as raised:
        element_accuracy([None] * 2, executed, parts, {1: 1.5})
    assert str(raised.value) == "element at the point of step 1: a judge score must be a number in [0, 1], got 1.5"


def test_a_stated_plan_is_compared_by_the_grammar_even_when_the_executed_action_is_not_webarenas():
    result = element_accuracy(["click [3]"], ["click('3')"], [ActionParts(type="click", element_id="3")])
    assert (result.value, result.misses[0].reason) == (0.0, EXECUTED_ACTION_INVALID)


def test_no_stated_action_gives_the_whole_empty_result_and_a_count_mismatch_is_named():
    assert element_accuracy([None], ["click('20')"], [ActionParts(type="click", element_id="20")]).to_dict() == {
        "value": None, "steps": 0, "hits": 0, "misses": [], "forced_stop_step": None, "by": "planned_vs_executed",
        "null_reason": NO_STATED_ACTION}
    with pytest.raises(ValueError) as raised:
        element_accuracy(["click [1]", None], ["click [1]"])
    assert str(raised.value) == ("2 planned actions for 1 executed actions; "
                                 "expected one planned action (or None) per step")


def test_a_value_has_no_null_reason_and_only_a_forced_stop_has_no_steps():
    assert element_accuracy(["go_back"], ["go_back"]).null_reason == ""
    assert element_accuracy([None], ["stop [Early stop: Reach max steps 30]"]).null_reason == "no agent steps"
