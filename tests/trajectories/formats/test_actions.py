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
