"""Every internal link and image of every page, followed as each role from the home page, the navigation
and /docs/: none is dead. Every page's text is read for the words that explain nothing (a Python `None`,
"15 null", parameter codes, format codes, labels said twice), and every template of the site is rendered
on the way."""

import html
import re
from collections import deque
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

import pytest
from django.conf import settings
from django.contrib.staticfiles import finders
from django.test import Client
from django.test.signals import template_rendered

from tests.site_scene import change_gold, make_scene, walk_starts
from trajectories.templatetags.trajectory_tags import FORMAT_NAMES

pytestmark = pytest.mark.django_db

ROLES = ("no role", "annotator", "reviewer", "admin")
# Followed for their status only: downloads, files and Django's own admin pages.
NOT_PAGES = re.compile(r"^/(exports|plots|media|screenshots|admin|api|annotation/export|annotation/schemas|schemas)/"
                       r"|^/verdicts/judges\.|^/metrics$|^/healthz$|\.(csv|json|svg|png|xlsx)$")
LINK = re.compile(r'<(a|img|link|script)\b[^>]*?\s(href|src)="([^"]*)"', re.S)
# Words that explain nothing to a reader, each with why.
UNEXPLAINED = {
    r"\bNone\b": "a Python None",
    r"\d+ null\b": "a count of nulls without saying what null means",
    r"\btau=|\bW=\d|\bordered=": "evaluation parameters as codes",
    r"result_status:": "a harness field's name",
    r"\((?:%s)\)" % "|".join(map(re.escape, FORMAT_NAMES)): "a format's code",
    r"(?i)\b([\w.-]{3,}(?: [\w.-]+)*) \(\1\)": "a name with itself in brackets",
    r"(?i)\b([a-z][\w-]+(?: [\w-]+)+) \1\b": "a label said twice",
    r"No hostname was supplied": "a library's warning",
}
# Templates only an error, a refusal or a state the scene does not hold renders, each said why.
NOT_WALKED = {
    "403.html": "a refusal", "404.html": "a missing page", "405.html": "a wrong method",
    "workers_unreachable.html": "a broker that is down", "accounts/locked_out.html": "a locked-out login",
    "metrics/_answer_check.html": "a WebArena-Verified task's structured answer",
    "trajectories/_record_problems.html": "the report of an uploaded table (a form's answer)",
    "trajectories/_task_entries_reported.html": "the report of an uploaded task file (a form's answer)",
}


@pytest.fixture
def scene(tmp_path, shared_data, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        scene = make_scene(tmp_path, shared_data)
    change_gold(scene)
    return scene


def _shape(url: str) -> tuple:
    """What a page is: its path and the names of its query parameters (sorting and paging links give the same
    page again)."""
    parts = urlsplit(url)
    return parts.path, tuple(sorted({key for key, _ in parse_qsl(parts.query)}))


BLOCK = re.compile(r"</?(?:div|p|li|ul|ol|dl|dt|dd|td|th|tr|table|h[1-6]|section|header|main|nav|form|button|"
                   r"label|option|select|details|summary|article|pre)\b[^>]*>")


def _text(content: str) -> str:
    """The page's text, blocks apart (" | ") so that a pattern never spans two of them."""
    content = re.sub(r"<(script|style)\b.*?</\1>", " ", content, flags=re.S)
    content = BLOCK.sub(" | ", content)
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", content)))


def _crawl(client: Client, starts) -> tuple[dict, dict, set]:
    """({dead link: the page it was on}, {page: unexplained words found}, pages read)."""
    dead, words, read, seen = {}, {}, set(), set()
    queue = deque((start, "start") for start in starts)
    while queue:
        url, origin = queue.popleft()
        if url.startswith("/static/"):
            if not finders.find(urlsplit(url).path.removeprefix("/static/")):
                dead[url] = origin
            continue
        shape = _shape(url)
        if shape in seen:
            continue
        seen.add(shape)
        response = client.get(url)
        if response.status_code in (301, 302):
            queue.append((response["Location"], url))
            continue
        if origin == "start" and response.status_code in (400, 403):
            if response.status_code == 403:
                continue  # a page the role may not open, named to the walk, not linked to it
        elif response.status_code != 200:
            dead[url] = f"{origin} ({response.status_code})"
            continue
        if NOT_PAGES.search(urlsplit(url).path) or "text/html" not in response.get("Content-Type", ""):
            continue
        read.add(url)
        content = response.content.decode()
        if not url.startswith("/docs/"):  # the README's own words are checked by its readers
            text = _text(content)
            found = [why for pattern, why in UNEXPLAINED.items() if re.search(pattern, text)]
            if found:
                words[url] = [(why, re.search(pattern, text).group(0)) for pattern, why in UNEXPLAINED.items()
                              if re.search(pattern, text)]
        for tag, _attribute, address in LINK.findall(content):
            address = html.unescape(address).split("#", 1)[0]
            if address.startswith("/") and not address.startswith("//") and "logout" not in address:
                queue.append((address, url))
    return dead, words, read


def test_no_link_or_image_is_dead_and_every_page_explains_its_words(scene):
    rendered = set()

    def remember(sender, template, context, **kwargs):
        rendered.add(template.name)

    template_rendered.connect(remember)
    try:
        anonymous = Client()
        dead, words, read = _crawl(anonymous, ["/", "/accounts/login/"])
        for role in ROLES:
            client = Client()
            client.force_login(scene["users"][role])
            found = _crawl(client, walk_starts(scene))
            dead.update({link: f"{role}: {where}" for link, where in found[0].items()})
            words.update({page: f"{role}: {why}" for page, why in found[1].items()})
            read |= found[2]
    finally:
        template_rendered.disconnect(remember)
    assert not dead, "\n".join(f"{link} on {where}" for link, where in sorted(dead.items()))
    assert not words, "\n".join(f"{page}: {why}" for page, why in sorted(words.items()))
    assert len(read) > 60 and any(page.startswith("/docs/") for page in read)
    templates = {str(path.relative_to(settings.BASE_DIR / "templates"))
                 for path in Path(settings.BASE_DIR / "templates").rglob("*.html")}
    missing = templates - rendered - set(NOT_WALKED)
    assert not missing, f"templates no walked page rendered: {sorted(missing)}"
