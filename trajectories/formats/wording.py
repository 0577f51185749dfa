"""Wording shared by the importers' reports."""


def count_of(number: int, noun: str, plural: str = "") -> str:
    """"1 step", "3 steps": a count with its noun in the right number."""
    return f"{number} {noun if number == 1 else plural or noun + 's'}"
