import re

import openpyxl
import pytest

from judges.parsing import (StepParts, _plain_text_cached, parse_gold_text, parse_node, plain_text, resolve_element,
                            same_step, step_parts)
from judges.steps import JudgeStep


@pytest.mark.parametrize(
    "text, parts",
    [
        ("Click on the 'REPORTS' link in the navigation menu.", StepParts("click", "link", "REPORTS")),
        ("Type '01/01/2022' into the 'From' textbox.", StepParts("type", "textbox", "From", "01/01/2022")),
        ("Select the 'Period' dropdown and choose 'Year'.", StepParts("select", "combobox", "Period", "Year")),
        ("Scroll down", StepParts("scroll", value="down")),
        ("Press enter", StepParts("press", value="enter")),
        ("Click on the link 'The A11Y Project / a11yproject.com' ",
         StepParts("click", "link", "The A11Y Project / a11yproject.com")),
        ("Click the 'Go' button ", StepParts("click", "button", "Go")),
        ("Select the 'Foot (OSRM)' option", StepParts("select", "option", "", "Foot (OSRM)")),
        ("Type the following message in the 'What’s on your mind?' textbox: 'Refund $169.95.'",
         StepParts("type", "textbox", "What’s on your mind?", "Refund $169.95.")),
        ("Go to http://localhost:7780/admin.", StepParts("goto", value="http://localhost:7780/admin")),
        ("Extract the price of the first product", StepParts()),
        # The other quote character inside the quotes, spaces inside them, the value before the field.
        ("Type 'Let's keep the project alive' into the 'Title' textbox.",
         StepParts("type", "textbox", "Title", "Let's keep the project alive")),
        ("Type ‘it’s fine’ into the ‘Title’ textbox.", StepParts("type", "textbox", "Title", "it’s fine")),
        ("Type 'the \"A11Y\" project' into the 'Title' textbox.",
         StepParts("type", "textbox", "Title", 'the "A11Y" project')),
        ('Type " 404" into the "Title" textbox.', StepParts("type", "textbox", "Title", " 404")),
        ("Type in '12/31/2022' into the 'To' textbox.", StepParts("type", "textbox", "To", "12/31/2022")),
        ("Let's click on the 'Go' button", StepParts()),
        # No direction, no key, no field, no role word: the defaults.
        ("Scroll up", StepParts("scroll", value="up")),
        ("Scroll the page", StepParts("scroll", value="down")),
        ("Press the 'Submit' button", StepParts("click", "button", "Submit")),
        ("Click 'Go'", StepParts("click", "", "Go")),
        ("Type 'hello'", StepParts("type", "textbox", "", "hello")),
        ("Type 'abc' in 'Search'", StepParts("type", "textbox", "Search", "abc")),
        ("Type 'abc' Into The 'Search' field", StepParts("type", "textbox", "Search", "abc")),
        ("Type 'shoes' into the 'Category' combobox", StepParts("type", "combobox", "Category", "shoes")),
        ("Select the 'Size' menu and pick 'Large'", StepParts("select", "menuitem", "Size", "Large")),
        ("Choose 'Size', then 'Medium', then 'Large'", StepParts("select", "combobox", "Size", "Large")),
        # Actions without a target; "open" and "go to" with no address are clicks on what they name.
        ("Go back", StepParts("go_back")),
        ("Go forward", StepParts("go_forward")),
        ("Open a new tab", StepParts("new_tab")),
        ("Close the current tab", StepParts("close_tab")),
        ("Go to http://localhost:7770/XBOX.", StepParts("goto", value="http://localhost:7770/XBOX")),
        ("Open the 'Orders' page", StepParts("click", "", "Orders")),
        ("Open settings", StepParts()),
    ],
)
def test_free_text_gold_steps(text, parts):
    assert parse_gold_text(text) == parts


def test_every_gold_step_of_the_excerpt_is_read_or_left_as_text(shared_data):
    sheet = openpyxl.load_workbook(shared_data / "gold-sample" / "golden_human_trajectories_excerpt.xlsx").active
    texts = [row[2] for row in sheet.iter_rows(min_row=2, values_only=True)]
    parsed = [parse_gold_text(text) for text in texts]
    unread = [text for text, parts in zip(texts, parsed) if not parts.structured]
    assert unread == ["Extract the status of the latest order from the 'Recent Orders' table on the current page"]
    assert all(p.element_name or p.value for p in parsed if p.action_type in ("click", "type", "select"))


@pytest.fixture(scope="module")
def dashboard_tree(shared_data):
    html = (shared_data / "trajectory-samples" / "gpt4turbo_render_0.html").read_text(encoding="utf-8")
    return re.findall(r"<div class='state_obv'><pre>(.*?)</pre>", html, re.S)[0]


def test_element_ids_resolve_through_the_real_tree(dashboard_tree):
    assert resolve_element(dashboard_tree, "723") == ("link", "\\ue60a REPORTS")
    assert resolve_element(dashboard_tree, "165")[0] == "StaticText"  # a double-quoted name with an apostrophe
    assert resolve_element(dashboard_tree, "99999") is None


def test_agent_step_parts_prefer_the_tree_then_the_where_label(dashboard_tree):
    resolved = step_parts(JudgeStep("click [723]", observation=dashboard_tree))
    assert resolved == StepParts("click", "link", "\\ue60a REPORTS")
    labelled = JudgeStep("click [20] where [20] is Today Last 24 Hours")
    assert step_parts(labelled) == StepParts("click", "", "Today Last 24 Hours")
    typed = JudgeStep("type [5] [01/01/2022] [0] where [5] is textbox 'From' required: False")
    assert step_parts(typed) == StepParts("type", "textbox", "From", "01/01/2022")


def test_structure_given_with_a_gold_step_wins_over_its_text():
    step = JudgeStep("Pick the yearly report", action_type="select", element_name="Period", value="Year")
    assert step_parts(step) == StepParts("select", "", "Period", "Year")
    assert step_parts(JudgeStep("Click the 'Go' button")) == StepParts("click", "button", "Go")


def test_an_element_name_given_with_an_agent_step_wins_over_its_tree():
    assert step_parts(JudgeStep("click [5]", element_name="Go")) == StepParts("click", "", "Go")


def test_describe_writes_a_structured_step_in_words():
    assert StepParts("go_back").describe() == "go back"
    assert StepParts("type", "textbox", "From", "01/01/2022").describe() == "type textbox 'From' '01/01/2022'"


def test_a_tree_node_without_a_role_is_its_quoted_name():
    assert parse_node("'Home'") == ("", "Home")
    assert parse_node("link 'Home' url: http://x") == ("link", "Home")


def test_plain_text_drops_icons_marks_punctuation_and_case():
    assert plain_text("\\ue60a REPORTS") == "reports"
    assert plain_text("Quest Lumaflex™  Band.") == "quest lumaflex band"
    assert plain_text("Order\ue60a\u00a0#12,\u3000\tdelivered\n\n- Ｎ/A …") == "order #12 delivered - n/a"
    long_text = "\t[1] link 'Home' \\ue60a\n" * 40 + "  Total:\u2003$1,699.50 ..."
    assert plain_text(long_text) == "1 link home " * 40 + "total: $1 699.50"
    assert plain_text("What’s on your mind?") == plain_text("What's on your mind") == "what s on your mind"


def test_plain_text_keeps_short_texts_only():
    _plain_text_cached.cache_clear()
    assert (plain_text("x" * 500), plain_text("y" * 501)) == ("x" * 500, "y" * 501)
    assert _plain_text_cached.cache_info().currsize == 1


def test_same_step_compares_webarena_targets_or_normalised_text():
    assert same_step("click [12] where [12] is link 'A'", "click [12]")
    assert not same_step("click [12]", "click [13]")
    assert same_step("Scroll down", "scroll [down]")
    assert not same_step("Scroll down", "Scroll up")
