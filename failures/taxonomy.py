"""Failure types a grader picks from (Django-free): a default taxonomy for web agents, which a
benchmark may replace with its own, written one type a line as `key | name | definition`."""

from dataclasses import dataclass

KEY_MAX_LENGTH = 40


@dataclass(frozen=True)
class FailureType:
    key: str
    name: str
    definition: str


DEFAULT_TYPES = (
    FailureType("misread_task", "Misread the task",
                "Pursued another goal than the task's: a wrong item, site, constraint or question."),
    FailureType("wrong_element", "Wrong element or target",
                "Acted on the wrong element, link, result or page while the task was understood."),
    FailureType("wrong_value", "Wrong value typed",
                "Typed or selected a wrong value: a misspelt query, a wrong date, amount or option."),
    FailureType("navigation_lost", "Navigation lost",
                "Left the pages that lead to the goal and did not find the way back."),
    FailureType("stopped_early", "Gave up early or stopped too late",
                "Stopped before the task was done, or went on past its end and undid it."),
    FailureType("looped", "Looped", "Repeated the same actions without progress."),
    FailureType("hallucinated_answer", "Hallucinated answer",
                "Answered with something the pages did not show, or claimed success without it."),
    FailureType("blocked_by_site", "Blocked by the site",
                "Stopped by a captcha, a login wall, an error page or a refusal of the site."),
    FailureType("environment_error", "Environment or tool error",
                "The harness, browser, tool or another agent's code failed, not the agent's choice."),
)


class TaxonomyError(ValueError):
    """A taxonomy as typed that cannot be kept; the message names the line."""


def parse_types(text: str) -> tuple[FailureType, ...]:
    """`key | name | definition` a line; blank lines are skipped. Keys are short, lower-case words
    joined by underscores, each used once."""
    types, seen = [], set()
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        parts = [part.strip() for part in line.split("|", 2)]
        if len(parts) < 3 or not all(parts):
            raise TaxonomyError(f"line {number}: expected `key | name | definition`, got {line.strip()[:80]!r}")
        key, name, definition = parts
        if len(key) > KEY_MAX_LENGTH or not key.replace("_", "").isalnum() or key != key.lower():
            raise TaxonomyError(f"line {number}: key {key[:60]!r} is not lower-case letters, digits and underscores "
                                f"of at most {KEY_MAX_LENGTH} characters")
        if key in seen:
            raise TaxonomyError(f"line {number}: key {key!r} is used twice")
        seen.add(key)
        types.append(FailureType(key, name, definition))
    if not types:
        raise TaxonomyError("a taxonomy needs at least one failure type")
    return tuple(types)


def types_text(types) -> str:
    """The types as the editor shows them, the inverse of `parse_types`."""
    return "\n".join(f"{item.key} | {item.name} | {item.definition}" for item in types)
