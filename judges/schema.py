"""The answer each LLM question expects, declared once (Django-free).

One declaration per question kind gives three things: the JSON schema an endpoint is asked to
constrain its output to (`json_schema`), the reply format the prompt shows the model
(`reply_format`, the `$answer_format` of the prompt files), and the rules an answer is read by
(`read`). Some bounds are known per request only (how many items a request lists, which gold
steps it asks about): a declaration names them, and the request gives their values (`bounds`).

Reading is lenient only where the meaning is one: a number written as a string (`"1"`), a
whole number written with a fraction of zero (`4.0`), a boolean written as a string (`"true"`),
a single item where a list is expected, a blank text in a list of texts (left out), the JSON wrapped
in a Markdown code fence, a line break or tab inside a string written as itself rather than escaped. Each such
reading is recorded (`Reading.coerced`). Anything else that does not fit is malformed.
"""

import json
import re
from dataclasses import dataclass

from . import attribution, outcome_questions
from . import questions as q

# Caps on the texts an answer holds, sent with the schema where the endpoint can enforce them
# (llama.cpp): a small model held to a grammar otherwise may write one rationale until its context ends.
RATIONALE_CHARS = 400
NAME_CHARS = 200
# A score sent to a grammar-constrained server, which takes no number ranges, as the values it may
# take: tenths from 0 to 1.
SCORE_STEPS = 10


class MalformedAnswer(ValueError):
    """The answer does not fit its kind's schema; the message names the field and what it must be."""


@dataclass(frozen=True)
class Reading:
    value: object
    coerced: tuple[str, ...] = ()


_MISSING = object()
_NUMBER_TEXT = re.compile(r"\A\s*-?(?:\d+(?:\.\d*)?|\.\d+)\s*\Z")
_FENCE = re.compile(r"\A\s*```(?:json|JSON)?\s*\n?(?P<body>.*?)\n?\s*```\s*\Z", re.S)


def _bound(value, bounds: dict):
    return bounds[value] if isinstance(value, str) else value


@dataclass(frozen=True)
class Number:
    """A number from `minimum` to `maximum` (a whole one when `whole`), or one of the whole numbers
    the bound `one_of` lists; a bound given as a string is named, its value given per request."""

    hint: str
    minimum: float | str = 0
    maximum: float | str = 1
    whole: bool = False
    one_of: str = ""

    def describe(self, bounds: dict) -> str:
        if self.one_of:
            return f"one of the numbers {', '.join(map(str, bounds[self.one_of]))}"
        low, high = _bound(self.minimum, bounds), _bound(self.maximum, bounds)
        return f"{'a whole number' if self.whole else 'a number'} from {low:g} to {high:g}"

    def schema(self, bounds: dict, grammar: bool) -> dict:
        if self.one_of:
            return {"type": "integer", "enum": list(bounds[self.one_of])}
        low, high = _bound(self.minimum, bounds), _bound(self.maximum, bounds)
        if grammar and self.whole:
            return {"type": "integer", "enum": list(range(low, high + 1))}
        if grammar:
            return {"type": "number", "enum": [round(low + (high - low) * k / SCORE_STEPS, 3)
                                               for k in range(SCORE_STEPS + 1)]}
        return {"type": "integer" if self.whole else "number", "minimum": low, "maximum": high}

    def example(self) -> str:
        return f"<{self.hint}>"

    def read(self, value, path: str, bounds: dict, coerced: list[str]):
        original, changed = value, False
        if isinstance(value, str) and _NUMBER_TEXT.match(value):
            value, changed = (float(value) if "." in value else int(value)), True
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise MalformedAnswer(f"{path} must be {self.describe(bounds)}, not {original!r}")
        if (self.whole or self.one_of) and isinstance(value, float):
            if not value.is_integer():
                raise MalformedAnswer(f"{path} must be {self.describe(bounds)}, not {original!r}")
            value, changed = int(value), True
        if self.one_of:
            fits = value in bounds[self.one_of]
        else:
            fits = _bound(self.minimum, bounds) <= value <= _bound(self.maximum, bounds)
        if not fits:
            raise MalformedAnswer(f"{path} must be {self.describe(bounds)}, not {original!r}")
        if changed:
            coerced.append(f"{path}: {original!r} read as {value!r}")
        return value if self.whole or self.one_of else float(value)


@dataclass(frozen=True)
class Boolean:
    hint: str = "true | false"

    def describe(self, bounds: dict) -> str:
        return "true or false"

    def schema(self, bounds: dict, grammar: bool) -> dict:
        return {"type": "boolean"}

    def example(self) -> str:
        return self.hint

    def read(self, value, path: str, bounds: dict, coerced: list[str]):
        if isinstance(value, str) and value.strip().lower() in ("true", "false"):
            coerced.append(f"{path}: {value!r} read as {value.strip().lower()}")
            return value.strip().lower() == "true"
        if not isinstance(value, bool):
            raise MalformedAnswer(f"{path} must be true or false, not {value!r}")
        return value


@dataclass(frozen=True)
class Text:
    """A string (stripped); `required`: non-empty, else it may be left out (read as "")."""

    hint: str
    required: bool = False
    max_chars: int = RATIONALE_CHARS

    def describe(self, bounds: dict) -> str:
        return "a non-empty string" if self.required else "a string"

    def schema(self, bounds: dict, grammar: bool) -> dict:
        schema = {"type": "string"}
        if grammar:
            schema.update({"minLength": 1} if self.required else {}, maxLength=self.max_chars)
        return schema

    def example(self) -> str:
        return f'"<{self.hint}>"'

    def read(self, value, path: str, bounds: dict, coerced: list[str]):
        if (value is _MISSING or value is None) and not self.required:
            return ""
        if not isinstance(value, str) or (self.required and not value.strip()):
            shown = "missing" if value is _MISSING else repr(value)
            raise MalformedAnswer(f"{path} must be {self.describe(bounds)}, not {shown}")
        return value.strip()


@dataclass(frozen=True)
class Choice:
    """One of the strings the bound `one_of` lists per request (a step's agents, a taxonomy's keys).
    Read ignoring case and surrounding spaces; when the only choice is "" (no agent is named),
    whatever string is written is read as ""."""

    hint: str
    one_of: str

    def describe(self, bounds: dict) -> str:
        return "one of " + ", ".join(repr(value) for value in bounds[self.one_of])

    def schema(self, bounds: dict, grammar: bool) -> dict:
        return {"type": "string", "enum": list(bounds[self.one_of])}

    def example(self) -> str:
        return f'"<{self.hint}>"'

    def read(self, value, path: str, bounds: dict, coerced: list[str]):
        choices = list(bounds[self.one_of])
        if not isinstance(value, str):
            shown = "missing" if value is _MISSING else repr(value)[:80]
            raise MalformedAnswer(f"{path} must be {self.describe(bounds)}, not {shown}")
        if value in choices:
            return value
        if choices == [""]:
            coerced.append(f"{path}: {value[:80]!r} read as '' (no choice is named)")
            return ""
        found = [choice for choice in choices if choice.casefold() == value.strip().casefold()]
        if not found:
            raise MalformedAnswer(f"{path} must be {self.describe(bounds)}, not {value[:80]!r}")
        coerced.append(f"{path}: {value[:80]!r} read as {found[0]!r}")
        return found[0]


@dataclass(frozen=True)
class ListOf:
    """A list of `item`s, from `min_items` to `max_items` long (either may be a named bound).
    `numbered`: the items' field that numbers them 1, 2, ... in order, sent to a grammar as such."""

    item: object
    min_items: int | str = 0
    max_items: int | str | None = None
    numbered: str = ""

    def describe(self, bounds: dict) -> str:
        low, high = _bound(self.min_items, bounds), _bound(self.max_items, bounds)
        if high is None:
            return f"a list of at least {low} items" if low else "a list"
        return f"a list of {low} items" if low == high else f"a list of {low} to {high} items"

    def schema(self, bounds: dict, grammar: bool) -> dict:
        if grammar and self.numbered:
            item = self.item.schema(bounds, grammar)
            return {"type": "array", "items": False, "prefixItems": [
                {**item, "properties": {**item["properties"], self.numbered: {"const": number}}}
                for number in range(1, _bound(self.max_items, bounds) + 1)]}
        schema = {"type": "array", "items": self.item.schema(bounds, grammar)}
        if _bound(self.min_items, bounds):
            schema["minItems"] = _bound(self.min_items, bounds)
        if self.max_items is not None:
            schema["maxItems"] = _bound(self.max_items, bounds)
        return schema

    def example(self) -> str:
        return f"[{self.item.example()}, ...]"

    def read(self, value, path: str, bounds: dict, coerced: list[str]):
        if value is not _MISSING and not isinstance(value, list):
            try:
                single = self.item.read(value, f"{path}[0]", bounds, [])
            except MalformedAnswer:
                single = _MISSING
            if single is not _MISSING:
                coerced.append(f"{path}: a single item read as a list of one")
                value = [value]
        if not isinstance(value, list):
            shown = "missing" if value is _MISSING else repr(value)[:80]
            raise MalformedAnswer(f"{path} must be {self.describe(bounds)}, not {shown}")
        low, high = _bound(self.min_items, bounds), _bound(self.max_items, bounds)
        if isinstance(self.item, Text) and not self.numbered:
            kept = [item for item in value if not (isinstance(item, str) and not item.strip())]
            if len(kept) < len(value) and len(kept) >= low:  # a blank text says nothing: nothing is lost
                coerced.append(f"{path}: {len(value) - len(kept)} blank item(s) left out")
                value = kept
        if len(value) < low or (high is not None and len(value) > high):
            raise MalformedAnswer(f"{path} must be {self.describe(bounds)}, not {len(value)}")
        return [self.item.read(item, f"{path}[{n}]", bounds, coerced) for n, item in enumerate(value)]


@dataclass(frozen=True)
class Object:
    """A JSON object with these fields; fields it has beyond them are ignored."""

    fields: tuple[tuple[str, object], ...]

    def describe(self, bounds: dict) -> str:
        return "a JSON object"

    def schema(self, bounds: dict, grammar: bool) -> dict:
        return {"type": "object", "properties": {name: node.schema(bounds, grammar) for name, node in self.fields},
                "required": [name for name, _ in self.fields], "additionalProperties": False}

    def example(self) -> str:
        return "{" + ", ".join(f'"{name}": {node.example()}' for name, node in self.fields) + "}"

    def read(self, value, path: str, bounds: dict, coerced: list[str]):
        if not isinstance(value, dict):
            raise MalformedAnswer(f"{path} must be a JSON object, not {repr(value)[:80]}")
        prefix = "" if path == ROOT else f"{path}."
        return {name: node.read(value.get(name, _MISSING), f"{prefix}{name}", bounds, coerced)
                for name, node in self.fields}


ROOT = "answer"


def _rationale(hint: str = "one sentence") -> Text:
    return Text(hint)


def _scored(hint: str = "number from 0 to 1") -> Object:
    return Object((("score", Number(hint)), ("rationale", _rationale())))


def _numbered_answers(item: str) -> Object:
    """One scored answer per item the request lists, by its number: `count` items."""
    entry = Object((("number", Number(f"{item} number", 1, "count", whole=True)),
                    ("score", Number("number from 0 to 1")), ("rationale", _rationale())))
    return Object((("answers", ListOf(entry, "count", "count", numbered="number")),))


ANSWERS = {
    q.STEP_MATCH: _scored(),
    q.TRAJECTORY_MATCH: Object((
        ("pairs", ListOf(Object((("gold", Number("gold step number", one_of="gold")),
                                 ("agent", Number("agent step number", 1, "agent_count", whole=True)),
                                 ("score", Number("0 to 1")))), max_items="most_pairs")),
        ("rationale", _rationale("two or three sentences")),
    )),
    q.REPETITION: _numbered_answers("pair"),
    q.REQUIREMENTS: _numbered_answers("requirement"),
    q.GROUNDEDNESS: Object((("grounded", _scored("0 to 1")), ("relevant", _scored("0 to 1")))),
    q.FUZZY_ANSWER: _scored("0, 0.5 or 1"),
    q.ELEMENT_AT_POINT: Object((("element", Text("the element at the point", required=True, max_chars=NAME_CHARS)),
                                ("intended", Boolean()), ("rationale", _rationale()))),
    outcome_questions.KEY_POINTS: Object((("key_points", ListOf(Text("key point", required=True, max_chars=NAME_CHARS),
                                                      1, outcome_questions.MAX_KEY_POINTS)),)),
    outcome_questions.SCREENSHOT: Object((("relevance", Number("1, 2, 3, 4 or 5", 1, 5, whole=True)),
                                ("reasoning", _rationale("what the screenshot shows")))),
    outcome_questions.VERDICT: Object((("success", Boolean("true or false")),
                             ("reasoning", _rationale("your reasoning, naming missed key points")))),
    attribution.WHOLE: Object((("step", Number("decisive step number", one_of="steps")),
                               ("agent", Choice("responsible agent, as the log names it", "agents")),
                               ("failure_type", Choice("failure type key", "types")),
                               ("reason", _rationale("why this step decided the failure")))),
    attribution.STEP: Object((("decisive", Boolean()),
                              ("failure_type", Choice("failure type key, if decisive", "types")),
                              ("reason", _rationale()))),
    attribution.HALVES: Object((("half", Choice("first | second", "halves")),
                                ("failure_type", Choice("failure type key", "types")),
                                ("reason", _rationale()))),
}


def _declared(kind: str) -> Object:
    try:
        return ANSWERS[kind]
    except KeyError:
        raise ValueError(f"no answer schema for question kind {kind!r}") from None


def declaration(kind: str) -> str:
    """The declaration as text, for the prompt version: a changed schema is a new version."""
    return repr(_declared(kind))


def json_schema(kind: str, bounds: dict | None = None, *, grammar: bool = True) -> dict:
    """The schema of a kind's answer. `grammar`: spelled for a server that turns it into a grammar
    (llama.cpp), which enforces string lengths but no number ranges: caps on the texts, numbers as
    the values allowed, numbered lists as tuples; else as OpenAI's strict mode takes it (ranges, no
    string lengths)."""
    return _declared(kind).schema(bounds or {}, grammar)


def reply_format(kind: str) -> str:
    """What the prompt tells the model to reply."""
    return f"Reply with one JSON object and nothing else:\n{_declared(kind).example()}"


def read(kind: str, data, bounds: dict | None = None) -> Reading:
    """The answer read by its kind's rules; MalformedAnswer naming what does not fit."""
    coerced: list[str] = []
    value = _declared(kind).read(data, ROOT, bounds or {}, coerced)
    return Reading(value, tuple(coerced))


def parse(kind: str, content: str | None, bounds: dict | None = None) -> Reading:
    """A reply's text read as its kind's answer: JSON, possibly inside a Markdown code fence."""
    text, coerced = content or "", []
    fenced = _FENCE.match(text)
    if fenced:
        text = fenced.group("body")
        coerced.append("the JSON was read from inside a code fence")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        try:  # a line break or tab written as itself inside a string, which JSON wants escaped
            data = json.loads(text, strict=False)
        except json.JSONDecodeError:
            raise MalformedAnswer(f"the reply is not JSON ({error})") from None
        coerced.append("control characters inside strings were read as written")
    reading = read(kind, data, bounds)
    return Reading(reading.value, tuple(coerced) + reading.coerced)
