"""Labelled pairs files: human-labelled step pairs and known answers (fixtures/judge_pairs.json),
and pairs made by mutating real steps, split into a tuning and a test part
(fixtures/judge_pairs_mutated.json, written by benchmarks/make_judge_pairs.py).

Django-free; a malformed file is reported with the pair or check that is wrong.
"""

import json
from dataclasses import dataclass
from pathlib import Path

from . import questions as q
from .steps import JudgeStep

DEFAULT_PATH = Path(__file__).resolve().parent.parent / "fixtures" / "judge_pairs.json"
MUTATED_PATH = DEFAULT_PATH.with_name("judge_pairs_mutated.json")
SPLITS = ("tune", "test")


class LabelledPairsError(ValueError):
    pass


@dataclass(frozen=True)
class LabelledPair:
    id: str
    group: str
    gold: JudgeStep
    agent: JudgeStep
    equivalent: bool
    note: str = ""
    split: str = ""  # "tune" or "test" in a split file, else ""


@dataclass(frozen=True)
class Check:
    """A question with a known answer: `expected` is 0/1, or {aspect: 0/1} for groundedness."""

    name: str
    questions: list[q.Question]
    expected: list[float]


def _load(path: Path) -> dict:
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as error:
        raise LabelledPairsError(f"{path}: {error}") from None
    if not isinstance(data, dict) or not isinstance(data.get("pairs"), list):
        raise LabelledPairsError(f"{path}: expected an object with a list `pairs`")
    return data


def _observation(data: dict, key, where: str) -> str:
    if key is None:
        return ""
    try:
        return data["observations"][key]
    except (KeyError, TypeError):
        raise LabelledPairsError(f"{where}: unknown observation {key!r}") from None


def load_labelled_pairs(path: Path = DEFAULT_PATH) -> list[LabelledPair]:
    data = _load(path)
    pairs = []
    for n, item in enumerate(data["pairs"]):
        where = f"{path}: pairs[{n}]"
        try:
            gold, agent, equivalent = item["gold"], item["agent"], item["equivalent"]
        except (KeyError, TypeError):
            raise LabelledPairsError(f"{where}: needs `gold`, `agent` and `equivalent`") from None
        if not isinstance(equivalent, bool):
            raise LabelledPairsError(f"{where}: `equivalent` must be true or false")
        split = item.get("split", "")
        if split not in ("", *SPLITS):
            raise LabelledPairsError(f"{where}: `split` must be one of {', '.join(SPLITS)}, not {split!r}")
        observation = _observation(data, item.get("observation"), where)
        pairs.append(
            LabelledPair(
                id=str(item.get("id", n + 1)),
                group=item.get("group", ""),
                gold=JudgeStep(text=gold),
                agent=JudgeStep(text=agent, observation=observation),
                equivalent=equivalent,
                note=item.get("note", ""),
                split=split,
            )
        )
    return pairs


def load_checks(path: Path = DEFAULT_PATH) -> list[Check]:
    data = _load(path)
    checks = []
    for n, item in enumerate(data.get("checks", [])):
        where = f"{path}: checks[{n}]"
        try:
            kind, intent, answer, expected = item["kind"], item["intent"], item["answer"], item["expected"]
            if kind == q.REQUIREMENTS:
                requirement = item["requirement"]
                check = Check(f"requirement {requirement!r}", [q.requirement(intent, answer, requirement)], [expected])
            elif kind == q.FUZZY_ANSWER:
                check = Check(f"answer {answer!r} vs {item['reference']!r}",
                              [q.fuzzy_answer(intent, answer, item["reference"])], [expected])
            elif kind == q.GROUNDEDNESS:
                observations = [_observation(data, item["observation"], where)]
                check = Check(
                    f"answer {answer!r} grounded / relevant",
                    [q.groundedness(aspect, intent, answer, observations) for aspect in q.ASPECTS],
                    [expected[aspect] for aspect in q.ASPECTS],
                )
            else:
                raise LabelledPairsError(f"{where}: unknown kind {kind!r}")
        except (KeyError, TypeError) as error:
            raise LabelledPairsError(f"{where}: missing or malformed {error}") from None
        checks.append(check)
    return checks
