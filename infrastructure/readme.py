"""The README's sections and the documents under docs/, served as pages, so that a page can link the
definition it cites. Links between them and their images are rewritten to where the pages serve them:
the markdown is written to be read on disk, where `#metrics` and `docs/screenshots/x.png` resolve."""

import re
from dataclasses import dataclass
from functools import lru_cache

from django.conf import settings
from django.templatetags.static import static
from django.urls import reverse
from django.utils.text import slugify
from markdown_it import MarkdownIt

_HEADING = re.compile(r"^(#{2,4}) (.+)$", re.M)
_TITLE = re.compile(r"^# (.+)$", re.M)
_DOCUMENT = re.compile(r"^docs/([\w-]+)\.md(?:#([\w-]+))?$")
IMAGES = "docs/screenshots/"  # served as static files under the same path (STATICFILES_DIRS)


@dataclass(frozen=True)
class Section:
    slug: str
    title: str
    level: int  # 1 for a document of docs/, 2 to 4 for a README heading
    markdown: str


def _documents_dir():
    return settings.BASE_DIR / "docs"


@lru_cache(maxsize=1)
def sections() -> dict[str, Section]:
    """{slug: section} of the README's `##` to `####` headings, in order, then each docs/*.md whole."""
    text = (settings.BASE_DIR / "README.md").read_text(encoding="utf-8")
    found = {}
    headings = list(_HEADING.finditer(text))
    for number, heading in enumerate(headings):
        level = len(heading.group(1))
        end = next((later.start() for later in headings[number + 1:] if len(later.group(1)) <= level), len(text))
        slug = slugify(heading.group(2))
        found.setdefault(slug, Section(slug, heading.group(2), level, text[heading.end():end]))
    for path in sorted(_documents_dir().glob("*.md")):
        body = path.read_text(encoding="utf-8")
        title = _TITLE.search(body)
        found.setdefault(path.stem, Section(path.stem, title.group(1) if title else path.stem, 1,
                                            _TITLE.sub("", body, count=1)))
    return found


def _served_address(address: str) -> str:
    """Where a link or image written for the files on disk is served; any other address as written."""
    if address.startswith("#") and address[1:] in sections():
        return reverse("readme-section", args=[address[1:]])
    if address.startswith(IMAGES):
        return static(address)
    document = _DOCUMENT.match(address)
    if document and document.group(1) in sections():
        return reverse("readme-section", args=[document.group(1)])
    return address


def _rewrite(tokens) -> None:
    for token in tokens:
        for name in ("href", "src"):
            if token.attrGet(name):
                token.attrSet(name, _served_address(token.attrGet(name)))
        if token.children:
            _rewrite(token.children)


def section_html(slug: str) -> tuple[str, str] | None:
    """(title, HTML) of one section; raw HTML in the markdown is escaped, not passed through."""
    found = sections().get(slug)
    if found is None:
        return None
    markdown = MarkdownIt("commonmark", {"html": False}).enable("table")
    tokens = markdown.parse(found.markdown)
    _rewrite(tokens)
    return found.title, markdown.renderer.render(tokens, markdown.options, {})
