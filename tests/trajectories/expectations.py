"""What the three real samples must become, whichever entry point imported them."""

from trajectories.models import Trajectory

SAMPLE_ACTIONS = {
    "0": [
        ("click [1090]", "click [1090] where [1090] is [1090] link 'Go to Advanced Reporting \\ue644' "
                         "url: http://localhost:7780/admin/analytics/reports/show/"),
        ("stop [Quest Lumaflex™ Band]", "stop [Quest Lumaflex™ Band]"),
    ],
    "3": [
        (None, "none"),
        ("click [20]", "click [20] where [20] is Today Last 24 Hours Last 7 Days Current Month YTD 2YTD"),
        ("click [14]", "click [14] where [14] is All Store Views"),
        (None, "none"),
        ("new_tab", "new_tab"),
        (None, "none"),
        ("goto ['http://homepage.com']", "none"),
        ("action [arg]", "none"),
    ],
    "6": [
        ("click [20]", "click [20] where [20] is Today Last 24 Hours Last 7 Days Current Month YTD 2YTD"),
        ("click [21]", "click [21] where [21] is Bestsellers"),
        ("stop ['N/A']", "stop ['N/A']"),
    ],
}


def assert_samples_imported(run) -> None:
    trajectories = {t.task.task_id: t for t in Trajectory.objects.filter(run=run).select_related("task")}
    assert set(trajectories) == {"0", "3", "6"}
    for task_id, actions in SAMPLE_ACTIONS.items():
        steps = trajectories[task_id].steps.order_by("index")
        assert [(step.planned_action, step.action) for step in steps] == actions, task_id
        assert trajectories[task_id].step_count == len(actions)

    gpt = trajectories["0"]
    assert (gpt.final_answer, gpt.outcome_status, gpt.outcome_reason) == ("Quest Lumaflex™ Band", "answered", "")

    weak = trajectories["3"]
    assert [step.action_type for step in weak.steps.order_by("index")][-3:] == ["none", "none", "none"]
    assert (weak.outcome_status, weak.outcome_reason) == ("early_stop", "invalid_actions")
    assert weak.outcome_message == "Early stop: Failed to parse actions for 3 times"
    assert weak.final_answer is None

    na = trajectories["6"]
    assert (na.outcome_status, na.outcome_reason, na.final_answer) == ("na", "", "'N/A'")
    assert na.steps.order_by("index").last().action_type == "stop"
