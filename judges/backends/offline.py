"""`offline`: the deterministic default judge, with no network (Django-free).

Steps are compared by their parts (action type, element role and name, value) with rapidfuzz;
where one side has no structure (a free-text step the grammar cannot read), the texts are
compared with MiniLM sentence embeddings, or with rapidfuzz when `options["embeddings"]` is
false. Answers are checked for requirements by substring, fuzzy and embedding similarity, and
for groundedness by finding the answer's facts (numbers, quoted strings, names, list items) in
the observations. Relevance is a form check: an answer that declines, or lacks the number or
the count of items the intent asks for, is not relevant.
"""

import re
from functools import cached_property, lru_cache

from rapidfuzz import fuzz

from .. import questions as q
from ..parsing import StepParts, parsed, plain_text, same_step, step_parts
from ..steps import JudgeStep
from ..answers import Answer
from .base import Backend

RULES_VERSION = "offline-2"

# Action types that can stand for each other: clicking an option selects it. Hovering is related
# to clicking (both can open a menu) but is not the same step, so it stays below the threshold.
ACTION_AFFINITY = {frozenset({"click", "select"}): 0.9, frozenset({"click", "hover"}): 0.6}
NO_TARGET_ACTIONS = {"go_back", "go_forward", "new_tab", "close_tab"}
ELEMENT_ACTIONS = {"click", "hover", "type", "select"}
ROLE_GROUPS = (
    {"link", "button", "tab", "menuitem", "img", "image", "option", "checkbox", "radio", "statictext", "span", "a",
     "heading", "cell", "row", "listitem", "gridcell", "menuitemcheckbox"},
    {"textbox", "searchbox", "combobox", "textarea", "input", "spinbutton"},
    {"combobox", "listbox", "option", "select", "menu", "menuitem"},
)
ROLE_MISMATCH = 0.85
# Score when one side's element cannot be named: a matching value can still carry a type step.
UNKNOWN_ELEMENT = 0.75
UNKNOWN_TARGET = 0.5
# Scores from here up are checked for numbers that differ (lower ones are "different" at any
# usual threshold already, and the check is the costliest part of a free-text comparison).
NUMBERS_CHECKED_FROM = 0.5
# Ceiling for typed texts that are not the same text (case, spacing, quotes and date formats aside).
TYPED_TEXT_DIFFERS = 0.5
NOT_AN_ANSWER = {"", "n/a", "na", "none", "null", "unknown"}
DECLINES = re.compile(r"\b(cannot|can't|unable|not (?:found|available|possible|able)|no (?:information|data|results?))\b")
ASKS_NUMBER = re.compile(
    r"\b(how (?:many|much|long|far)|number of|count|total|price|cost|amount|percentage|rating|when|what date)\b", re.I
)
STOPWORDS = frozenset(
    "a an the is are was were be it its this that these those of in on at to for by with and or from as "
    "has have had there their".split()
)
TOP_N = re.compile(r"\btop[- ](\d+)\b", re.I)
NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
CAPITALISED = re.compile(r"\b[A-Z][\w'’&-]*(?:\s+(?:[A-Z0-9][\w'’&-]*|of|the|and|for|de|von))*")


def _rescale(value: float, low: float, high: float) -> float:
    return min(1.0, max(0.0, (value - low) / (high - low)))


def _numbers(text: str) -> list[float]:
    found = []
    for token in NUMBER.findall(text):
        try:
            found.append(float(token.replace(",", "")))
        except ValueError:
            found.extend(float(part) for part in re.split(r"[.,]", token) if part)
    return found


def contains_phrase(phrase: str, text: str) -> bool:
    """`phrase` occurs in `text` with no word character (letter, digit, underscore) glued to
    either end; a pattern compiled per phrase would crowd the regular expression cache."""
    start = text.find(phrase)
    while start != -1:
        end = start + len(phrase)
        before = text[start - 1] if start else ""
        after = text[end] if end < len(text) else ""
        if not _word_character(before) and not _word_character(after):
            return True
        start = text.find(phrase, start + 1)
    return False


def _word_character(char: str) -> bool:
    return char.isalnum() or char == "_"


MONTHS = {name: number for number, names in enumerate(
    ("january jan", "february feb", "march mar", "april apr", "may", "june jun", "july jul", "august aug",
     "september sep sept", "october oct", "november nov", "december dec"), start=1) for name in names.split()}
_MONTH_NAMES = "|".join(sorted(MONTHS, key=len, reverse=True))
# One pass over a text finds its dates: ISO, numeric with / or -, and with the month's name.
_DATE = re.compile(
    r"(?<![\d/.-])(?P<iso_year>\d{4})-(?P<iso_month>\d{1,2})-(?P<iso_day>\d{1,2})(?![\d/-])"
    r"|(?<![\d/.-])(?P<first>\d{1,2})(?P<sep>[/-])(?P<second>\d{1,2})(?P=sep)(?P<year>\d{4})(?![\d/-])"
    rf"|\b(?P<name_month>{_MONTH_NAMES})\.?\s+(?P<name_day>\d{{1,2}})(?:st|nd|rd|th)?,?\s+(?P<name_year>\d{{4}})\b"
    rf"|\b(?P<day_first>\d{{1,2}})(?:st|nd|rd|th)?\s+(?P<month_after>{_MONTH_NAMES})\.?,?\s+(?P<year_after>\d{{4}})\b",
    re.I,
)
# A year from 1900 to 2099 outside brackets (not an element id such as `[2012]`): every date
# `_DATE` reads has one, so texts without it skip the longer search.
_DATE_HINT = re.compile(r"(?<![\d\[])(?:19|20)\d\d(?![\d\]])")
_IDENTIFIER = re.compile(r"d\d{4}-\d\d-\d\d|\d+(?:[.,]\d+)*")
_THOUSANDS = re.compile(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?")
_DECIMAL = re.compile(r"\d+\.\d+")


def _date_of(match: re.Match) -> str:
    """A date match as the word `dyyyy-mm-dd` (its text if it is no calendar date); numeric
    dates are read month first (as the gold writes them) unless the first cannot be a month."""
    g = match.groupdict()
    if g["iso_year"]:
        year, month, day = int(g["iso_year"]), int(g["iso_month"]), int(g["iso_day"])
    elif g["year"]:
        year, month, day = int(g["year"]), int(g["first"]), int(g["second"])
        if month > 12:
            month, day = day, month
    elif g["name_year"]:
        year, month, day = int(g["name_year"]), MONTHS[g["name_month"].lower()], int(g["name_day"])
    else:
        year, month, day = int(g["year_after"]), MONTHS[g["month_after"].lower()], int(g["day_first"])
    if 1 <= month <= 12 and 1 <= day <= 31:
        return f" d{year:04}-{month:02}-{day:02} "
    return match.group(0)


def _with_dates_marked(text: str) -> str:
    """The text with every date it writes replaced by one `dyyyy-mm-dd` word."""
    return _DATE.sub(_date_of, text) if _DATE_HINT.search(text) else text


def _identifiers(text: str) -> tuple[str, ...]:
    """The numbers a step names, in order, as they must match: dates as `yyyy-mm-dd` whatever
    their format; zero-padded numbers (order ids) digit by digit; other numbers by value
    (`1,699.50` is `1699.5`). Two steps naming different identifiers are different steps."""
    found = []
    for token in _IDENTIFIER.findall(_with_dates_marked(text)):
        if not token.isdigit() and not token.startswith("d"):  # digits alone stay as written
            token = token.replace(",", "") if _THOUSANDS.fullmatch(token) else token
            if _DECIMAL.fullmatch(token):
                token = token.rstrip("0").rstrip(".")
        found.append(token)
    return tuple(found)


# `identifiers`, `compare_parts` and `_parts` wrap plain functions in their caches rather than decorate
# them: mutation testing changes only undecorated functions.
identifiers = lru_cache(maxsize=50_000)(_identifiers)


def different_identifiers(first: str, second: str) -> bool:
    """Both texts name numbers, and not the same ones (numbers written alike are the same)."""
    first_raw, second_raw = _IDENTIFIER.findall(first), _IDENTIFIER.findall(second)
    if not first_raw or not second_raw or first_raw == second_raw:
        return False
    return identifiers(first) != identifiers(second)


def name_similarity(first: str, second: str) -> float | None:
    """Similarity of two element names or values; None when either is blank. Names with
    different numbers ('Page 2', 'Page 12') are different elements."""
    first, second = plain_text(first), plain_text(second)
    if not first or not second:
        return None
    if first == second:
        return 1.0
    short, long = sorted((first, second), key=len)
    if contains_phrase(short, long):
        score = 0.55 + 0.45 * len(short) / len(long)
    else:
        score = _rescale(max(fuzz.ratio(first, second), fuzz.token_sort_ratio(first, second)) / 100, 0.5, 1.0)
    return 0.0 if score >= NUMBERS_CHECKED_FROM and different_identifiers(first, second) else score


def value_similarity(first: str, second: str) -> float | None:
    """Like `name_similarity`, but the identifiers (dates, amounts, ids) must be the same ones.

    Values whose identifiers agree and whose other words are the same are equal ("1/1/2022",
    "2022-01-01" and "January 1, 2022" are "01/01/2022").
    """
    if not plain_text(first) or not plain_text(second):
        return None
    if NUMBER.search(first) or NUMBER.search(second):
        if identifiers(first) != identifiers(second):
            return 0.0
        if plain_text(_without_numbers(first)) == plain_text(_without_numbers(second)):
            return 1.0
    return name_similarity(first, second)


def _without_numbers(text: str) -> str:
    return re.sub(r"[/.,:-]", " ", NUMBER.sub(" ", re.sub(r"\bd\d{4}-\d\d-\d\d\b", " ", _with_dates_marked(text))))


def url_similarity(first: str, second: str) -> float:
    def bare(url: str) -> str:
        return re.sub(r"\A(?:https?://)?(?:www\.)?", "", url.strip().lower()).rstrip("/")

    first, second = bare(first), bare(second)
    return 1.0 if first == second else _rescale(fuzz.ratio(first, second) / 100, 0.6, 1.0)


def _roles_compatible(first: str, second: str) -> bool:
    first, second = first.lower(), second.lower()
    return not first or not second or first == second or any(first in g and second in g for g in ROLE_GROUPS)


def _compare_parts(gold: StepParts, agent: StepParts) -> tuple[float, str]:
    """Score two structured steps; the rationale names what decided it (kept per pair of parts:
    the same elements recur across the steps of a run)."""
    pair = frozenset({gold.action_type, agent.action_type})
    affinity = 1.0 if len(pair) == 1 else ACTION_AFFINITY.get(pair)
    if affinity is None:
        return 0.0, f"Different actions: {gold.action_type} vs {agent.action_type}."
    kind = gold.action_type
    if kind in NO_TARGET_ACTIONS:
        return 1.0, f"Both {kind}."
    if kind in ("scroll", "press"):
        same = plain_text(gold.value) == plain_text(agent.value)
        return (1.0, f"Same {kind} {gold.value}.") if same else (0.0, f"{kind} {gold.value} vs {agent.value}.")
    if kind == "goto":
        score = url_similarity(gold.value, agent.value)
        return score, f"URL similarity {score:.2f}."
    if kind == "stop":
        score = value_similarity(gold.value, agent.value)
        return (score or 0.0), f"Answer similarity {score or 0.0:.2f}."
    if pair == {"click", "select"}:
        # Clicking the option V is selecting V; clicking the dropdown alone chooses nothing.
        select, click = (gold, agent) if gold.action_type == "select" else (agent, gold)
        element = name_similarity(select.value or select.element_name, click.element_name)
    else:
        element = name_similarity(gold.element_name, agent.element_name)
    role = 1.0 if _roles_compatible(gold.element_role, agent.element_role) else ROLE_MISMATCH
    has_value = gold.action_type == agent.action_type and kind in ("type", "select")
    if has_value:  # the same action: affinity 1
        value = value_similarity(gold.value, agent.value)
        if value is None:
            return UNKNOWN_TARGET, "One side gives no value."
        if kind == "type" and value < 1:
            # Typed text is the step's argument: another word ("URL" for "URLs") is another text.
            value = min(value, TYPED_TEXT_DIFFERS)
        score = min(UNKNOWN_ELEMENT if element is None else element, value) * role
        return score, f"Element {'unknown' if element is None else f'{element:.2f}'}, value {value:.2f}."
    if element is None:
        return UNKNOWN_TARGET * affinity, "One side's element could not be named."
    return element * role * affinity, f"Element similarity {element:.2f}" + (
        ", different roles." if role < 1 else "."
    )


compare_parts = lru_cache(maxsize=100_000)(_compare_parts)


def _parts_of_fields(text: str, action_type: str, role: str, name: str, value: str) -> StepParts:
    return step_parts(JudgeStep(text=text, action_type=action_type, element_role=role, element_name=name, value=value))


_parts = lru_cache(maxsize=20_000)(_parts_of_fields)


def parts_of(step: dict) -> StepParts:
    return _parts(step["text"], step["action_type"], step["element_role"], step["element_name"], step["value"])


def _comparable_text(step: dict) -> str:
    parts = parts_of(step)
    return parts.describe() if parts.structured else step["text"]


def _free_text_comparisons(first: list[dict], second: list[dict]) -> list[str]:
    """The texts of every pair of steps (one from each side) that has a free-text step."""
    texts = []
    for free, other in ((first, second), (second, first)):
        unstructured = [step for step in free if not parts_of(step).structured]
        if unstructured:
            texts += [_comparable_text(step) for step in unstructured + other]
    return texts


def embedded_texts(question: q.Question) -> list[str]:
    """The texts answering `question` compares by sentence embeddings: steps where one side has
    no structure, and answers that neither a verbatim match nor a missing number settles."""
    inputs = question.inputs
    if question.kind == q.TRAJECTORY_MATCH:
        return _free_text_comparisons(inputs["gold"], inputs["agent"])
    if question.kind == q.STEP_MATCH:
        return _free_text_comparisons([inputs["gold"]], [inputs["agent"]])
    if question.kind == q.REPETITION:
        if same_step(inputs["previous"]["text"], inputs["step"]["text"]):
            return []
        return _free_text_comparisons([inputs["previous"]], [inputs["step"]])
    if question.kind in (q.REQUIREMENTS, q.FUZZY_ANSWER):
        expected = inputs["requirement"] if question.kind == q.REQUIREMENTS else inputs["reference"]
        settled, _ = _contained(expected, inputs["answer"])
        return [expected, inputs["answer"]] if settled is None else []
    return []


class OfflineBackend(Backend):
    name = "offline"

    @property
    def model(self) -> str:
        return self.spec.model or ("rules+minilm" if self.use_embeddings else "rules")

    @property
    def use_embeddings(self) -> bool:
        return bool(self.spec.options.get("embeddings", True))

    def version(self, kind: str) -> str:
        return RULES_VERSION

    def answer(self, questions: list[q.Question]) -> list[Answer]:
        if self.use_embeddings:
            self._encode_in_batches(questions)
        return [self._answer(question.kind, question.inputs) for question in questions]

    # --- similarity of texts -----------------------------------------------------------------

    def text_similarity(self, first: str, second: str) -> float:
        if plain_text(first) == plain_text(second):
            return 1.0
        if self.use_embeddings:
            from ..embeddings import sentence_encoder

            return _rescale(sentence_encoder().similarity(first, second), 0.3, 0.8)
        return _rescale(fuzz.token_set_ratio(plain_text(first), plain_text(second)) / 100, 0.4, 0.9)

    def _encode_in_batches(self, questions: list[q.Question]) -> None:
        """Encode every text the questions will compare in one batched pass."""
        texts = [text for question in questions for text in embedded_texts(question)]
        if texts:
            from ..embeddings import sentence_encoder

            sentence_encoder().encode(texts)

    # --- the questions -----------------------------------------------------------------------

    def _answer(self, kind: str, inputs: dict) -> Answer:
        if kind == q.STEP_MATCH:
            return Answer(*self.compare_steps(inputs["gold"], inputs["agent"]))
        if kind == q.REPETITION:
            if same_step(inputs["previous"]["text"], inputs["step"]["text"]):
                return Answer(1.0, "Same action on the same target.")
            return Answer(*self.compare_steps(inputs["previous"], inputs["step"]))
        if kind == q.TRAJECTORY_MATCH:
            return self._trajectory(inputs["gold"], inputs["agent"])
        if kind == q.REQUIREMENTS:
            return Answer(*self._requirement(inputs["answer"], inputs["requirement"]))
        if kind == q.FUZZY_ANSWER:
            return Answer(*self._fuzzy(inputs["answer"], inputs["reference"]))
        if kind == q.GROUNDEDNESS:
            observed = "\n".join(o["text"] for o in inputs["observations"])
            if inputs["aspect"] == "grounded":
                return Answer(*grounded(inputs["answer"], observed))
            return Answer(*relevant(inputs["intent"], inputs["answer"]))
        raise ValueError(f"unknown question kind {kind!r}")

    def compare_steps(self, gold: dict, agent: dict) -> tuple[float, str]:
        score, why = self._compare_steps(gold, agent)
        sentences = not parsed(gold["text"]).valid and not parsed(agent["text"]).valid
        if score >= NUMBERS_CHECKED_FROM and sentences and different_identifiers(gold["text"], agent["text"]):
            # Two sentences naming other numbers (an order id, a date, a price) are other steps,
            # even where their quoted names agree.
            numbers = [", ".join(identifiers(step["text"])) for step in (gold, agent)]
            return 0.0, f"Different numbers: {numbers[0]} vs {numbers[1]}."
        return score, why

    def _compare_steps(self, gold: dict, agent: dict) -> tuple[float, str]:
        gold_parts, agent_parts = parts_of(gold), parts_of(agent)
        if gold_parts.structured and agent_parts.structured:
            return compare_parts(gold_parts, agent_parts)
        score = self.text_similarity(_comparable_text(gold), _comparable_text(agent))
        return score, f"Text similarity {score:.2f} (no structure on one side)."

    def _trajectory(self, gold: list[dict], agent: list[dict]) -> Answer:
        matrix, notes = [], []
        for j, gold_step in enumerate(gold):
            row = []
            for i, agent_step in enumerate(agent):
                score, why = self.compare_steps(gold_step, agent_step)
                row.append(round(score, 4))
                if score >= 0.5:
                    notes.append(f"gold {j + 1} ~ agent {i + 1}: {why}")
            matrix.append(row)
        best = [max(row, default=0.0) for row in matrix]
        return Answer(
            score=sum(best) / len(best) if best else 0.0,
            rationale="\n".join(notes) or "No agent step resembles a gold step.",
            output={"matrix": matrix},
        )

    def _requirement(self, answer: str, requirement: str) -> tuple[float, str]:
        found, why = _contained(requirement, answer)
        if found is not None:
            return found, why
        score = _rescale(fuzz.partial_ratio(plain_text(requirement), plain_text(answer)) / 100, 0.6, 0.95)
        if self.use_embeddings:
            score = max(score, self.text_similarity(requirement, answer))
        return score, f"Similarity of the requirement to the answer {score:.2f}."

    def _fuzzy(self, answer: str, reference: str) -> tuple[float, str]:
        found, why = _contained(reference, answer)
        if found is not None:
            return found, why
        score = _rescale(fuzz.token_set_ratio(plain_text(reference), plain_text(answer)) / 100, 0.5, 0.95)
        if self.use_embeddings:
            score = max(score, self.text_similarity(reference, answer))
        return score, f"Similarity to the reference {score:.2f}."


def _contained(expected: str, answer: str) -> tuple[float | None, str]:
    """A sure yes (found verbatim) or a sure no (no answer, or a number missing); else undecided."""
    expected_n, answer_n = plain_text(expected), plain_text(answer)
    if not answer_n:
        return 0.0, "No answer."
    if expected_n and contains_phrase(expected_n, answer_n):
        return 1.0, f"'{expected}' is in the answer."
    missing = [n for n in _numbers(expected) if n not in _numbers(answer)]
    if missing:
        return 0.0, f"The answer lacks {', '.join(f'{n:g}' for n in missing)}."
    return None, ""


def answer_facts(answer: str) -> list[str]:
    """What an answer claims: its list items when short, else numbers, quoted strings and names."""
    answer = answer.strip()
    quoted = re.findall(r"'([^']+)'|\"([^\"]+)\"", answer)
    facts = [a or b for a, b in quoted]
    if len(answer.split()) <= 12:
        facts += [item.strip() for item in re.split(r"[,;\n]|\band\b", answer) if item.strip()]
    else:
        facts += NUMBER.findall(answer) + [m for m in CAPITALISED.findall(answer) if len(m) > 2]
    return list(dict.fromkeys(f for f in facts if plain_text(f)))


class _Observations:
    """The observations an answer is checked against, each view of them made once and only when
    a fact needs it (they run to 24,000 characters: normalising them is most of the check)."""

    def __init__(self, text: str):
        self.text = text

    @cached_property
    def plain(self) -> str:
        return plain_text(self.text)

    @cached_property
    def words(self) -> set[str]:
        return set(self.plain.split())

    @cached_property
    def numbers(self) -> set[float]:
        return set(_numbers(self.text))


def _observed(fact: str, observations: _Observations) -> bool:
    """A fact with numbers is observed when its numbers are (the words around them are phrasing);
    one without is observed verbatim, nearly verbatim, or as most of its words."""
    numbers = _numbers(fact)
    if numbers:
        return all(n in observations.numbers for n in numbers)
    fact_n, observed_n = plain_text(fact), observations.plain
    if fact_n in observed_n or fuzz.partial_ratio(fact_n, observed_n) >= 90:
        return True
    words = [w for w in fact_n.split() if w not in STOPWORDS]
    return bool(words) and sum(w in observations.words for w in words) / len(words) >= 0.8


def grounded(answer: str, observed: str) -> tuple[float, str]:
    facts = answer_facts(answer)
    if not facts:
        return 0.0, "The answer states nothing that could be found in the observations."
    observations = _Observations(observed)
    missing = [f for f in facts if not _observed(f, observations)]
    score = 1 - len(missing) / len(facts)
    if not missing:
        return score, f"All {len(facts)} facts of the answer were observed."
    return score, f"Not observed: {'; '.join(missing)}."


def relevant(intent: str, answer: str) -> tuple[float, str]:
    answer_n = plain_text(answer)
    if answer_n in NOT_AN_ANSWER or DECLINES.search(answer_n):
        return 0.0, "The answer declines to answer."
    if ASKS_NUMBER.search(intent) and not NUMBER.search(answer):
        return 0.0, "The task asks for a number and the answer has none."
    top = TOP_N.search(intent)
    if top and int(top.group(1)) > 1:
        wanted = int(top.group(1))
        items = [i for i in re.split(r"[,;\n]|\band\b", answer) if plain_text(i)]
        if len(items) < wanted:
            return len(items) / wanted, f"The task asks for {wanted} items and the answer gives {len(items)}."
    return 1.0, "The answer is of the kind the task asks for."
