"""Every sentence the gold importer can report reads as a complete, grammatical sentence, whatever
the numbers, labels and task ids filled into it."""

import itertools
import re
import string

import pytest

from annotation.formats import ANOMALY_MESSAGES, UNPLACED_MESSAGES, AnomalyKind, GoldAnomaly
from annotation.gold_records import UnplacedRow
from annotation.services.gold_import import GoldImportReport, ImportedGold
from trajectories.formats.wording import count_of

# Values each placeholder takes in the importer, at their edges (one, several, a label that is no number).
SAMPLES = {
    "count": [2, 9],
    "steps": [count_of(1, "step"), count_of(6, "step")],
    "row_count": [count_of(1, "row"), count_of(3, "row")],
    "number": [2, 7],
    "previous_number": [1, 6],
    "label": ["1", "Pink", "(blank)"],
    "task_id": ["809", "m2w-0a1b"],
    "next_task_id": ["82"],
    "benchmark": ["webarena"],
    "action_type": ["swipe"],
    "known": ["click, type"],
}
PLURAL_NOUNS = ("steps", "rows", "tasks", "trajectories", "anomalies", "lines", "golds", "blocks")
DETERMINERS = ("a", "an", "the", "its", "whose", "this", "that")


def sentence_problems(text: str) -> list[str]:
    """What keeps `text` from being a finished sentence of the report."""
    problems = []
    if re.search(r"[{}]", text):
        problems.append("a placeholder left unfilled")
    if text != text.strip() or "  " in text:
        problems.append("stray spaces")
    if not text or text[-1] in ":;,-(" or text.rsplit(" ", 1)[-1].lower() in DETERMINERS:
        problems.append("an unfinished ending")
    if doubled := re.search(r"\b(\w+) \1\b", text, re.IGNORECASE):
        problems.append(f"the doubled word {doubled.group(0)!r}")
    if stacked := re.search(rf"\b({'|'.join(DETERMINERS)}) ({'|'.join(DETERMINERS)})\b", text, re.IGNORECASE):
        problems.append(f"two determiners in a row: {stacked.group(0)!r}")
    if one := re.search(rf"(?<![\w.-])1 ({'|'.join(PLURAL_NOUNS)})\b", text):
        problems.append(f"a plural after one: {one.group(0)!r}")
    if text.count("(") != text.count(")") or text.count("'") % 2 and not re.search(r"\w'\w|'s\b", text):
        problems.append("unbalanced brackets or quotes")
    return problems


def _renderings(template: str):
    fields = sorted({name for _, name, _, _ in string.Formatter().parse(template) if name})
    for values in itertools.product(*(SAMPLES[name] for name in fields)):
        yield template.format(**dict(zip(fields, values)))


def _fields(template: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


ALL_TEMPLATES = {f"anomaly {kind}{':' + variant if variant else ''}": template
                 for (kind, variant), template in ANOMALY_MESSAGES.items()}
ALL_TEMPLATES |= {f"unplaced {name}": template for name, template in UNPLACED_MESSAGES.items()}


@pytest.mark.parametrize("bad", [
    "a separate block of the task whose a single row: joined to its gold above",
    "read as one gold of 1 steps",
    "kept as the the last step",
    "a single row numbered {label} cannot stand",
    "moved to task 82 as its",
    "step number 2 repeated:",
])
def test_the_check_catches_broken_sentences(bad):
    assert sentence_problems(bad)


def test_every_placeholder_has_sample_values():
    assert set().union(*map(_fields, ALL_TEMPLATES.values())) <= set(SAMPLES)


def test_every_anomaly_kind_has_its_message():
    kinds = {value for name, value in vars(AnomalyKind).items() if name.isupper()}
    assert kinds == {kind for kind, _ in ANOMALY_MESSAGES}


@pytest.mark.parametrize("name", sorted(ALL_TEMPLATES))
def test_every_message_renders_as_a_sentence(name):
    for text in _renderings(ALL_TEMPLATES[name]):
        assert sentence_problems(text) == [], text


@pytest.mark.parametrize("count", [1, 2])
def test_the_report_reads_right_for_one_and_for_several(count):
    anomaly = GoldAnomaly(AnomalyKind.REPEATED_NUMBER, "1", "webarena", [3, 4],
                          ANOMALY_MESSAGES[AnomalyKind.REPEATED_NUMBER, ""].format(number=2))
    report = GoldImportReport(
        file="gold.xlsx", format="xlsx", annotator="paper", status="approved", benchmark="webarena",
        gold=[ImportedGold(str(task), 1, "rows 2-2", 1, "created", task) for task in range(count)],
        unplaced=[UnplacedRow(f"row {row}", UNPLACED_MESSAGES["empty_text"]) for row in range(count)],
        anomalies=[anomaly] * count, missing_tasks=["999"],
    )

    lines = report.summary().splitlines()

    assert lines[0].startswith(f"gold.xlsx (xlsx) as paper, status approved: {count_of(count, 'task')}, ")
    for line, following in zip(lines, lines[1:] + [""]):
        heading = line.endswith(":") and following.startswith("  ")  # a heading of the list below it
        assert sentence_problems(line.strip().removesuffix(":") if heading else line.strip()) == [], line
