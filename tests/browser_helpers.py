"""Shared steps of the browser tests: the two window widths every page is walked at, and logging in."""

import pytest
from django.conf import settings
from django.test import Client

WIDTHS = (1366, 800)


def log_in(context, live_server, user) -> None:
    client = Client()
    client.force_login(user)
    session = client.cookies[settings.SESSION_COOKIE_NAME].value
    context.add_cookies([{"name": settings.SESSION_COOKIE_NAME, "value": session, "url": live_server.url}])


@pytest.fixture(params=WIDTHS, ids=lambda width: f"{width}px")
def width(request) -> int:
    return request.param


@pytest.fixture
def sized_page(browser, width):
    """A page in a window `width` pixels wide."""
    context = browser.new_context(viewport={"width": width, "height": 900})
    page = context.new_page()
    page.set_default_timeout(15_000)
    yield page
    context.close()


def submit_import(page) -> None:
    """Press Import and wait for the next page.

    Jobs run inside the request in these tests: the import and the search index of its steps (the
    embedding model's first load included) come before the next page, so the click waits longer.
    """
    page.get_by_role("button", name="Import").click(timeout=120_000)


def page_width(page) -> int:
    """How wide the document is: wider than the window means a sideways scrollbar."""
    return page.evaluate("document.documentElement.scrollWidth")
