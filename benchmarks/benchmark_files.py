"""Imports of other benchmarks' files at full size: WebArena-Verified tasks and Mind2Web gold.

Generates, from the excerpts in shared/data/more-benchmarks, a WebArena-Verified task file of
812 tasks (the 8 excerpt tasks repeated with task ids 0..811) and a Mind2Web action file of
1,000 demonstrations (the 3 excerpt entries repeated, each copy with its own `annotation_id`).
In a fresh SQLite database (a temporary folder) holding the 812 WebArena tasks of test.raw.json
(so the Verified import also reports what changed against each), it times through the same
services as `import_tasks` and `import_gold`: the first import (every row written), and a
second import of the same file (nothing changes), best of --repeats.

    .venv/bin/python benchmarks/benchmark_files.py [--tasks 812] [--demonstrations 1000] [--repeats 3]
"""

import argparse
import copy
import json
import os
import platform
import tempfile
import time
from pathlib import Path

from gold_import import SHARED_DATA, TASKS, _best, _setup_django

MORE = SHARED_DATA / "more-benchmarks"


def verified_file(path: Path, tasks: int) -> None:
    excerpt = json.loads((MORE / "webarena-verified.excerpt.json").read_text(encoding="utf-8"))
    entries = []
    for task_id in range(tasks):
        entry = copy.deepcopy(excerpt[task_id % len(excerpt)])
        entry["task_id"] = task_id
        entries.append(entry)
    path.write_text(json.dumps(entries), encoding="utf-8")


def mind2web_file(path: Path, demonstrations: int) -> None:
    excerpt = json.loads((MORE / "mind2web-actions.excerpt.json").read_text(encoding="utf-8"))
    entries = []
    for number in range(demonstrations):
        entry = copy.deepcopy(excerpt[number % len(excerpt)])
        entry["annotation_id"] = f"copy-{number:05d}"
        entries.append(entry)
    path.write_text(json.dumps(entries), encoding="utf-8")


def _timed(run) -> tuple[float, object]:
    started = time.perf_counter()
    result = run()
    return time.perf_counter() - started, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=812)
    parser.add_argument("--demonstrations", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as temp:
        folder = Path(temp)
        _setup_django(folder)
        from annotation.services.gold_import import import_gold_file
        from trajectories.services.tasks import import_task_file

        import_task_file(TASKS)
        verified, mind2web = folder / "webarena-verified.json", folder / "mind2web-actions.json"
        verified_file(verified, args.tasks)
        mind2web_file(mind2web, args.demonstrations)
        sizes = verified.stat().st_size // 1024, mind2web.stat().st_size // 1024

        verified_first, first = _timed(lambda: import_task_file(verified))
        verified_again, again = _best(args.repeats, lambda: import_task_file(verified))
        def import_gold():
            return import_gold_file(mind2web, annotator="mind2web", create_annotator=True)

        gold_first, gold = _timed(import_gold)
        gold_again, gold_repeat = _best(args.repeats, import_gold)

    print(f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}, "
          "SQLite")
    print(f"WebArena-Verified, {args.tasks} tasks ({sizes[0]:,} KiB):")
    print(f"  first import:                  {verified_first:6.2f} s  ({first.created} created, "
          f"{len({change['task_id'] for change in first.changes})} changed against WebArena)")
    print(f"  second import (best of {args.repeats}):   {verified_again:6.2f} s  ({again.unchanged} unchanged)")
    print(f"Mind2Web gold, {args.demonstrations} demonstrations ({sizes[1]:,} KiB):")
    print(f"  first import:                  {gold_first:6.2f} s  ({gold.defined_tasks['created']} tasks, "
          f"{gold.count('created')} gold trajectories, {gold.steps} steps created)")
    print(f"  second import (best of {args.repeats}):   {gold_again:6.2f} s  "
          f"({gold_repeat.count('unchanged')} unchanged)")


if __name__ == "__main__":
    main()
