"""The leaderboard switched to a human source in Debian's Chromium: Online-Mind2Web's human labels of six
agents, imported as published, rank the agents; a task the humans marked not executable counts as not
successful, as the benchmark counts it."""

import io

import pytest
from django.core.management import call_command
from django.urls import reverse
from playwright.sync_api import expect

from tests.browser_helpers import log_in, page_width
from tests.factories import UserFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_leaderboard_ranks_agents_by_the_human_labels(browser, live_server, shared_data):
    labels = shared_data / "agent-outputs" / "online-mind2web" / "human_label.excerpt.json"
    call_command("import_verdicts", str(labels), verbosity=0, stdout=io.StringIO())

    context = browser.new_context(viewport={"width": 1366, "height": 900})
    log_in(context, live_server, UserFactory())
    page = context.new_page()
    page.set_default_timeout(15_000)
    page.goto(live_server.url + reverse("metrics:leaderboard") + "?benchmark=online-mind2web")
    page.select_option("#id_success_source", label="Online-Mind2Web human labels")
    page.wait_for_url("**success_source=source*")
    expect(page.locator("#success-source")).to_have_text("from Online-Mind2Web human labels")

    # Counted by hand from the excerpt's 30 tasks: Operator 23 yes, 4 no, 3 not executable (2).
    operator = page.locator('tr[data-run="Operator"] td[data-metric="success"]')
    expect(operator).to_contain_text("0.767")
    expect(page.locator('tr[data-run="Claude Computer Use 3.7"] td[data-metric="success"]')).to_contain_text("0.833")
    expect(page.locator('tr[data-run="Agent-E"] td[data-metric="success"]')).to_contain_text("0.500")
    # Sorted by success, highest first: Claude Computer Use 3.7 (25 of 30) leads.
    page.goto(page.url + "&sort=-success")
    expect(page.locator("tbody tr[data-run]").first).to_have_attribute("data-run", "Claude Computer Use 3.7")
    assert page_width(page) <= 1366
    context.close()
