"""What a gold step or an intent says, read from its text (Django-free): its wording for comparing
steps, the values it quotes, whether it types them, and the links and numbers it names."""

import re

_QUOTED = re.compile(r"'([^']{2,}?)'|\"([^\"]{2,}?)\"|‘([^’]{2,}?)’|“([^”]{2,}?)”")
_TYPING = re.compile(r"^\W*(type|enter|input|fill|search|write|paste)\b", re.IGNORECASE)
LINK = re.compile(r"https?://\S+|\b[\w-]+\.(?:com|org|net|io)\b", re.IGNORECASE)
NUMBER = re.compile(r"\b\d[\d,./-]{2,}\b")
_INTO = ("into the", "in the", "into", "in")


def fold_case_and_spacing(text: str) -> str:
    """A step or value as the checks compare wordings: lower case, runs of whitespace as one space,
    no end punctuation ("Click  'Reports'." and "click 'reports'" are one step)."""
    return re.sub(r"\s+", " ", text.strip().lower()).strip(" .,:;!?")


def quoted_values(text: str) -> list[str]:
    return [next(group for group in match.groups() if group) for match in _QUOTED.finditer(text)]


def is_typing(text: str) -> bool:
    return _TYPING.match(text) is not None


def typed_values(text: str) -> list[str]:
    """The quoted values a step types; the field it types into ("into the 'To' textbox") is not one."""
    if not is_typing(text):
        return []
    return [next(group for group in match.groups() if group) for match in _QUOTED.finditer(text)
            if not text[: match.start()].lower().rstrip().endswith(_INTO)]


def holds(text: str, value: str) -> bool:
    """A folded text holds a value (folded too, three characters or more) as whole words."""
    value = fold_case_and_spacing(value)
    return len(value) >= 3 and re.search(rf"(?<![a-z0-9]){re.escape(value)}(?![a-z0-9])", text) is not None
