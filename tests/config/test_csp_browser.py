"""Every page of the role matrix loads in Chromium under the Content-Security-Policy without a violation."""

import pytest
from django.urls import reverse
from playwright.sync_api import expect
from rest_framework.test import APIClient

from tests.browser_helpers import log_in
from tests.config.test_role_matrix import OPERATIONS, _platform_media, kwargs_for, platform, query_for  # noqa: F401

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# Who opens each page: the first of these that the page answers with HTML.
VISITORS = ("admin", "reviewer", "annotator", "no role", "anonymous")
LISTEN = """window.__violations = [];
document.addEventListener("securitypolicyviolation", (event) => window.__violations.push(
  `${event.violatedDirective} ${event.blockedURI} ${event.sourceFile}:${event.lineNumber}`));"""
# A script from a data: URL, which script-src 'self' refuses: no page loads one.
SENTINEL = """() => { const script = document.createElement("script");
  script.src = "data:text/javascript,window.__sentinelRan=true"; document.head.append(script); }"""


def _html_pages(data) -> list[tuple[str, str]]:
    """(URL, visitor) of every page that answers a GET with HTML, with the query the role matrix uses."""
    pages = []
    for method, route, name in OPERATIONS:
        if method != "*" or name.startswith("admin:"):
            continue
        url = reverse(name, kwargs=kwargs_for(name, data))
        query = "&".join(f"{key}={value}" for key, value in query_for(name, data).items())
        url = f"{url}?{query}" if query else url
        for visitor in VISITORS:
            client = APIClient()
            if data["accounts"][visitor] is not None:
                client.force_login(data["accounts"][visitor])
            response = client.get(url)
            if response.status_code == 200 and response["Content-Type"].startswith("text/html"):
                assert "script-src 'self'" in response["Content-Security-Policy"], url
                pages.append((url, visitor))
                break
    return pages


def test_every_page_loads_without_a_csp_violation(browser, live_server, platform):  # noqa: F811
    pages = _html_pages(platform) + [(reverse("api-docs"), "anonymous"), ("/admin/", "admin"),
                                     (reverse("admin:auth_user_changelist"), "admin")]
    assert len(pages) >= 30
    contexts = {}
    violations = {}
    try:
        for url, visitor in pages:
            if visitor not in contexts:
                contexts[visitor] = browser.new_context()
                contexts[visitor].add_init_script(LISTEN)
                if platform["accounts"][visitor] is not None:
                    log_in(contexts[visitor], live_server, platform["accounts"][visitor])
            page = contexts[visitor].new_page()
            console = []
            page.on("console", lambda message, seen=console: seen.append(message.text)
                    if "Content Security Policy" in message.text else None)
            page.goto(live_server.url + url, wait_until="load")
            if url == reverse("api-docs"):
                # Swagger UI's scripts have fetched the schema and rendered its operations.
                expect(page.locator("#swagger-ui .opblock").first).to_be_visible(timeout=30_000)
            # A violation of the test's own, caused last: once it is reported, so is every one caused before it.
            page.evaluate(SENTINEL)
            page.wait_for_function("window.__violations.some(text => text.startsWith('script-src-elem data'))")
            found = [text for text in page.evaluate("window.__violations") + console
                     if not text.startswith("script-src-elem data") and "__sentinelRan" not in text]
            if found:
                violations[f"{visitor} {url}"] = found
            page.close()
    finally:
        for context in contexts.values():
            context.close()
    assert violations == {}
