"""The upload page's "Where your runs come from" table and the README's say the same, row by row."""

import html
import re

import pytest
from django.conf import settings
from django.urls import reverse

from tests.factories import UserFactory

SECTION = "## Where your runs come from"


def _words(text: str) -> str:
    return " ".join(text.split())


def _from_markdown(cell: str) -> str:
    return _words(cell.replace("`", "").replace("\\|", "|"))


def _from_html(cell: str) -> str:
    return _words(html.unescape(re.sub(r"<[^>]+>", "", cell)))


def readme_rows() -> list[list[str]]:
    text = (settings.BASE_DIR / "README.md").read_text()
    table = next(block for block in text.split(SECTION, 1)[1].split("\n\n") if block.startswith("|"))
    rows = [line for line in table.splitlines() if line.startswith("|")][2:]
    return [[_from_markdown(cell) for cell in re.split(r"(?<!\\)\|", row.strip().strip("|"))] for row in rows]


def page_rows(page: str) -> list[list[str]]:
    table = re.search(r'<table class="tj-table" id="run-sources">(.*?)</table>', page, re.S).group(1)
    body = table.split("<tbody>", 1)[1]
    return [[_from_html(cell) for cell in re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", row, re.S)]
            for row in re.findall(r"<tr>(.*?)</tr>", body, re.S)]


@pytest.mark.django_db
def test_the_upload_page_shows_the_readme_table(client):
    client.force_login(UserFactory())
    page = client.get(reverse("trajectories:upload")).content.decode()
    rows = page_rows(page)
    assert [row[0] for row in rows] == ["WebArena harness", "trajectory/v1 (your own agent)", "BrowserGym / AgentLab",
                                        "browser-use", "Online-Mind2Web", "WebVoyager", "Agent-E", "Who&When"]
    assert all(len(row) == 4 and all(row) for row in rows)
    assert rows == readme_rows()
