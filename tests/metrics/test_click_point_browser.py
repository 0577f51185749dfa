"""The point a step acted at, marked on its screenshot on the trajectory page, in Chromium at both widths.

browser-use's WebArena-Infinity sample: step 2 clicked the star of the first email; its result
records the click at (310, 179.5) (`metadata.click_x`, `click_y`) on a 1920 x 1080 screenshot.
"""

import pytest
from django.urls import reverse
from playwright.sync_api import expect

from tests.browser_helpers import log_in, page_width, sized_page, width  # noqa: F401 - fixtures
from tests.config.test_csp_browser import LISTEN
from tests.factories import AgentRunFactory, UserFactory
from trajectories.models import Trajectory
from trajectories.services.ingest import import_paths

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

NATURAL = (1920, 1080)
POINT = (310.0, 179.5)


def test_the_click_point_is_marked_where_it_landed_however_the_screenshot_is_scaled(
        sized_page, live_server, shared_data, width):
    run = AgentRunFactory(name="browser-use")
    assert import_paths([shared_data / "agent-outputs" / "browser-use" / "webarena-infinity-gmail" / "task_e1"],
                        run).ok
    trajectory = Trajectory.objects.get(run=run)
    page = sized_page
    page.context.add_init_script(LISTEN)
    log_in(page.context, live_server, UserFactory(username="reader"))
    page.goto(live_server.url + reverse("metrics:trajectory-detail", args=[trajectory.pk]))

    step = page.locator("#step-2")
    expect(step.locator(".tj-at")).to_have_text("at (310, 179.5)")
    image = step.locator(".tj-shot img")
    image.scroll_into_view_if_needed()
    marker = step.locator(".tj-point")
    expect(marker).to_be_visible()
    box, centre = image.bounding_box(), marker.bounding_box()
    # The image is shown at box["width"] pixels for its 1920: the point is 310 / 1920 of the way across
    # and 179.5 / 1080 of the way down, wherever the page puts the image.
    expected_x = box["x"] + box["width"] * POINT[0] / NATURAL[0]
    expected_y = box["y"] + box["height"] * POINT[1] / NATURAL[1]
    assert abs(centre["x"] + centre["width"] / 2 - expected_x) <= 1.5
    assert abs(centre["y"] + centre["height"] / 2 - expected_y) <= 1.5
    assert box["width"] < NATURAL[0]  # scaled down in the page at both widths

    # The steps that acted at no point (go to a URL; the final answer) carry no marker.
    expect(page.locator(".tj-point")).to_have_count(1)
    assert page.evaluate("window.__violations") == []
    assert page_width(page) <= width
