"""A step search's words marked where a trajectory page shows the texts it found."""

from django import template
from django.utils.html import format_html, format_html_join

from ..step_search import marked

register = template.Library()


@register.filter
def mark_terms(text, terms):
    """The text escaped, each of the search's words in it wrapped in <mark>: the marks are the only markup,
    added around pieces already escaped. The text as it is (escaped by the template) without words."""
    if not terms or not text:
        return text
    return format_html_join("", "{}", ((format_html("<mark>{}</mark>", piece) if found else piece,)
                                       for piece, found in marked(str(text), terms)))


@register.filter
def holds_terms(text, terms) -> bool:
    """Whether the text holds one of the search's words (a collapsed pane that does is opened)."""
    return bool(terms and text) and any(found for _, found in marked(str(text), terms))
