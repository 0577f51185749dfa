"""The trajectory viewer in Debian's Chromium: uploaded markup stays inert, steps follow the keyboard."""

import pytest
from django.test import Client
from django.urls import reverse
from playwright.sync_api import expect

from tests.browser_helpers import log_in, page_width, sized_page, width  # noqa: F401 - fixtures
from tests.factories import AgentRunFactory, TaskFactory, TrajectoryFactory, UserFactory
from tests.trajectories.renders import RenderStep, png, render_html
from trajectories.models import Trajectory
from trajectories.services.ingest import import_paths

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SCRIPT = "<script>window.__pwned = (window.__pwned || []).concat('script')</script>"
IMAGE = "<img src=x onerror=\"window.__pwned = (window.__pwned || []).concat('img'); alert('img')\">"
HANDLER_ATTRIBUTES = ("[...document.querySelectorAll('*')].flatMap(element => [...element.attributes]"
                      ".filter(attribute => attribute.name.startsWith('on')).map(attribute => attribute.name))")


@pytest.fixture
def logged_in_page(page, live_server):
    client = Client()
    client.force_login(UserFactory(username="browser"))
    page.context.add_cookies([{"name": "sessionid", "value": client.cookies["sessionid"].value,
                               "url": live_server.url}])
    return page


@pytest.fixture
def dialogs(page):
    """Messages of any alert() the page raises."""
    messages = []
    page.on("dialog", lambda dialog: (messages.append(dialog.message), dialog.dismiss()))
    return messages


@pytest.fixture
def hostile_trajectory(tmp_path):
    """A render file as the harness writes it, unescaped, with markup in every text the agent saw or wrote."""
    TaskFactory(task_id="3", number=3, intent=f"Find the best seller {SCRIPT}")
    path = tmp_path / "render_3.html"
    path.write_text(render_html(task_id="3", intent=f"Find the best seller {SCRIPT}", steps=[
        RenderStep(action="click [7] where [7] is link 'Reports'", reasoning=f"I see {IMAGE}. ```click [7]```",
                   observation=f"Tab 0 (current): Shop\n\n[7] link 'Reports'\n[8] StaticText '{SCRIPT}{IMAGE}'",
                   screenshot=png((10, 120, 200))),
        RenderStep(action="scroll [down]", reasoning="```scroll [down]```", prev_action=f"click [7] {SCRIPT}"),
        RenderStep(action=f"stop [{SCRIPT}{IMAGE}]", reasoning=f"Done. ```stop [{SCRIPT}]```"),
    ]))
    report = import_paths([path], AgentRunFactory(name="hostile"))
    assert report.ok, report.to_dict()
    return Trajectory.objects.get(run__name="hostile")


def test_script_and_onerror_payloads_do_not_run(logged_in_page, dialogs, live_server, hostile_trajectory):
    page = logged_in_page
    page.goto(live_server.url + reverse("metrics:trajectory-detail", args=[hostile_trajectory.pk]))
    page.wait_for_load_state("load")
    for details in page.locator("details.tj-tree").all():
        details.evaluate("element => { element.open = true; }")

    # Nothing that could run exists: no element carries an event handler attribute and no script holds the
    # payload, so no later event can set the marker; and it is not set now.
    assert page.evaluate(HANDLER_ATTRIBUTES) == []
    assert page.evaluate("[...document.scripts].filter(script => script.text.includes('__pwned')).length") == 0
    assert page.evaluate("window.__pwned === undefined")
    assert dialogs == []
    assert page.locator("img[src='x']").count() == 0
    assert page.locator("#final-answer").inner_text() == f"{SCRIPT}{IMAGE}"
    assert f"[8] StaticText '{SCRIPT}{IMAGE}'" in page.locator("#step-1 details pre").inner_text()
    assert IMAGE in page.locator("#step-1 .tj-reasoning").inner_text()
    # the real screenshot is an image of its own, loaded from storage
    screenshot = page.locator("#step-1 img")
    assert screenshot.get_attribute("loading") == "lazy"
    assert screenshot.evaluate("image => image.complete && image.naturalWidth") == 4


def test_keyboard_moves_between_steps(logged_in_page, live_server, hostile_trajectory):
    page = logged_in_page
    page.goto(live_server.url + reverse("metrics:trajectory-detail", args=[hostile_trajectory.pk]))
    current = "document.querySelector('.tj-step.current') && document.querySelector('.tj-step.current').id"

    page.keyboard.press("j")
    assert page.evaluate(current) == "step-1"
    page.keyboard.press("j")
    page.keyboard.press("ArrowRight")
    assert page.evaluate(current) == "step-3"
    page.keyboard.press("j")  # there is no step 4
    assert page.evaluate(current) == "step-3"
    page.keyboard.press("k")
    assert page.evaluate(current) == "step-2"
    assert page.evaluate("location.hash") == "#step-2"
    page.keyboard.press("t")
    assert page.locator("#step-2 details").evaluate("element => element.open")
    page.keyboard.press("ArrowLeft")
    assert page.evaluate(current) == "step-1"

    page.reload()
    assert page.evaluate(current) == "step-1"  # the hash brings the reader back to the same step


def test_a_screenshot_opens_in_a_zoomable_view_and_esc_closes_it(sized_page, live_server, hostile_trajectory, width):
    page = sized_page
    log_in(page.context, live_server, UserFactory(username="viewer"))
    url = live_server.url + reverse("metrics:trajectory-detail", args=[hostile_trajectory.pk])
    page.goto(url)
    assert page_width(page) <= width
    shot = page.locator("a.tj-shot").first
    shot.focus()  # reachable from the keyboard: it is a link
    page.keyboard.press("Enter")
    viewer = page.get_by_role("dialog", name="Screenshot before step 1")
    expect(viewer).to_be_visible()
    assert page.url == url  # the page stays; the image is not opened in its place
    image = viewer.locator("#shot-image")
    page.wait_for_function("image => image.complete && image.naturalWidth > 0", arg=image.element_handle())
    fitted = image.bounding_box()["width"]
    page.keyboard.press("+")
    page.keyboard.press("+")
    expect(viewer.locator("#shot-zoom")).not_to_have_text("100%")
    assert image.bounding_box()["width"] > fitted
    viewer.get_by_role("button", name="Zoom out").click()
    viewer.get_by_role("button", name="Fit").click()
    assert image.bounding_box()["width"] == pytest.approx(fitted, abs=1)
    assert viewer.bounding_box()["width"] <= width
    page.keyboard.press("j")  # the viewer's keys, not the step navigation behind it
    assert "#" not in page.url
    page.keyboard.press("Escape")
    expect(viewer).to_be_hidden()
    expect(shot).to_be_focused()
    shot.click()
    expect(viewer).to_be_visible()
    viewer.get_by_role("button", name="Close").click()
    expect(viewer).to_be_hidden()


def test_the_next_steps_load_as_the_reader_scrolls_and_by_keyboard(logged_in_page, live_server, settings):
    from trajectories.models import Step

    settings.TRAJECTORY_STEPS_PER_PAGE = 20
    trajectory = TrajectoryFactory(step_count=50)
    Step.objects.bulk_create([Step(trajectory=trajectory, index=n, action=f"click [{n}]",
                                   reasoning=f"<img src=x onerror=alert({n})>") for n in range(1, 51)])
    page = logged_in_page
    page.goto(live_server.url + reverse("metrics:trajectory-detail", args=[trajectory.pk]))
    expect(page.locator(".tj-step")).to_have_count(20)
    more = page.get_by_role("link", name="Show steps 21 to 40 of 50")
    more.focus()
    page.keyboard.press("Enter")
    expect(page.locator("#step-21")).to_be_focused()
    expect(page.locator(".tj-step")).to_have_count(40)
    page.locator("#more-steps").scroll_into_view_if_needed()
    expect(page.locator(".tj-step")).to_have_count(50)
    expect(page.locator("#more-steps")).to_have_count(0)
    expect(page.locator("#step-50 .tj-reasoning")).to_have_text("<img src=x onerror=alert(50)>")
    for _ in range(50):  # j walks through the steps that arrived later too
        page.keyboard.press("j")
    expect(page.locator("#step-50")).to_be_focused()
