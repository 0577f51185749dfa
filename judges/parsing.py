"""Steps into (action type, element role, element name, value), for both sides (Django-free).

Agent steps are WebArena actions (`trajectories.formats.actions` is the one grammar); their
element ids are resolved through that step's accessibility tree, or the `where [id] is ...`
label when the tree does not have the id. Gold steps are free text written by annotators
("Click on the 'REPORTS' link in the navigation menu."), read by the small grammar below.
A step that fits neither has no action type: the judge then compares it as plain text.
"""

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

from trajectories.formats.actions import parse_action, resolve_element_label

from .steps import JudgeStep


@dataclass(frozen=True)
class StepParts:
    action_type: str = ""
    element_role: str = ""
    element_name: str = ""
    value: str = ""

    @property
    def structured(self) -> bool:
        return bool(self.action_type)

    def describe(self) -> str:
        """A short English rendering, so a structured step can be compared with free text."""
        words = [self.action_type.replace("_", " ")]
        if self.element_role:
            words.append(self.element_role)
        if self.element_name:
            words.append(f"'{self.element_name}'")
        if self.value:
            words.append(f"'{self.value}'")
        return " ".join(words)


# Icon glyphs: the harness writes private-use characters as literal `\ue60a` escapes.
_ICON_ESCAPE = re.compile(r"\\u[0-9a-fA-F]{4}|[™®©]")
# Unicode's private-use areas (category Co): icon fonts draw their glyphs there.
_PRIVATE_USE = re.compile("[\ue000-\uf8ff\U000f0000-\U000ffffd\U00100000-\U0010fffd]")
_NON_WORD = re.compile(r"[^\w$%./:@#+-]+")


def plain_text(text: str) -> str:
    """Lower-case, icon glyphs and punctuation (quotes, apostrophes) dropped, whitespace collapsed."""
    # Names, values and steps recur in pair after pair; long texts (observations) are not kept.
    return _plain_text_cached(text) if len(text) <= 500 else _plain_text(text)


def _plain_text(text: str) -> str:
    if not text.isascii() or "\\u" in text:  # ASCII text has no glyphs but as escapes
        text = _PRIVATE_USE.sub(" ", _ICON_ESCAPE.sub(" ", text))
    text = unicodedata.normalize("NFKC", text).casefold()
    # Every run of whitespace lies within a run of non-word characters: one space is left between words.
    return _NON_WORD.sub(" ", text).strip(" .:")


# Cached by wrapping rather than by decorating, so that mutation testing changes the function itself.
_plain_text_cached = lru_cache(maxsize=50_000)(_plain_text)


# --- accessibility tree ----------------------------------------------------------------------

_NODE_TAIL = re.compile(
    r"\A\s*(?P<role>[^\s'\"]+)?\s*(?:(?P<q>['\"])(?P<name>.*?)(?P=q)(?=\s+[A-Za-z_-]+:\s|\s*\Z))?", re.S
)


def parse_node(text: str) -> tuple[str, str]:
    """`link 'X' url: ...` -> ("link", "X"); a label with no role or quotes is all name."""
    match = _NODE_TAIL.match(text)
    if match and match.group("q"):
        return (match.group("role") or "").strip(), match.group("name").strip()
    return "", text.strip()


def resolve_element(observation: str, element_id: str) -> tuple[str, str] | None:
    """The role and name of `[element_id]` in an accessibility tree, if the tree has it."""
    line = resolve_element_label(observation, element_id)
    return parse_node(line) if line else None


# --- free-text gold steps --------------------------------------------------------------------

# A single quote opens a span unless a letter precedes it, and closes it unless letters surround
# it: the apostrophe in 'Let's keep the project alive' is inside the span, as is ‘it’s’.
_QUOTED = re.compile(
    r"(?<!\w)'(?P<a>[^']*(?:(?<=\w)'(?=\w)[^']*)*)'(?!\w)|\"(?P<b>[^\"]*)\"|“(?P<c>[^”]*)”"
    r"|(?<!\w)‘(?P<d>[^’]*(?:(?<=\w)’(?=\w)[^’]*)*)’(?!\w)"
)
_ROLE_WORDS = {
    "link": "link",
    "hyperlink": "link",
    "button": "button",
    "tab": "tab",
    "menu": "menuitem",
    "menuitem": "menuitem",
    "option": "option",
    "dropdown": "combobox",
    "drop-down": "combobox",
    "combobox": "combobox",
    "select": "combobox",
    "textbox": "textbox",
    "textarea": "textbox",
    "field": "textbox",
    "box": "textbox",
    "input": "textbox",
    "searchbox": "textbox",
    "checkbox": "checkbox",
    "radio": "radio",
    "icon": "img",
    "image": "img",
}
_KEYS = ("enter", "tab", "escape", "backspace", "delete", "space", "arrowdown", "arrowup")
_URL = re.compile(r"(?:https?://|www\.)\S+|\b[\w-]+\.(?:com|org|net|io)\S*", re.I)
_VERBS = (
    (re.compile(r"\A(?:scroll)\b(?:.*\b(?P<dir>up|down)\b)?", re.I), "scroll"),
    (re.compile(r"\A(?:press|hit)\b(?:\s+(?:the\s+)?(?P<key>\w+))?", re.I), "press"),
    (re.compile(r"\A(?:type|enter|input|fill|write)\b", re.I), "type"),
    (re.compile(r"\A(?:select|choose|pick)\b", re.I), "select"),
    (re.compile(r"\A(?:hover|mouse over|move the mouse)\b", re.I), "hover"),
    (re.compile(r"\A(?:go|navigate)\s+back\b", re.I), "go_back"),
    (re.compile(r"\A(?:go|navigate)\s+forward\b", re.I), "go_forward"),
    (re.compile(r"\A(?:open\s+a\s+new\s+tab)\b", re.I), "new_tab"),
    (re.compile(r"\A(?:close\s+the\s+(?:current\s+)?tab)\b", re.I), "close_tab"),
    (re.compile(r"\A(?:go\s+to|navigate\s+to|visit|open)\b", re.I), "goto"),
    (re.compile(r"\A(?:click|tap|double-click)\b", re.I), "click"),
)


def _quoted_spans(text: str) -> list[tuple[int, int, str]]:
    return [(m.start(), m.end(), next(g for g in m.groups() if g is not None)) for m in _QUOTED.finditer(text)]


def _role_near(text: str, start: int, end: int) -> str:
    """The role word right after a quoted name ("'X' link") or right before it ("the link 'X'")."""
    after = re.match(r"\s*([\w-]+)(?:\s+([\w-]+))?", text[end:])
    if after:
        for word in after.groups():
            if word and word.lower() in _ROLE_WORDS:
                return _ROLE_WORDS[word.lower()]
    before = re.search(r"([\w-]+)\s*\Z", text[:start])
    if before and before.group(1).lower() in _ROLE_WORDS:
        return _ROLE_WORDS[before.group(1).lower()]
    return ""


def _field_span(text: str, spans):
    """The quoted span naming the field typed into: the last one after `into/in/on the` (the
    value may come first: "Type in '12/31/2022' into the 'To' textbox")."""
    fields = [span for span in spans if re.search(r"\b(?:into|in|on)\s+(?:the\s+)?\Z", text[: span[0]], re.I)]
    return fields[-1] if fields else None


def parse_gold_text(text: str) -> StepParts:
    """Read a free-text gold step; an unrecognised sentence gives empty parts."""
    text = text.strip()
    for pattern, action in _VERBS:
        match = pattern.match(text)
        if match:
            break
    else:
        return StepParts()
    spans = _quoted_spans(text)
    if action == "scroll":
        return StepParts("scroll", value=(match.group("dir") or "down").lower())
    if action == "press":
        key = (match.group("key") or "").lower()
        if key in _KEYS:
            return StepParts("press", value=key)
        action = "click"
    if action in ("go_back", "go_forward", "new_tab", "close_tab"):
        return StepParts(action)
    if action == "goto":
        url = _URL.search(text)
        if url:
            return StepParts("goto", value=url.group(0).rstrip(".,"))
        if not spans:
            return StepParts()
        action = "click"
    if action == "type":
        field_span = _field_span(text, spans)
        values = [span for span in spans if span is not field_span]
        if not values:
            return StepParts()
        role = _role_near(text, *field_span[:2]) if field_span else ""
        return StepParts("type", role or "textbox", field_span[2] if field_span else "", values[-1][2])
    if action == "select":
        if len(spans) >= 2:
            return StepParts("select", _role_near(text, *spans[0][:2]) or "combobox", spans[0][2], spans[-1][2])
        if spans:
            return StepParts("select", "option", "", spans[0][2])
        return StepParts()
    if not spans:
        return StepParts()
    start, end, name = spans[0]
    return StepParts(action, _role_near(text, start, end), name)


# --- either side -----------------------------------------------------------------------------


# `parse_action`, once per distinct text: a step's action enters several questions.
parsed = lru_cache(maxsize=50_000)(parse_action)


def resolved_element(step: JudgeStep) -> tuple[str, str]:
    """Role and name of the step's element: given, else from its tree, else from its label."""
    if step.element_role or step.element_name:
        return step.element_role, step.element_name
    action = parsed(step.text)
    found = resolve_element(step.observation, step.element_id or action.element_id)
    if found:
        return found
    if action.valid and action.element_label:
        return parse_node(action.element_label)
    return "", ""


def step_parts(step: JudgeStep) -> StepParts:
    """The WebArena grammar first, then the structure given with the step, then free text."""
    action = parsed(step.text)
    if action.valid:
        role, name = resolved_element(step)
        return StepParts(step.action_type or action.type, role, name, step.value or action.value)
    if step.action_type:
        return StepParts(step.action_type, step.element_role, step.element_name, step.value)
    return parse_gold_text(step.text)


def same_step(first: str, second: str) -> bool:
    """Identical after normalisation: the same WebArena target, or the same plain text."""
    first_action, second_action = parsed(first), parsed(second)
    if first_action.valid and second_action.valid:
        return first_action.same_target(second_action)
    return plain_text(first) == plain_text(second)
