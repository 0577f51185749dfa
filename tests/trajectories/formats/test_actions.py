import pytest

from trajectories.formats.actions import extract_planned_action, resolve_element_label


@pytest.mark.parametrize(
    ("reasoning", "planned"),
    [
        ("Let's think. In summary, the next action I will perform is ```click [1090]```", "click [1090]"),
        ("First ```scroll [down]``` then rather ```click [3]```.", "click [3]"),
        ("wrapped inside ``` like this: ````action [arg] ...```. So ```goto ['http://a.b']```", "goto ['http://a.b']"),
        ("In summary, the next action I will perform is `type [21] [] [1]`", None),
        ("``` ```", None),
        ("", None),
        (None, None),
    ],
)
def test_planned_action_is_the_span_between_the_last_two_fences(reasoning, planned):
    assert extract_planned_action(reasoning) == planned


def test_element_label_is_the_tree_line_without_its_id():
    tree = "Tab 0 (current): Shop\n\n[1] RootWebArea 'Shop'\n\t[17] link 'Home' url: http://x/\n\t\t[171] img 'Home'"
    assert resolve_element_label(tree, "17") == "link 'Home' url: http://x/"
    assert resolve_element_label(tree, "171") == "img 'Home'"
    assert resolve_element_label(tree, "1") == "RootWebArea 'Shop'"
    assert resolve_element_label(tree, "9") == ""
    assert resolve_element_label(tree, "") == ""


def test_element_label_is_only_read_from_a_line_the_id_begins():
    tree = "[5] link 'Go to [7] later'\n  [7]\n\t[7]   button 'Seven'  \n[7] img 'Not this one'"
    assert resolve_element_label(tree, "7") == "button 'Seven'"  # not mid-line, not a line with no label
    assert resolve_element_label("[7] \n[7]\tx", "7") == "x"
    assert resolve_element_label("[.*] menu 'Odd id'", ".*") == "menu 'Odd id'"


def test_an_id_repeated_at_the_start_of_the_label_is_dropped():
    from trajectories.formats.actions import parse_action

    assert parse_action("click [12] where [12] is [12]\u3000link 'Go'").element_label == "link 'Go'"
    assert parse_action("click [12] where [12] is [1]link 'Go'").element_label == "[1]link 'Go'"


def test_the_enter_flag_as_each_side_writes_it():
    from trajectories.formats.actions import parse_action, with_enter_flag

    assert parse_action("type [5] [abc]").press_enter is True  # planned: the harness's default is 1
    executed = parse_action("type [5] [abc ] where [5] is textbox 'Search'", executed=True)
    assert (executed.value, executed.press_enter) == ("abc", True)  # the newline, written as a space
    assert parse_action("type [5] [abc] where [5] is textbox 'Search'", executed=True).press_enter is False
    assert parse_action("type [5] [abc] [0]", executed=True).press_enter is False
    assert executed.executes(parse_action("type [5] [abc] [1]"))
    assert not executed.executes(parse_action("type [5] [abc] [0]"))
    assert parse_action("type [5] [a  b]").same_target(parse_action("type [5] [a b ]", executed=True))
    assert with_enter_flag("type [5] [abc]") == "type [5] [abc] [1]"
    assert with_enter_flag("type [5] [abc] [0]") == "type [5] [abc] [0]"
    assert with_enter_flag("click [5]") == "click [5]"
