"""The judges-vs-humans page in Debian's Chromium at 1366 px: Agent-E's two judges against its human
evaluators, per run and over both, greyed under thirty tasks, and the human source chosen."""

import io
import re

import pytest
from django.core.management import call_command
from django.urls import reverse
from playwright.sync_api import expect

from tests.browser_helpers import log_in, page_width
from tests.factories import UserFactory
from trajectories.models import AgentRun, Task, Verdict, VerdictKind, VerdictSource

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_judges_against_humans_with_greyed_rows_and_a_chosen_human_source(browser, live_server, shared_data):
    folder = shared_data / "agent-outputs" / "agent-e"
    for run, name in (("agent-e-text", "text_main_chat_eval_gpt4o"), ("agent-e-vision", "vision_final_eval_gpt4o")):
        call_command("import_trajectories", str(folder / f"{name}.excerpt.json"), "--run", run, verbosity=0,
                     stdout=io.StringIO())
    experts = VerdictSource.objects.create(kind=VerdictKind.HUMAN, name="Expert annotators")
    Verdict.objects.create(run=AgentRun.objects.get(name="agent-e-vision"),
                           task=Task.objects.get(task_id="Allrecipes--0"), source=experts, success=False)

    context = browser.new_context(viewport={"width": 1366, "height": 900})
    log_in(context, live_server, UserFactory())
    page = context.new_page()
    page.set_default_timeout(15_000)
    page.goto(live_server.url + reverse("metrics:judges-vs-humans") + "?benchmark=webvoyager")

    overall = page.locator("#all-runs table")
    vision = overall.locator("tr", has_text="Agent-E vision GPT-4o judge")
    # With the experts' one split verdict, the consensus on Allrecipes--0 is a tie: unsure.
    expect(vision.locator('[data-metric="n"]')).to_have_text("14")
    expect(vision.locator('[data-metric="unsure"]')).to_have_text("1")
    expect(vision.locator('[data-metric="precision"]')).to_have_text("0.833")
    expect(vision).to_have_class(re.compile(r"\bsparse\b"))
    expect(vision).to_have_attribute("title", "Only 14 tasks scored (fewer than 30): too few to compare sources by")
    assert vision.evaluate("row => getComputedStyle(row.cells[2]).color") != overall.locator("th").first.evaluate(
        "cell => getComputedStyle(cell).color")
    ceiling = overall.locator('tr[data-source="human-ceiling"]')
    expect(ceiling.locator('[data-metric="n"]')).to_have_text("1")
    expect(ceiling.locator('[data-metric="precision"]')).to_have_text("—")
    expect(page.locator("section.run-table")).to_have_count(2)
    assert page_width(page) <= 1366

    page.select_option("#judges-human", label="Agent-E human evaluators")
    page.wait_for_url("**human=source*")
    vision = page.locator("#all-runs table tr", has_text="Agent-E vision GPT-4o judge")
    expect(vision.locator('[data-metric="n"]')).to_have_text("15")
    expect(vision.locator('[data-metric="kappa"]')).to_have_text("0.474")
    expect(page.locator("#judges-human option:checked")).to_have_text("Agent-E human evaluators")
    expect(page.locator("main")).to_contain_text("against the human source Agent-E human evaluators")
    context.close()
