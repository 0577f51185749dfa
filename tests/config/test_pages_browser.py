"""Navigation, error pages, the skip link and the guided start in Debian's Chromium, 1366 and 800 px wide."""

import pytest
from django.contrib.auth.models import Group
from playwright.sync_api import expect

from tests.browser_helpers import log_in, page_width, sized_page, width  # noqa: F401 - fixtures
from tests.factories import TrajectoryFactory, UserFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

NAV = ("Runs", "Upload run", "Evaluations", "Leaderboard", "Compare", "Annotate", "Failures", "Review", "Agreement",
       "Judge audit", "Judge quality", "Why it failed", "Search", "API")


@pytest.fixture
def admin(sized_page, live_server):
    user = UserFactory(username="admin-user", is_staff=True, is_superuser=True)
    log_in(sized_page.context, live_server, user)
    return sized_page


def _in_view(page, locator) -> None:
    expect(locator).to_be_visible()
    box = locator.bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= page.viewport_size["width"], locator


@pytest.mark.parametrize("path", ["/", "/runs/", "/evaluations/", "/leaderboard/", "/annotation/"])
def test_the_navigation_fits_the_window(admin, live_server, width, path):
    page = admin
    page.goto(live_server.url + path)
    assert page_width(page) <= width
    nav = page.locator("#mainnav")
    for name in NAV:
        _in_view(page, nav.get_by_role("link", name=name, exact=True))
    _in_view(page, page.get_by_role("button", name="Log out"))
    _in_view(page, page.get_by_role("link", name="Admin", exact=True))


def test_missing_page_in_the_site_layout_with_debug_on(admin, live_server, settings, width):
    settings.DEBUG = True  # where Django would show its technical page
    page = admin
    page.goto(live_server.url + "/runs/")
    page.goto(live_server.url + "/runs/987654/", referer=live_server.url + "/runs/")
    expect(page.get_by_role("heading", name="Page not found")).to_be_visible()
    expect(page.locator("#mainnav")).to_be_visible()
    assert page_width(page) <= width
    page.get_by_role("link", name="Go back").click()
    assert page.url == live_server.url + "/runs/"


def test_refused_page_in_the_site_layout(sized_page, live_server, width):
    page = sized_page
    log_in(page.context, live_server, UserFactory(username="no-role"))
    page.goto(live_server.url + "/annotation/review/")
    expect(page.get_by_role("heading", name="You may not open this page")).to_be_visible()
    expect(page.locator("#error-page")).to_contain_text("This page needs the reviewer role.")
    expect(page.locator("#mainnav").get_by_role("link", name="Runs", exact=True)).to_be_visible()
    expect(page.get_by_role("link", name="Go back")).to_have_attribute("href", "/")
    assert page_width(page) <= width


def test_the_skip_link_is_the_first_stop_and_leads_to_the_content(admin, live_server, width):
    page = admin
    page.goto(live_server.url + "/annotation/")
    page.keyboard.press("Tab")
    skip = page.get_by_role("link", name="Skip to main content")
    expect(skip).to_be_focused()
    assert skip.bounding_box()["y"] >= 0  # shown while focused
    page.keyboard.press("Enter")
    assert page.evaluate("document.activeElement.id") == "main"
    for _ in range(8):  # the queue's filters come next, not the navigation
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.name") == "q":
            break
    else:
        pytest.fail("the queue search is not among the first stops after the skip link")


def test_the_guided_start(sized_page, live_server, width):
    page = sized_page
    trajectory = TrajectoryFactory(run__name="gpt-4-turbo")
    user = UserFactory(username="annie")
    user.groups.add(Group.objects.get(name="annotator"))
    log_in(page.context, live_server, user)
    page.goto(live_server.url + "/")
    guide = page.locator("#guided-start")
    for step in ("1. Upload a run", "2. Record gold steps", "3. Evaluate", "4. Compare on the leaderboard"):
        expect(guide.get_by_role("heading", name=step)).to_be_visible()
    assert page_width(page) <= width
    guide.get_by_role("link", name="gpt-4-turbo").click()
    assert page.url.endswith(f"/runs/{trajectory.run.pk}/")
    page.go_back()
    guide.get_by_role("link", name="leaderboard").click()
    expect(page.get_by_role("heading", name="Leaderboard")).to_be_visible()
