"""The terms of a text, the unit of word fit (Django-free): words of three letters or more, stop
words aside, stemmed so that inflections of one word meet."""

import re

_WORD = re.compile(r"[a-z0-9][a-z0-9.$/-]*[a-z0-9]|[a-z0-9]")
STOP_WORDS = frozenset(
    "the and for with from into this that what which when where who how are was were has have had not any all "
    "its his her their our your you him she they them then than there here can will would should could may might "
    "about after before over under more most less few one two via per out off our my me com www http https".split()
)
_SUFFIXES = ("ings", "ing", "ers", "er", "ies", "es", "ed", "s")


def stem(word: str) -> str:
    """Bestsellers and best-selling, reports and report: one term each. A suffix comes off only
    when four letters remain ("uses" stays)."""
    if not word.isalpha():
        return word
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 4:
            return word[: -len(suffix)]
    return word


def terms(text: str) -> dict[str, str]:
    """The terms of a text, each with the word it came from: words of three letters or more,
    stemmed; a compound (a date, a hyphenated word, a domain) also gives its parts and its letters
    run together, all counted as that one word when fits are summed."""
    found = {}
    for word in _WORD.findall(text.lower()):
        parts = re.split(r"[./-]", word)
        for part in ([word, "".join(parts), *parts] if len(parts) > 1 else [word]):
            if len(part) >= 3 and part not in STOP_WORDS:
                found.setdefault(stem(part), word)
    return found


def words(text: str) -> set[str]:
    return set(terms(text))
