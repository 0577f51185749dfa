"""Precision and recall of the gold fit checks on a labelled set of misplaced and well-placed golds.

The set is built from the published 50-row excerpt and the 812 WebArena intents, with a fixed seed:
- home golds: the excerpt's golds, and for tasks of a template whose values the gold types (places,
  issue titles, products), the same gold with the values of each sibling task put in, under that
  sibling;
- negatives (golds left where they belong): each home gold under its task, alone; a second version
  of it (reworded, one click fewer) beside it; one of its rows that quotes something, alone;
- positives (golds moved on purpose): the home gold under another task of the same site and of
  another site; one of its quoting rows under an unrelated task; a sibling's version under another
  sibling of the template (swapped places); a second block beside the task's own gold, taken from
  another task of the site or naming places no intent names.
Cases are split into a tuning and a test part by the task they are placed under (half of the 812
tasks each); the thresholds in annotation/quality/fit.py were chosen on the tuning part only. Each case
is checked on its own, against every intent of the benchmark.

    .venv/bin/python benchmarks/gold_fit_labels.py [--seed 0] [--part test|tuning] [--show-misses]
"""

import argparse
import json
import os
import random
import re
import sys
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
SHARED_DATA = Path(os.environ.get("SHARED_DATA_DIR", ROOT.parent / "shared" / "data"))
EXCERPT = SHARED_DATA / "gold-sample" / "golden_human_trajectories_excerpt.xlsx"
TASKS = SHARED_DATA / "webarena" / "test.raw.json"

from annotation import quality  # noqa: E402
from annotation.quality import records, step_text  # noqa: E402
from annotation.formats import read_gold_file  # noqa: E402

FIT_CHECKS = (records.OTHER_TASK, records.SIBLING_VALUES, records.WORSE_VERSION, records.POOR_FIT)
# Places for a second block between two points that no WebArena intent names.
UNNAMED_PLACES = ("Quincy Market", "Jamaica Pond", "Arnold Arboretum")


@dataclass
class Case:
    kind: str
    misplaced: bool
    task_pk: int  # the task the case gold is placed under
    steps: tuple[str, ...]
    home_pk: int | None = None  # where the case gold belongs, when it is one task
    beside: list[tuple[str, ...]] = field(default_factory=list)  # other golds of the same task


def load_tasks() -> tuple[list[quality.TaskRecord], dict[int, frozenset]]:
    raw = json.loads(TASKS.read_text(encoding="utf-8"))
    tasks = [quality.TaskRecord(task["task_id"], str(task["task_id"]), task["intent"], task["intent_template_id"],
                                quality.template_slots(task["instantiation_dict"]))
             for task in raw]
    return tasks, {task["task_id"]: frozenset(task["sites"]) for task in raw}


def _replace(text: str, old: str, new: str) -> str:
    return re.sub(rf"(?<![A-Za-z0-9]){re.escape(old)}(?![A-Za-z0-9])", new.replace("\\", r"\\"), text,
                  flags=re.IGNORECASE)


def sibling_version(steps: tuple[str, ...], mine: quality.TaskRecord, sibling: quality.TaskRecord):
    """The gold with the sibling's template values in place of its own, or None if it types none of them."""
    theirs = dict(sibling.slots)
    changed = list(steps)
    for name, value in mine.slots:
        if len(value) >= 3 and name in theirs and theirs[name] != value:
            changed = [_replace(text, value, theirs[name]) for text in changed]
    return tuple(changed) if tuple(changed) != steps else None


def second_version(steps: tuple[str, ...], rng: random.Random) -> tuple[str, ...]:
    """Another annotator's wording of the same path: shorter phrases, one click left out."""
    reworded = [re.sub(r"^Click on the (link|button) ('[^']*')", r"Click \2", text).replace(" the ", " ")
                for text in steps]
    clicks = [position for position, text in enumerate(reworded) if not step_text.is_typing(text)]
    if len(reworded) > 2 and clicks:
        del reworded[rng.choice(clicks)]
    return tuple(reworded)


def quoting_rows(steps: tuple[str, ...]) -> list[str]:
    return [text for text in steps if step_text.quoted_values(text)]


def build_cases(tasks: list[quality.TaskRecord], sites: dict[int, frozenset], seed: int) -> list[Case]:
    rng = random.Random(seed)
    by_pk = {task.pk: task for task in tasks}
    template_of = {task.pk: task.template_id for task in tasks}
    siblings = defaultdict(list)
    for task in tasks:
        siblings[task.template_id].append(task.pk)
    homes = [(int(block.task_id), tuple(step.text for step in block.steps)) for block in read_gold_file(EXCERPT).blocks]
    for task_pk, steps in list(homes):
        for sibling in siblings[template_of[task_pk]]:
            version = sibling_version(steps, by_pk[task_pk], by_pk[sibling]) if sibling != task_pk else None
            if version is not None:
                homes.append((sibling, version))

    def unrelated(home: int, same_site: bool) -> int:
        pool = [pk for pk in by_pk if pk != home and template_of[pk] != template_of[home]
                and (sites[pk] == sites[home]) == same_site]
        return rng.choice(pool)

    cases = []
    for home, steps in homes:
        cases.append(Case("home", False, home, steps, home))
        cases.append(Case("second version beside it", False, home, second_version(steps, rng), home, [steps]))
        rows = quoting_rows(steps)
        cases.append(Case("one of its rows, alone", False, home, (rng.choice(rows),), home))
        cases.append(Case("moved, same site", True, unrelated(home, True), steps, home))
        cases.append(Case("moved, other site", True, unrelated(home, False), steps, home))
        cases.append(Case("single row, unrelated task", True, unrelated(home, rng.random() < 0.5),
                          (rng.choice(rows),), home))
        others = [pk for pk, _ in homes if sites[pk] == sites[home] and template_of[pk] != template_of[home]]
        if others:
            stranger = rng.choice(others)
            cases.append(Case("second block from another task", True, home,
                              next(s for pk, s in homes if pk == stranger), stranger, [steps]))
        if by_pk[home].slots and any(s != home and sibling_version(steps, by_pk[home], by_pk[s])
                                     for s in siblings[template_of[home]]):
            swapped = rng.choice([pk for pk in siblings[template_of[home]] if pk != home])
            cases.append(Case("sibling's version, places swapped", True, swapped, steps, home))
            places = [value for name, value in by_pk[home].slots if name.startswith("place")]
            if places:
                unnamed = steps
                for value, new in zip(places, UNNAMED_PLACES):
                    unnamed = tuple(_replace(text, value, new) for text in unnamed)
                cases.append(Case("second block between unnamed places", True, home, unnamed, None, [steps]))
    return cases


def split(tasks: list[quality.TaskRecord], seed: int) -> dict[int, str]:
    order = [task.pk for task in tasks]
    random.Random(seed).shuffle(order)
    return {pk: ("test" if position % 2 else "tuning") for position, pk in enumerate(order)}


def flags_of(case: Case, tasks: list[quality.TaskRecord], encoder) -> list[quality.Finding]:
    golds = [quality.GoldRecord(1, case.task_pk, case.steps)]
    golds += [quality.GoldRecord(2 + n, case.task_pk, steps) for n, steps in enumerate(case.beside)]
    return [finding for finding in quality.check_gold(tasks, golds, encoder=encoder)
            if finding.gold_pk == 1 and finding.kind in FIT_CHECKS]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--part", choices=("test", "tuning"), default="test")
    parser.add_argument("--show-misses", action="store_true", help="print every wrong answer with its flags")
    args = parser.parse_args()

    from judges.embeddings import sentence_encoder

    tasks, sites = load_tasks()
    parts = split(tasks, args.seed)
    cases = [case for case in build_cases(tasks, sites, args.seed) if parts[case.task_pk] == args.part]
    encoder = sentence_encoder()
    results = [(case, flags_of(case, tasks, encoder)) for case in cases]

    positives = sum(case.misplaced for case, _ in results)
    print(f"{args.part} part, seed {args.seed}: {len(results)} cases, {positives} misplaced golds, "
          f"{len(results) - positives} well placed")
    print("| check | flags | precision | recall |\n|---|---|---|---|")
    for check in FIT_CHECKS + ("any",):
        flagged = [case for case, flags in results if any(check in ("any", f.kind) for f in flags)]
        right = sum(case.misplaced for case in flagged)
        precision = right / len(flagged) if flagged else float("nan")
        print(f"| {check} | {len(flagged)} | {precision:.2f} | {right / positives:.2f} |")
    print("\n| kind of case | cases | flagged | right task named |\n|---|---|---|---|")
    by_kind = defaultdict(list)
    for case, flags in results:
        by_kind[case.kind].append((case, flags))
    for kind, group in by_kind.items():
        flagged = [(case, flags) for case, flags in group if flags]
        named = [case for case, flags in flagged if case.misplaced and case.home_pk is not None
                 and any(f.related_task_pk == case.home_pk for f in flags)]
        nameable = sum(1 for case, _ in flagged if case.misplaced and case.home_pk is not None)
        print(f"| {kind} | {len(group)} | {len(flagged)} | " + (f"{len(named)} of {nameable} |" if nameable else "- |"))
    if args.show_misses:
        for case, flags in results:
            if bool(flags) != case.misplaced:
                print(f"\n{'MISSED' if case.misplaced else 'FALSE FLAG'} {case.kind}: under task {case.task_pk} "
                      f"(home {case.home_pk}) {case.steps[:3]}")
                for finding in flags:
                    print(f"   {finding.kind} {finding.confidence}: {finding.message}")
    print("\nkinds of flags:", dict(Counter(f.kind for _, flags in results for f in flags)))


if __name__ == "__main__":
    main()
