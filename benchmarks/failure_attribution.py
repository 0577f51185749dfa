"""Each offline attribution source on the shared Who&When logs, beside the random floor.

Reads `shared/data/failure-attribution/who-and-when/{hand-crafted,algorithm-generated}` with the
platform's reader, names each log's decisive step with the offline rules (`failures/rules.py`) and
measures them against the annotators' `mistake_agent` / `mistake_step`, as the attribution page
does (`failures/accuracy.py`); the floor is the exact expectation of a uniform random choice.

    .venv/bin/python benchmarks/failure_attribution.py
"""

import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
SHARED_DATA = Path(os.environ.get("SHARED_DATA_DIR", ROOT.parent / "shared" / "data"))
LOGS = SHARED_DATA / "failure-attribution" / "who-and-when"

from failures.accuracy import Shape, against, random_floor  # noqa: E402
from failures.agreement import Label  # noqa: E402
from failures.rules import StepText, attribute  # noqa: E402
from trajectories.formats.who_and_when import parse_log  # noqa: E402

FIGURES = (("agent", "agent"), ("exact", "exact step"), ("within_1", "within ±1"), ("within_3", "within ±3"))


def _row(name: str, result) -> str:
    cells = [f"{getattr(result, field).value:.3f}" if getattr(result, field).value is not None else "-"
             for field, _ in FIGURES]
    return f"| {name} | {result.pairs} | " + " | ".join(cells) + " |"


def main() -> None:
    print("| layout / source | logs | " + " | ".join(label for _, label in FIGURES) + " |")
    print("|---|---|" + "---|" * len(FIGURES))
    for layout in ("hand-crafted", "algorithm-generated"):
        reference, rules, shapes = {}, {}, {}
        for number, path in enumerate(sorted(LOGS.joinpath(layout).glob("*.json"))):
            trajectory = parse_log(json.loads(path.read_text(encoding="utf-8")))
            [label] = trajectory.failure_labels
            reference[number] = Label("Who&When annotators", label.step, label.agent)
            found = attribute([StepText(step.index, step.action, step.agent, step.action_parts.type, "", "",
                                        step.reasoning) for step in trajectory.steps])
            rules[number] = Label("offline rules", found.step, found.agent)
            shapes[number] = Shape(steps=len(trajectory.steps), agents=len({s.agent for s in trajectory.steps}))
        print(_row(f"{layout}: offline rules", against(reference, rules)))
        print(_row(f"{layout}: random choice (floor, exact)", random_floor(reference, shapes)))


if __name__ == "__main__":
    main()
