from failures.rules import BEFORE_ANSWER, FIRST_ERROR, LOOP, StepText, attribute


def _message(index, agent, text):
    return StepText(index=index, action=agent, agent=agent, action_type="message", text=text)


def test_a_tool_reporting_an_error_names_the_step_before_it():
    steps = [_message(1, "Planner", "Plan: load the sheet"), _message(2, "Coder", "```python\nload()```"),
             _message(3, "Computer_terminal", "exitcode: 1 (execution failed)\nTraceback ...")]

    found = attribute(steps)

    assert (found.step, found.agent, found.rule) == (2, "Coder", FIRST_ERROR)
    assert "step 3 (Computer_terminal) reports" in found.reason


def test_an_agent_reporting_an_error_is_named_itself():
    found = attribute([_message(1, "human", "Find it"), _message(2, "WebSurfer", "The page was not found.")])

    assert (found.step, found.agent, found.rule) == (2, "WebSurfer", FIRST_ERROR)


def test_the_start_of_a_loop_of_three_equal_actions():
    steps = [StepText(1, "click [3]", element="3"), StepText(2, "scroll [down]"), StepText(3, "scroll [down]"),
             StepText(4, "scroll [down]"), StepText(5, "stop [x]")]

    assert (attribute(steps).step, attribute(steps).rule) == (2, LOOP)


def test_two_equal_actions_are_no_loop_and_the_step_before_the_last_is_named():
    steps = [StepText(1, "scroll [down]"), StepText(2, "scroll [down]"), StepText(3, "stop [x]")]

    found = attribute(steps)

    assert (found.step, found.rule) == (2, BEFORE_ANSWER)
    assert attribute([StepText(1, "stop [x]")]).step == 1
    assert attribute([]) is None


def test_equal_speakers_with_different_messages_are_no_loop():
    steps = [_message(i, "Orchestrator", f"ledger {i}") for i in range(1, 6)]

    assert attribute(steps).rule == BEFORE_ANSWER
