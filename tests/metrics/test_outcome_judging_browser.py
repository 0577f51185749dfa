"""The outcome judge started from a run's page in Debian's Chromium: the judge chosen, the requests and
cost read before anything is asked, then the job's progress, against the local OpenAI-compatible server;
both pages fit a window 800 px wide."""

import re

import pytest
from django.urls import reverse
from playwright.sync_api import expect

from judges.local_llm import LocalLLMServer
from judges.models import OutcomeJob
from tests.browser_helpers import log_in, page_width
from tests.factories import (
    AgentRunFactory, JudgeConfigFactory, ScreenshotFactory, StepFactory, TaskFactory, TrajectoryFactory, UserFactory,
)
from tests.judges.conftest import FAST_RETRIES

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def llm():
    with LocalLLMServer() as server:
        yield server


def test_the_outcome_judge_from_the_run_page_shows_its_estimate_then_its_progress(browser, live_server,
                                                                                  llm, settings):
    settings.JUDGE_PRICES = {"gpt-4o-mini": {"input": 0.15, "output": 0.60}}
    JudgeConfigFactory(name="outcome", backend="openai", tested=True, model="gpt-4o-mini", base_url=llm.base_url,
                       options=FAST_RETRIES)
    owner = UserFactory()
    run = AgentRunFactory(name="shopper", uploaded_by=owner)
    cart = ScreenshotFactory()
    for number, intent in enumerate(("Add two bags of coffee to the cart", "Find the blue kettle's price"), 1):
        trajectory = TrajectoryFactory(run=run, task=TaskFactory(task_id=str(number), intent=intent))
        StepFactory(trajectory=trajectory, index=1, action="click [1]", screenshot=cart)

    context = browser.new_context(viewport={"width": 1366, "height": 900})
    log_in(context, live_server, owner)
    page = context.new_page()
    page.set_default_timeout(15_000)
    page.goto(live_server.url + reverse("metrics:run-detail", args=[run.pk]))

    form = page.locator("#outcome-judge-form")
    expect(form.locator("select")).to_have_value("outcome")
    form.get_by_role("button", name="Estimate requests and cost…").click()
    page.wait_for_url(re.compile(r"/judge-outcomes/\?judge=outcome$"))
    # Two task texts, the cart screenshot under each, two verdicts: 6 requests, nothing asked yet.
    estimate = page.locator("#outcome-estimate")
    expect(estimate.locator('[data-estimate="key_points"]')).to_have_text("2")
    expect(estimate.locator('[data-estimate="screenshots"]')).to_have_text("2")
    expect(estimate.locator('[data-estimate="verdicts"]')).to_have_text("2")
    expect(estimate.locator('[data-estimate="requests"]')).to_have_text("6")
    expect(estimate.locator('[data-estimate="cost"]')).to_have_text(re.compile(r"^\$0\.\d{6}$"))
    expect(page.locator("#estimate-basis")).to_contain_text("An estimate: Requests are counted from the decisions")
    assert llm.requests == [] and page_width(page) <= 1366
    page.set_viewport_size({"width": 800, "height": 900})
    assert page_width(page) <= 800

    page.get_by_role("button", name="Start outcome judging").click()
    page.wait_for_url(re.compile(r"/outcome-jobs/\d+/$"))
    job = OutcomeJob.objects.get()
    progress = page.locator("#progress")
    expect(progress.locator('[data-field="status"]')).to_have_text("Done")
    expect(progress.locator('[data-field="done"]')).to_have_text("2")
    expect(progress.locator('[data-field="total"]')).to_have_text("2")
    expect(progress.locator("progress")).to_have_attribute("value", re.compile(r"^100"))
    expect(page.locator("#outcome-result")).to_contain_text("2 of 2 judged trajectories successful · 6 requests")
    assert len(llm.requests) == 6 and job.created_by == owner and page_width(page) <= 800

    page.locator("main").get_by_role("link", name="judges vs humans").click()
    expect(page.locator("h1")).to_have_text("Judges vs humans: run shopper")
    expect(page.locator('#no-verdicts [data-reason="no_human"]')).to_contain_text("No human verdict on run shopper")
    context.close()
