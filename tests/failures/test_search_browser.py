"""The step search page and the trajectory page it opens, in Debian's Chromium, 1366 and 800 px wide."""

import pytest
from django.urls import reverse
from playwright.sync_api import expect

from failures.services.step_vectors import index_step_vectors
from tests.browser_helpers import log_in, page_width, sized_page, width  # noqa: F401 - fixtures
from tests.factories import AgentRunFactory, StepFactory, TrajectoryFactory, UserFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_search_lists_marked_matches_that_open_the_trajectory_at_the_step(sized_page, live_server, width):
    page = sized_page
    trajectory = TrajectoryFactory(run=AgentRunFactory(name="shop"), success=False, step_count=2)
    StepFactory(trajectory=trajectory, index=1, action="click [3]", reasoning="Open the account menu")
    StepFactory(trajectory=trajectory, index=2, action="type [5] [red shoes]",
                reasoning="Search the catalogue for <b>red shoes</b> " + "and more words " * 30)
    index_step_vectors()
    log_in(page.context, live_server, UserFactory())
    page.goto(live_server.url + reverse("metrics:run-list"))
    page.locator("#mainnav").get_by_role("link", name="Search", exact=True).click()

    page.get_by_label("Search", exact=True).fill("catalogue shoes")
    page.get_by_role("button", name="Search").click()

    first = page.locator("#search-results li").first
    expect(first.locator("mark")).to_have_text("catalogue")
    expect(first).to_contain_text("<b>red shoes</b>")  # shown as text, not markup
    assert page_width(page) <= width
    first.get_by_role("link").click()
    expect(page).to_have_url(f"{live_server.url}{reverse('metrics:trajectory-detail', args=[trajectory.pk])}"
                              "?find=catalogue+shoes&find_step=2#step-2")
    expect(page.locator("#step-2")).to_be_in_viewport()
    # The query's words marked in the step's texts, the uploaded markup shown as text around them.
    expect(page.locator("#step-2 .tj-reasoning mark")).to_have_text(["catalogue", "shoes"])
    expect(page.locator("#step-2 .tj-reasoning")).to_contain_text("<b>red shoes</b>")
    expect(page.locator("#step-2 .tj-reasoning b")).to_have_count(0)
    expect(page.locator("#step-2 .tj-actions code mark")).to_have_text(["shoes"])  # the executed action
