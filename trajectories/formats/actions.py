"""The WebArena action grammar: executed actions (`parsed_action`) and planned actions.

Parsing is strict on purpose: Element Accuracy counts a planned `scroll [direction=down]`
against an executed `scroll [down]` as a miss, so arguments are kept exactly as written.

The two sides write Enter differently. A planned `type [id] [text] [1]` (or with no third
argument: the harness's default is 1) asks for Enter after the text; the harness then types
`text + "\n"` and writes the executed action with that newline shown as a space:
`type [id] [text ] where ...`. `parse_action(..., executed=True)` reads that encoding.
"""

import re
from dataclasses import dataclass

ACTION_TYPES = (
    "click",
    "hover",
    "type",
    "press",
    "scroll",
    "select",
    "goto",
    "new_tab",
    "close_tab",
    "go_back",
    "go_forward",
    "tab_focus",
    "stop",
    "none",
)
# The harness writes `page_focus`; the prompt's action space says `tab_focus`.
_ALIASES = {"page_focus": "tab_focus"}
ELEMENT_ACTIONS = frozenset({"click", "hover", "type", "select"})

_WHERE = re.compile(r"\s+where\s+\[(?P<id>[^\]]*)\]\s+is\s?(?P<label>.*)\Z", re.S)
_HEAD = re.compile(r"\A(?P<name>[a-z_]+)(?P<rest>.*)\Z", re.S)
_ARG = re.compile(r"\s*\[(?P<arg>.*?)\](?=\s*\[|\s*\Z)", re.S)
_FENCE = re.compile(r"`{3,}")
_SPACES = re.compile(r"\s*")
_AFTER_MARKER = re.compile(r"[ \t]+(.+)$", re.M)


@dataclass(frozen=True)
class ParsedAction:
    type: str
    element_id: str = ""
    element_label: str = ""
    value: str = ""
    press_enter: bool | None = None
    valid: bool = True

    def same_target(self, other: "ParsedAction") -> bool:
        """Same action type, element and argument (its whitespace normalised); `press_enter` and
        labels are ignored."""
        return (
            self.valid
            and other.valid
            and self.type == other.type
            and self.element_id == other.element_id
            and collapse_whitespace(self.value) == collapse_whitespace(other.value)
        )

    def executes(self, planned: "ParsedAction") -> bool:
        """This executed action is the planned one: the same target and the same Enter flag."""
        return self.same_target(planned) and bool(self.press_enter) == bool(planned.press_enter)


def collapse_whitespace(text: str) -> str:
    """Runs of whitespace (newlines included) as one space, none at either end."""
    return " ".join(text.split())


INVALID = ParsedAction(type="none", valid=False)


def _split_args(rest: str) -> list[str] | None:
    args, pos = [], 0
    rest = rest.rstrip()
    while pos < len(rest):
        match = _ARG.match(rest, pos)
        if not match:
            return None
        args.append(match.group("arg"))
        pos = match.end()
    return args


def parse_action(text: str | None, *, executed: bool = False) -> ParsedAction:
    """Parse one action string; anything outside the grammar is an invalid `none` action.

    `executed`: the string is a harness's executed action, whose `type` with two arguments
    pressed Enter exactly when its text ends in the space the newline was written as.
    """
    if text is None:
        return INVALID
    text = text.strip()
    label = ""
    where = _WHERE.search(text)
    if where:
        label = where.group("label").strip()
        text = text[: where.start()].rstrip()
        # Some harness versions repeat the id inside the label: "[1090] link 'X'".
        repeated = f"[{where.group('id')}]"
        if label.startswith(repeated):
            label = label[_SPACES.match(label, len(repeated)).end():]
    head = _HEAD.match(text)
    if not head:
        return INVALID
    name = _ALIASES.get(head.group("name"), head.group("name"))
    rest = head.group("rest")
    if name not in ACTION_TYPES or name == "none":
        return INVALID
    if name == "stop":
        # The answer may itself contain brackets: take everything between the outer pair.
        body = rest.strip()
        if not (body.startswith("[") and body.endswith("]")):
            return INVALID
        return ParsedAction(type="stop", value=body[1:-1])
    args = _split_args(rest)
    if args is None:
        return INVALID
    if name in ("click", "hover") and len(args) == 1:
        return ParsedAction(type=name, element_id=args[0], element_label=label)
    if name == "type" and len(args) in (2, 3):
        value = args[1]
        if len(args) == 3:
            press_enter = args[2].strip() != "0"
        elif executed:
            press_enter = value != value.rstrip(" \n")
            value = value.rstrip(" \n") if press_enter else value
        else:
            press_enter = True
        return ParsedAction(type="type", element_id=args[0], element_label=label, value=value, press_enter=press_enter)
    if name == "select" and len(args) == 2:
        return ParsedAction(type="select", element_id=args[0], element_label=label, value=args[1])
    if name in ("press", "scroll", "goto", "tab_focus") and len(args) == 1:
        return ParsedAction(type=name, value=args[0])
    if name in ("new_tab", "close_tab", "go_back", "go_forward") and not args:
        return ParsedAction(type=name)
    return INVALID


def scroll_direction(dx: float, dy: float) -> str:
    """The way a scroll of (dx, dy) pixels went: down, up, right or left (empty: it did not move)."""
    if dy:
        return "down" if dy > 0 else "up"
    return "right" if dx > 0 else "left" if dx < 0 else ""


def with_enter_flag(planned: str) -> str:
    """A planned action as the harness completes it before running it: a `type` without an Enter
    flag gets the default `[1]` (so read as an executed action, it still presses Enter)."""
    action = parse_action(planned)
    if action.type == "type" and action.valid and not re.search(r"\[[01]\]\s*\Z", planned.strip()):
        return f"{planned.strip()} [1]"
    return planned


def extract_planned_action(reasoning: str | None) -> str | None:
    """The last triple-backticked span of the reasoning, i.e. the action the agent stated.

    The span is taken between the last two fences, counted from the end: models quote the
    format hint with stray fences (e.g. "````action [arg]```") earlier in the text, and pairing
    fences from the start would then swallow the final action.
    """
    if not reasoning:
        return None
    fences = list(_FENCE.finditer(reasoning))
    if len(fences) < 2:
        return None
    planned = reasoning[fences[-2].end() : fences[-1].start()].strip()
    return planned or None


def resolve_element_label(observation: str, element_id: str) -> str:
    """The accessibility-tree line of an element, without its `[id]`: "link 'Home' url: ..."."""
    if not element_id or not observation:
        return ""
    # The first `[id]` that only spaces or tabs precede on its line: found with str.find, since a
    # pattern compiled per id would crowd the regular expression cache (every step has its id).
    marker = f"[{element_id}]"
    start = observation.find(marker)
    while start != -1:
        line_start = observation.rfind("\n", 0, start) + 1
        if not observation[line_start:start].strip(" \t"):
            rest = _AFTER_MARKER.match(observation, start + len(marker))
            if rest:
                return rest.group(1).strip()
        start = observation.find(marker, start + 1)
    return ""


_FORCED_STOPS = (
    (re.compile(r"same action|repeat", re.I), "repeated_action"),
    (re.compile(r"parse|invalid", re.I), "invalid_actions"),
    (re.compile(r"max(imum)?[ _]steps?", re.I), "max_steps"),
)


def forced_stop_reason(action: ParsedAction) -> str | None:
    """The early-stop reason when a `stop` was written by the harness rather than the agent."""
    if action.type != "stop":
        return None
    answer = action.value.strip()
    if not re.match(r"\A(early stop|reach(ed)? max)", answer, re.I):
        return None
    for pattern, reason in _FORCED_STOPS:
        if pattern.search(answer):
            return reason
    return "other"
