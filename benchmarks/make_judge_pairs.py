"""Write fixtures/judge_pairs_mutated.json: labelled step pairs made by mutating real steps.

    .venv/bin/python benchmarks/make_judge_pairs.py [--check]

Every seed is a real gold step (a row of the gold excerpt, shared/data/gold-sample) with the
element a WebArena agent acts on for it: element ids, roles and names as the render samples'
accessibility trees and the constructed pairs of fixtures/judge_pairs.json give them. Each seed
is mutated on either side in ways that keep the step (quote styles, quotes holding the other
quote character, spaces inside quotes, letter case, verb and role near-synonyms, dates in other
formats, the harness's forms of an executed action, Enter flags) and in ways that change it
(another element of the same page, another field, another action, one digit of an id, order
number, price or date, another option). Labels follow METRICS.md's judge: equivalent when both
sides do the same action on the same element with the same value.

Seeds, not pairs, are split into `tune` and `test` (alternately among the seeds of each action
type, in the order of the excerpt), so that no gold step of the test part is seen while the
judge's rules are tuned. `--check` regenerates in
memory and fails if the committed file differs.
"""

import argparse
import json
import random
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "fixtures" / "judge_pairs_mutated.json"
SEED = 20261124


@dataclass
class Seed:
    task: int
    gold: str  # a row of the gold excerpt, as written (trailing spaces trimmed)
    action: str  # click | type | select | scroll
    element: tuple[str, str, str] = ("", "", "")  # id, role, name
    value: str = ""
    wrong: list[tuple[str, str, str]] = field(default_factory=list)  # other elements of the page
    wrong_values: list[str] = field(default_factory=list)  # values that are another step
    observation: str = ""  # key of a real accessibility tree in fixtures/judge_pairs.json


SEEDS = [
    Seed(1, "Click on the 'REPORTS' link in the navigation menu.", "click", ("723", "link", "\\ue60a REPORTS"),
         wrong=[("537", "link", "\\ue604 DASHBOARD"), ("1090", "link", "Go to Advanced Reporting \\ue644")],
         observation="gpt4turbo_render_0#1"),
    Seed(1, "Click on the 'Bestsellers' link under the Products section.", "click", ("1562", "link", "Bestsellers"),
         wrong=[("1129", "link", "Most Viewed Products"), ("1143", "link", "Customers")]),
    Seed(1, "Select the 'Period' dropdown and choose 'Year'.", "select", ("1610", "combobox", "Period"), "Year",
         wrong=[("1612", "option", "Month"), ("1614", "option", "Day")], wrong_values=["Month", "Day"]),
    Seed(1, "Type '01/01/2022' into the 'From' textbox.", "type", ("1620", "textbox", "From"), "01/01/2022",
         wrong=[("1622", "textbox", "To")], wrong_values=["01/01/2023", "01/31/2022", "2022-01-02", "01/10/2022"]),
    Seed(2, "Type '03/31/2022' into the 'To' textbox.", "type", ("1622", "textbox", "To"), "03/31/2022",
         wrong=[("1620", "textbox", "From")], wrong_values=["03/30/2022", "12/31/2022", "2022-03-13", "03/31/2021"]),
    Seed(3, "Type '12/31/2022' into the 'To' textbox.", "type", ("1622", "textbox", "To"), "12/31/2022",
         wrong=[("1620", "textbox", "From")], wrong_values=["12/21/2022", "2022-12-30", "12/31/2021", "03/31/2022"]),
    Seed(1, "Click on the 'Show Report' button.", "click", ("1630", "button", "Show Report"),
         wrong=[("1082", "button", "Reload Data"), ("1090", "link", "Go to Advanced Reporting \\ue644")]),
    Seed(82, "Click on the 'Find directions between two points'", "click",
         ("149", "link", "Find directions between two points"), wrong=[("151", "button", "Go")]),
    Seed(82, "Type 'Massachusetts Institute of Technology' into the 'From' textbox.", "type",
         ("158", "textbox", "From"), "Massachusetts Institute of Technology", wrong=[("163", "textbox", "To")],
         wrong_values=["Massachusetts General Hospital", "Harvard University"]),
    Seed(82, "Type 'Harvard University' into the 'To' textbox.", "type", ("163", "textbox", "To"),
         "Harvard University", wrong=[("158", "textbox", "From")], wrong_values=["Harvard Square", "Yale University"]),
    Seed(82, "Select the 'Foot (OSRM)' option", "click", ("170", "option", "Foot (OSRM)"),
         wrong=[("169", "option", "Car (OSRM)"), ("168", "option", "Bicycle (OSRM)")]),
    Seed(82, "Click the 'Go' button", "click", ("171", "button", "Go"),
         wrong=[("175", "button", "Reverse Directions"), ("149", "link", "Find directions between two points")]),
    Seed(82, "Click the 'Reverse Directions' button", "click", ("175", "button", "Reverse Directions"),
         wrong=[("171", "button", "Go")]),
    Seed(82, "Select the 'Car (OSRM)' option", "click", ("169", "option", "Car (OSRM)"),
         wrong=[("170", "option", "Foot (OSRM)"), ("168", "option", "Bicycle (OSRM)")]),
    Seed(82, "Type 'Boston Logan International Airport' into the 'To' textbox.", "type", ("163", "textbox", "To"),
         "Boston Logan International Airport", wrong=[("158", "textbox", "From")],
         wrong_values=["Boston Common", "Logan Square"]),
    Seed(809, "Click on the link 'The A11Y Project / a11yproject.com'", "click",
         ("1544", "link", "The A11Y Project / a11yproject.com"),
         wrong=[("1548", "link", "Byte Blaze / a11y-syntax-highlighting"),
                ("1550", "link", "Byte Blaze / a11y-webring.club")]),
    Seed(809, "Click on the link 'Issues' to navigate to the issues section of the repository.", "click",
         ("1688", "link", "Issues 40"), wrong=[("1690", "link", "Merge requests 10"), ("1686", "link", "Repository")]),
    Seed(809, "Click on the link 'New issue' to navigate to the issue creation page.", "click",
         ("2220", "link", "New issue"), wrong=[("2201", "link", "Issues"), ("2224", "link", "Edit issues")]),
    Seed(809, "Type '404 for many URLs' into the 'Title' textbox.", "type", ("3012", "textbox", "Title (required)"),
         "404 for many URLs", wrong=[("3030", "textbox", "Description")],
         wrong_values=["405 for many URLs", "404 for many URL", "404 error"]),
    Seed(809, "Click on the link 'Assign to me' to assign the issue to yourself (Byte Blaze)", "click",
         ("3105", "button", "Assign to me"), wrong=[("3098", "button", "Edit"), ("3110", "button", "Add labels")]),
    Seed(809, "Type '03/01/2030' into the 'Select due date' textbox.", "type",
         ("3120", "textbox", "Select due date"), "03/01/2030", wrong=[("3012", "textbox", "Title (required)")],
         wrong_values=["03/01/2031", "03/02/2030", "2030-03-21", "03/11/2030"]),
    Seed(809, "Click on the 'Create issue' button to finalize the creation of the issue.", "click",
         ("3200", "button", "Create issue"), wrong=[("3201", "button", "Cancel")]),
    Seed(529, "Click on the 'My Account' link", "click", ("1320", "link", "My Account"),
         wrong=[("1322", "link", "My Wish List"), ("1324", "link", "Sign Out")]),
    Seed(529, "Click on the 'View All' link", "click", ("1450", "link", "View All"),
         wrong=[("1452", "link", "My Orders")]),
    Seed(529, "Click on the 'Page 2' link", "click", ("1502", "link", "Page 2"),
         wrong=[("1503", "link", "Page 3"), ("1501", "link", "Page 1"), ("1512", "link", "Page 12")]),
    Seed(529, "Click on the 'View Order' link for order ID 000000148", "click", ("1470", "link", "View Order"),
         wrong=[("1471", "link", "Reorder")]),
    Seed(529, "Click on the 'Contact Us' link", "click", ("1610", "link", "Contact Us"),
         wrong=[("1612", "link", "About us")]),
    Seed(529, "Type the following message in the 'What’s on your mind?' textbox: 'Regarding Order ID 000000148: "
              "The Bluetooth speaker broke after three days of use. I would like to get a refund of $169.95.'",
         "type", ("1620", "textbox", "What’s on your mind?"),
         "Regarding Order ID 000000148: The Bluetooth speaker broke after three days of use. I would like to get "
         "a refund of $169.95.", wrong=[("1618", "textbox", "Name")],
         wrong_values=[
             "Regarding Order ID 000000146: The Bluetooth speaker broke after three days of use. I would like to "
             "get a refund of $169.95.",
             "Regarding Order ID 000000184: The Bluetooth speaker broke after three days of use. I would like to "
             "get a refund of $169.95.",
             "Regarding Order ID 000000148: The Bluetooth speaker broke after three days of use. I would like to "
             "get a refund of $169.59.",
             "Regarding Order ID 000000148: The Bluetooth speaker broke after three days of use. I would like to "
             "get a refund of $1,699.50.",
             "Regarding Order ID 000000148: The Bluetooth speaker broke after four days of use. I would like to "
             "get a refund of $169.95.",
         ]),
    Seed(96, "Click on the 'My Account' link", "click", ("1320", "link", "My Account"),
         wrong=[("1326", "link", "My Orders")]),
    Seed(529, "Scroll down", "scroll", value="down"),
]

MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December"]
GOLD_VERBS = {"click": ["Click on", "Click", "Tap on", "Press", "Hit", "Click on"],
              "type": ["Type", "Enter", "Input", "Write", "Type in"]}
ROLE_SYNONYMS = {"link": ["hyperlink", "button"], "button": ["link", "btn"], "option": ["menu option", "choice"],
                 "textbox": ["field", "input box", "text field", "box"], "dropdown": ["drop-down", "select box"]}


def date_forms(value: str) -> list[str]:
    """The same calendar date written other ways (the gold's dates are month/day/year)."""
    match = re.fullmatch(r"(\d\d)/(\d\d)/(\d{4})", value)
    if not match:
        return []
    month, day, year = (int(part) for part in match.groups())
    name = MONTHS[month - 1]
    return [f"{year}-{month:02}-{day:02}", f"{month}/{day}/{year}", f"{name} {day}, {year}", f"{name[:3]} {day} {year}",
            f"{day} {name} {year}", f"{month:02}-{day:02}-{year}"]


def executed(seed: Seed, element=None, value=None, forms: int = 0, action: str | None = None) -> str:
    """The executed action as the harness writes it (`forms` picks one of its spellings)."""
    element_id, role, name = element or seed.element
    action = action or seed.action
    label = [f"{role} '{name}'", f"[{element_id}] {role} '{name}'", f"{role} '{name}' url: http://localhost:7780/"][
        forms % 3]
    if action == "scroll":
        return f"scroll [{value or seed.value}]"
    if action == "type":
        text = seed.value if value is None else value
        typed = [f"[{text}] [0]", f"[{text} ]", f"[{text}] [1]"][forms % 3]
        return f"type [{element_id}] {typed} where [{element_id}] is {label}"
    if action == "select":
        return f"select [{element_id}] [{seed.value if value is None else value}] where [{element_id}] is {label}"
    return f"{action} [{element_id}] where [{element_id}] is {label}"


def _quoted(text: str) -> list[re.Match]:
    return list(re.finditer(r"'((?:[^']|'(?=\w))*)'(?!\w)", text))


def requote(text: str, opening: str, closing: str, which: int | None = None) -> str:
    """The gold text with its single-quoted spans (or span `which`) in other quotes."""
    spans = _quoted(text)
    for position, match in reversed(list(enumerate(spans))):
        if which is None or position == which:
            text = text[: match.start()] + opening + match.group(1) + closing + text[match.end():]
    return text


def replace_value(gold: str, old: str, new: str) -> str:
    assert old in gold, (gold, old)
    return gold.replace(old, new, 1)


def mutations(seed: Seed, rng: random.Random):
    """(gold text, agent text, observation key, equivalent, mutation) for one seed."""
    gold = seed.gold
    right = executed(seed)
    yield gold, right, "", True, "as written"
    if seed.action == "scroll":
        yield gold, "scroll [up]", "", False, "other direction"
        yield "Scroll down the page", right, "", True, "verb phrase"
        yield "scroll DOWN.", right, "", True, "case"
        yield gold, "press [PageDown]", "", False, "other action"
        return
    for forms in (1, 2):
        yield gold, executed(seed, forms=forms), "", True, "harness spelling"
    if seed.observation:
        yield gold, f"{seed.action} [{seed.element[0]}]", seed.observation, True, "element from the page's tree"
    # Quotes: other quote characters, the other quote character inside, spaces inside.
    yield requote(gold, '"', '"'), right, "", True, "double quotes"
    yield requote(gold, "‘", "’"), right, "", True, "curly single quotes"
    yield requote(gold, "“", "”"), right, "", True, "curly double quotes"
    spans = _quoted(gold)
    name_span = 0 if seed.action != "type" else len(spans) - 1
    yield requote(gold, "' ", "'", name_span), right, "", True, "space inside the quotes"
    yield requote(gold, "'", " '", name_span), right, "", True, "trailing space inside the quotes"
    # Letter case and near-synonyms of the verb and the element's role.
    target = seed.element[2] if seed.action != "type" else seed.value
    if seed.action in ("click", "select") and seed.action == "click":
        clean = target.replace("\\ue60a ", "").replace(" \\ue644", "").replace("\\ue604 ", "")
        yield replace_value(gold, f"'{clean}'", f"'{clean.upper()}'") if f"'{clean}'" in gold else gold, right, "", \
            True, "upper case"
    for verb in rng.sample(GOLD_VERBS.get(seed.action, []), k=min(2, len(GOLD_VERBS.get(seed.action, [])))):
        first = gold.split(" ", 2)
        head = "Click on" if gold.startswith("Click on") else first[0]
        if head in ("Click", "Click on", "Type"):
            yield verb + gold[len(head):], right, "", True, f"verb {verb!r}"
    for word, synonyms in ROLE_SYNONYMS.items():
        if re.search(rf"\b{word}\b", gold):
            synonym = rng.choice(synonyms)
            yield re.sub(rf"\b{word}\b", synonym, gold, count=1), right, "", True, f"role word {synonym!r}"
            break
    # Another element of the same page, another action on the right element.
    for element in seed.wrong:
        yield gold, executed(seed, element=element), "", False, "another element"
    if seed.action == "click":
        yield gold, executed(seed, action="hover"), "", False, "hover, not click"
        yield gold, f"type [{seed.element[0]}] [{seed.element[2]}] [1]", "", False, "typed the name"
    if seed.action in ("type", "select"):
        for value in seed.wrong_values:
            yield gold, executed(seed, value=value), "", False, "another value"
            if seed.action == "type":
                yield replace_value(gold, seed.value, value), right, "", False, "another value in the gold"
        for forms, other in enumerate(date_forms(seed.value)):
            yield gold, executed(seed, value=other, forms=forms), "", True, "same date, other format"
            yield replace_value(gold, seed.value, other), right, "", True, "same date, other format in the gold"
    if seed.action == "type":
        yield gold, executed(seed, value=f" {seed.value}"), "", True, "space before the typed text"
        yield requote(gold, '"', '"'), executed(seed, value=f"{seed.value} "), "", True, "space after the typed text"
        # A value holding an apostrophe, quoted with single quotes (as annotators write it).
        apostrophe = f"Let's {seed.value}" if not seed.value[0].isdigit() else \
            f"{seed.value} (don't change)"
        yield replace_value(gold, seed.value, apostrophe), executed(seed, value=apostrophe), "", True, \
            "apostrophe inside single quotes"
        yield replace_value(gold, seed.value, apostrophe), executed(seed, value=seed.wrong_values[0]), "", False, \
            "apostrophe inside single quotes, another value"
        yield replace_value(requote(gold, '"', '"'), seed.value, apostrophe), executed(seed, value=apostrophe), "", \
            True, "apostrophe inside double quotes"
        for element in seed.wrong:
            yield replace_value(gold, seed.value, apostrophe), executed(seed, element=element, value=apostrophe), \
                "", False, "apostrophe inside single quotes, another field"
        # The other quote character inside the value, and spaces inside double quotes.
        quoted = f'the "{seed.value}" text'
        yield replace_value(gold, seed.value, quoted), executed(seed, value=quoted), "", True, \
            "double quotes inside single quotes"
        yield replace_value(requote(gold, '"', '"'), f'"{seed.value}"', f'" {seed.value}"'), right, "", True, \
            "space inside double quotes"
    if seed.action == "select":
        option = ("1613", "option", seed.value)
        yield gold, executed(seed, element=option, action="click"), "", True, "clicked the option"
        yield gold, executed(seed, element=seed.element, action="click"), "", False, "opened the dropdown only"
    # Free-text agent steps (a plan written in words): the gold step reworded, or another seed's,
    # or reworded with one digit of an id, date, price or page number changed.
    reworded = requote(gold, '"', '"').lower()
    yield gold, reworded, "", True, "free text, reworded"
    digits = [m.start() for m in re.finditer(r"\d", reworded)]
    if digits:
        at = rng.choice(digits)
        changed = reworded[:at] + str((int(reworded[at]) + rng.randint(1, 8)) % 10) + reworded[at + 1:]
        yield gold, changed, "", False, "free text, one digit changed"
    if any(char.isdigit() for char in seed.element[2]):
        at = max(i for i, char in enumerate(seed.element[2]) if char.isdigit())
        name = seed.element[2][:at] + str((int(seed.element[2][at]) + 1) % 10) + seed.element[2][at + 1:]
        same = not any(char.isdigit() for char in gold)  # the gold names no number: a count beside a name
        yield gold, executed(seed, element=(seed.element[0], seed.element[1], name)), "", same, \
            "one digit in the element's name"


def build() -> dict:
    rng = random.Random(SEED)
    pairs, seen, position = [], set(), {}
    for number, seed in enumerate(SEEDS):
        position[seed.action] = position.get(seed.action, -1) + 1
        split = "tune" if position[seed.action] % 2 == 0 else "test"
        others = [s for s in SEEDS if s.task == seed.task and s.gold != seed.gold and s.action != "scroll"]
        rows = list(mutations(seed, rng))
        if others:
            other = rng.choice(others)
            rows.append((seed.gold, other.gold, "", False, "free text, another gold step"))
        for gold, agent, observation, equivalent, mutation in rows:
            key = (gold, agent, observation)
            if key in seen:
                continue
            seen.add(key)
            pair = {"id": f"m{len(pairs) + 1:03}", "split": split, "group": mutation, "task": seed.task,
                    "seed": number + 1, "gold": gold, "agent": agent, "equivalent": equivalent}
            if observation:
                pair["observation"] = observation
            pairs.append(pair)
    source = json.loads((ROOT / "fixtures" / "judge_pairs.json").read_text(encoding="utf-8"))
    used = {p["observation"] for p in pairs if "observation" in p}
    return {
        "description": __doc__.split("\n\n", 2)[2].strip().replace("\n", " "),
        "sources": source["sources"],
        "observations": {key: source["observations"][key] for key in sorted(used)},
        "pairs": pairs,
    }


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--check", action="store_true", help="fail if the committed file is not what this writes")
    args = parser.parse_args()
    text = json.dumps(build(), ensure_ascii=False, indent=1) + "\n"
    if args.check:
        if OUT.read_text(encoding="utf-8") != text:
            sys.exit(f"{OUT} differs from what {Path(__file__).name} writes; run it again")
        return
    OUT.write_text(text, encoding="utf-8")
    data = json.loads(text)
    for split in ("tune", "test"):
        part = [p for p in data["pairs"] if p["split"] == split]
        print(f"{split}: {len(part)} pairs, {sum(p['equivalent'] for p in part)} equivalent")


if __name__ == "__main__":
    main()
