from trajectories.formats.canonical import TrajectoryFormatError
from trajectories.formats.webarena_html2json import looks_like_html2json, parse_html2json

OBSERVATION = "Tab 0 (current): Dashboard\n\n[1] RootWebArea 'Dashboard'\n\t[1090] link 'Go to Advanced Reporting'"


def _example(messages, **extra):
    return {"task_id": 0, "intent": "What is the top-1 best-selling product in 2022", "sites": ["shopping_admin"],
            "messages": messages, "success": True, **extra}


def test_examples_become_trajectories_with_actions_taken_from_the_reasoning():
    document = {
        "example_0": _example([
            {"user": f"URL: http://localhost:7780/admin\n\nobservation:\n{OBSERVATION}", "image": "data/images/x.png"},
            {"assistant": "Let's think. In summary, the next action I will perform is ```click [1090]```"},
            {"user": f"URL: http://localhost:7780/admin/reports\n\nobservation:\n{OBSERVATION}"},
            {"assistant": "In summary, the next action I will perform is ```stop [Quest Lumaflex™ Band]```"},
        ])
    }
    assert looks_like_html2json(document)
    [(key, trajectory)] = list(parse_html2json(document))
    assert key == "example_0"
    assert trajectory.task.task_id == "0"
    assert [step.action for step in trajectory.steps] == ["click [1090]", "stop [Quest Lumaflex™ Band]"]
    first = trajectory.steps[0]
    assert first.url == "http://localhost:7780/admin"
    assert first.observation == OBSERVATION
    assert first.screenshot is None
    assert first.action_parts.element_label == "link 'Go to Advanced Reporting'"
    assert trajectory.steps[1].prev_action == "click [1090]"
    assert trajectory.final_answer == "Quest Lumaflex™ Band"
    assert (trajectory.outcome.status, trajectory.outcome.success) == ("answered", True)


def test_unparseable_outputs_and_forced_stops():
    document = {
        "example_3": _example([
            {"user": "URL: about:blank\n\nobservation:\nTab 0 (current): "},
            {"assistant": "In summary, the next action I will perform is `hover [19]`."},
            {"user": "URL: about:blank\n\nobservation:\nTab 0 (current): "},
            {"assistant": "stop [Early stop: Failed to parse actions for 3 times]"},
        ], task_id=3, success=False)
    }
    [(_, trajectory)] = list(parse_html2json(document))
    assert [step.action for step in trajectory.steps] == ["none"]
    assert trajectory.steps[0].planned_action is None
    assert (trajectory.outcome.status, trajectory.outcome.reason) == ("early_stop", "invalid_actions")
    assert trajectory.outcome.success is False


def test_a_broken_example_fails_alone_and_names_its_field():
    document = {
        "example_1": _example([{"user": "URL: x\n\nobservation:\n"}, {"assistant": 42}], task_id=1),
        "example_2": _example([], task_id=2),
    }
    results = dict(parse_html2json(document))
    assert isinstance(results["example_1"], TrajectoryFormatError)
    assert results["example_1"].where == "example_1.messages[1]"
    assert results["example_2"].outcome.status == "crashed"


def test_other_json_is_not_html2json():
    assert not looks_like_html2json({"schema": "trajectory/v1"})
    assert not looks_like_html2json([])
    assert not looks_like_html2json({})


def test_a_type_without_enter_flag_is_executed_with_the_harness_default():
    """html2json keeps only the planned action; the harness runs `type [id] [text]` as `... [1]`."""
    from metrics.definitions import element_accuracy

    document = {"example_1": _example([
        {"user": f"URL: http://localhost:7780/admin\n\nobservation:\n{OBSERVATION}"},
        {"assistant": "In summary, the next action I will perform is ```type [1090] [best sellers]```"},
        {"user": f"URL: http://localhost:7780/admin\n\nobservation:\n{OBSERVATION}"},
        {"assistant": "In summary, the next action I will perform is ```type [1090] [best sellers] [0]```"},
    ])}
    [(_, trajectory)] = list(parse_html2json(document))
    first, second = trajectory.steps
    assert first.action == "type [1090] [best sellers] [1]" and first.action_parts.press_enter is True
    assert second.action == "type [1090] [best sellers] [0]" and second.action_parts.press_enter is False
    result = element_accuracy([s.planned_action for s in trajectory.steps], [s.action for s in trajectory.steps])
    assert result.value == 1.0
