"""WebArena-Verified's `AgentResponseEvaluator` offline: the agent's structured answer against the expected one.

Agents answer Verified tasks with `{task_type, status, retrieved_data}` (JSON, possibly inside
a ```json fence). Following webarena-verified's evaluator (ServiceNow/webarena-verified,
`agent_response_evaluator.py`, `value_normalizer.py`, `data_types`):
- `task_type` and `status` are compared as normalised strings (so `RETRIEVE` = `retrieve`);
  the legacy key `performed_operation` stands for `task_type`;
- `retrieved_data` is compared only for retrieve tasks; a value that is not a list is a list of
  one; the items are compared as a multiset unless the evaluator says `ordered: true`, so both
  lists need the same length;
- an expected item that is a list of two or more values lists alternatives (any one matches);
- strings are normalised: the marks (TM) (R) (SM) (C) removed, NFKC, hyphens next to letters
  made spaces, control characters dropped, folded to ASCII, spaces collapsed, case-folded;
- numbers (the schema says `number` / `integer`, or it says nothing and the expected value is a
  number) compare as numbers, a numeric string ("1,234.50", "$12") counting as its number;
- objects compare property by property, each property by its schema.
One difference: upstream transliterates to ASCII with `unidecode`; here accents are removed by
Unicode decomposition and other non-ASCII characters dropped, which agrees on Latin text.
"""

import json
import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass

from trajectories.formats.webarena_verified import agent_response_evaluator

from .base import MetricResult

RETRIEVE = "retrieve"
_FENCE = re.compile(r"```(?:json)?\s*\n?(.*?)\n?```", re.DOTALL)
_HYPHEN = "[\u002d\u2010\u2011\u2012\u2013\u2014\u2015\u2212\u00ad]"
_HYPHEN_NEAR_LETTER = re.compile(rf"(?<=[a-zA-Z]){_HYPHEN}|{_HYPHEN}(?=[a-zA-Z])")
_MARKS = {0x2122: None, 0x00AE: None, 0x2120: None, 0x00A9: None}
_NUMBER = re.compile(r"\A[-+]?[$€£]?\s*[-+]?(\d{1,3}(,\d{3})+|\d+)(\.\d+)?\s*%?\Z")
_NUMERIC_TYPES = ("number", "integer")


@dataclass(frozen=True)
class FieldCheck:
    """One field of the structured answer: what was expected, what the agent said, and why not."""

    field: str
    expected: object
    actual: object
    passed: bool | None  # None: not compared (retrieved_data of a task that retrieves nothing)
    reason: str = ""


@dataclass(frozen=True)
class AgentResponseCheck(MetricResult):
    passed: bool
    fields: tuple[FieldCheck, ...]
    note: str = ""


def fold_to_ascii(text: str) -> str:
    """A string as WebArena-Verified compares strings (its `normalize_string`): ASCII letters, lower case."""
    text = text.translate(_MARKS)
    text = unicodedata.normalize("NFKC", text)
    text = _HYPHEN_NEAR_LETTER.sub(" ", text)
    text = "".join(" " if char in "\t\n\r" else char for char in text
                   if not unicodedata.category(char).startswith("C") or char in "\t\n\r")
    text = "".join(char for char in unicodedata.normalize("NFKD", text) if not unicodedata.combining(char))
    text = text.encode("ascii", "ignore").decode("ascii")
    return " ".join(text.split()).casefold()


def _number(value) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str) and _NUMBER.match(value.strip()):
        return float(re.sub(r"[^\d.+-]", "", value.strip()))
    return None


def _type(schema: Mapping | None) -> str:
    if not isinstance(schema, Mapping):
        return ""
    return schema.get("format") or schema.get("type") or ""


def _equal(expected, actual, schema: Mapping | None) -> bool:
    """One expected value (alternatives allowed) against one actual value."""
    if isinstance(expected, list) and len(expected) >= 2 and _type(schema) != "array":
        return any(_equal(alternative, actual, schema) for alternative in expected)
    if isinstance(expected, Mapping):
        if isinstance(actual, str):
            try:
                actual = json.loads(actual)
            except json.JSONDecodeError:
                return False
        if not isinstance(actual, Mapping):
            return False
        properties = (schema or {}).get("properties") or {}
        return all(_equal(expected[key], actual.get(key), properties.get(key)) for key in expected)
    kind = _type(schema)
    if kind in _NUMERIC_TYPES or (not kind and isinstance(expected, (int, float)) and not isinstance(expected, bool)):
        left, right = _number(expected), _number(actual)
        return left is not None and right is not None and abs(left - right) <= 1e-9 * max(1.0, abs(left))
    if expected is None or actual is None:
        return expected is None and actual is None
    return fold_to_ascii(str(expected)) == fold_to_ascii(str(actual))


def _describe(value) -> str:
    if isinstance(value, list) and len(value) >= 2:
        return " or ".join(_describe(item) for item in value)
    return json.dumps(value, ensure_ascii=False)


def _compare_items(expected: list, actual: list, item_schema, ordered: bool) -> str:
    """Why two retrieved_data lists differ; "" when they match."""
    if len(expected) != len(actual):
        return f"expected {len(expected)} item(s), got {len(actual)}"
    if ordered:
        for position, (want, got) in enumerate(zip(expected, actual), start=1):
            if not _equal(want, got, item_schema):
                return f"item {position}: expected {_describe(want)}, got {_describe(got)}"
        return ""
    unused = list(range(len(actual)))
    missing = []
    for want in expected:
        match = next((index for index in unused if _equal(want, actual[index], item_schema)), None)
        if match is None:
            missing.append(want)
        else:
            unused.remove(match)
    if not missing:
        return ""
    extra = [actual[index] for index in unused]
    return (f"not in the answer: {', '.join(_describe(item) for item in missing)}; "
            f"not expected: {', '.join(_describe(item) for item in extra)}")


def parse_agent_response(final_answer: str | None):
    """The agent's answer as JSON (a ```json fence allowed), or the stripped text when it is not JSON."""
    text = (final_answer or "").strip()
    fenced = _FENCE.search(text)
    if fenced:
        text = fenced.group(1).strip()
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text or None


def agent_response_check(evaluator: Mapping, final_answer: str | None) -> AgentResponseCheck:
    """The agent's final answer against one `AgentResponseEvaluator` config, field by field."""
    expected = evaluator.get("expected")
    if not isinstance(expected, Mapping):
        raise ValueError(f"eval.AgentResponseEvaluator.expected: expected an object, got {expected!r}")
    response = parse_agent_response(final_answer)
    if not isinstance(response, Mapping):
        note = ("no final answer" if response is None
                else "the final answer is not a JSON object {task_type, status, retrieved_data}")
        fields = tuple(FieldCheck(name, expected.get(name), None, False, note)
                       for name in ("task_type", "status", "retrieved_data"))
        return AgentResponseCheck(passed=False, fields=fields, note=note)

    checks = []
    for name in ("task_type", "status"):
        actual = response.get(name)
        if actual is None and name == "task_type":
            actual = response.get("performed_operation")
        if not isinstance(actual, str) or not actual.strip():
            checks.append(FieldCheck(name, expected.get(name), actual, False, "missing from the answer"))
            continue
        same = fold_to_ascii(actual) == fold_to_ascii(str(expected.get(name)))
        checks.append(FieldCheck(name, expected.get(name), actual, same,
                                 "" if same else f"expected {expected.get(name)!r}, got {actual!r}"))

    want, got = expected.get("retrieved_data"), response.get("retrieved_data")
    if fold_to_ascii(str(expected.get("task_type"))) != RETRIEVE:
        checks.append(FieldCheck("retrieved_data", want, got, None, "not compared: the task retrieves nothing"))
    else:
        schema = evaluator.get("results_schema") or {}
        item_schema = schema.get("items") if isinstance(schema, Mapping) else None
        wanted = want if isinstance(want, list) else [want]
        if isinstance(got, str):
            parsed = parse_agent_response(got)
            got = parsed if isinstance(parsed, list) else got
        actual_items = [] if got is None or got == "" else got if isinstance(got, list) else [got]
        if not actual_items and wanted:
            reason = f"expected {len(wanted)} item(s), the answer has none"
        else:
            reason = _compare_items(wanted, actual_items, item_schema, bool(evaluator.get("ordered", False)))
        checks.append(FieldCheck("retrieved_data", want, got, not reason, reason))
    return AgentResponseCheck(passed=all(check.passed is not False for check in checks), fields=tuple(checks))


def task_answer_check(eval_config: Mapping, final_answer: str | None) -> AgentResponseCheck | None:
    """The structured answer check of a WebArena-Verified task; None for other tasks."""
    evaluator = agent_response_evaluator(eval_config)
    return None if evaluator is None else agent_response_check(evaluator, final_answer)
