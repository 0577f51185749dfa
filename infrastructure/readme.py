"""Sections of the README served as pages, so that a page can link the definition it cites."""

import re
from functools import lru_cache

from django.conf import settings
from django.utils.text import slugify
from markdown_it import MarkdownIt

_HEADING = re.compile(r"^(#{2,3}) (.+)$", re.M)


@lru_cache(maxsize=1)
def sections() -> dict[str, tuple[str, str]]:
    """{slug: (title, markdown)} of the README's `##` and `###` sections."""
    text = (settings.BASE_DIR / "README.md").read_text(encoding="utf-8")
    found = {}
    headings = list(_HEADING.finditer(text))
    for number, heading in enumerate(headings):
        level = len(heading.group(1))
        end = next((later.start() for later in headings[number + 1:] if len(later.group(1)) <= level), len(text))
        found.setdefault(slugify(heading.group(2)), (heading.group(2), text[heading.end():end]))
    return found


def section_html(slug: str) -> tuple[str, str] | None:
    """(title, HTML) of one section; raw HTML in the markdown is escaped, not passed through."""
    found = sections().get(slug)
    if found is None:
        return None
    title, body = found
    return title, MarkdownIt("commonmark", {"html": False}).enable("table").render(body)
