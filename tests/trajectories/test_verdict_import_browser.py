"""The verdict import page in Debian's Chromium: the files read, each agent's run chosen by keyboard, then imported."""

import re

import pytest
from playwright.sync_api import expect

from tests.browser_helpers import log_in, page_width, sized_page, width  # noqa: F401 - fixtures
from tests.factories import AgentRunFactory, UserFactory
from trajectories.models import AgentRun, Verdict

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_each_agent_of_a_file_is_sent_to_a_run_by_keyboard(sized_page, live_server, shared_data, width):
    page = sized_page
    user = UserFactory(username="grader")
    AgentRunFactory(name="op-rerun", benchmark="online-mind2web", uploaded_by=user)
    log_in(page.context, live_server, user)
    page.goto(live_server.url + "/runs/import-verdicts/")
    page.set_input_files("#id_files", [str(shared_data / "agent-outputs" / "online-mind2web" /
                                           "human_label.excerpt.json")])
    page.get_by_role("button", name="Read the files").press("Enter")
    expect(page.get_by_role("group")).to_have_count(6)
    operator = page.get_by_role("group", name=re.compile(r"^Operator: 30 verdicts of 30 tasks"))
    expect(operator).to_contain_text("a new run named Operator would be made")
    # Operator's verdicts to the existing run: from "a new run" (chosen for it) up to "an existing run", then its name.
    operator.get_by_role("radio", name="a new run").focus()
    page.keyboard.press("ArrowUp")
    expect(operator.get_by_role("radio", name="an existing run")).to_be_checked()
    page.keyboard.press("Tab")
    expect(operator.get_by_label("Run name", exact=True)).to_be_focused()
    page.keyboard.type("op-rerun")
    # SeeAct's left out: one step down from "a new run".
    seeact = page.get_by_role("group", name=re.compile(r"^SeeAct:"))
    seeact.get_by_role("radio", name="a new run").focus()
    page.keyboard.press("ArrowDown")
    expect(seeact.get_by_role("radio", name="nowhere: leave them out")).to_be_checked()
    assert page_width(page) <= width
    page.get_by_role("button", name="Import").focus()
    page.keyboard.press("Enter")
    report = page.locator("#verdicts-report")
    expect(report).to_contain_text("150 new, 0 changed, 0 unchanged")
    expect(report).to_contain_text("Left out: SeeAct (30 verdicts).")
    expect(report).to_contain_text("30 tasks of the file the run held no trajectory or result of")
    assert page_width(page) <= width
    assert AgentRun.objects.get(name="op-rerun").verdicts.count() == 30
    assert Verdict.objects.count() == 150 and not AgentRun.objects.filter(name="SeeAct").exists()
