"""Gold import and export at the size of the full published dataset, and the annotation queue.

Generates an xlsx shaped like the full "Golden Human Trajectories" sheet (4,350 step rows over
652 WebArena task ids; 18 tasks in a second, separate block of rows; blank `Task No.`
continuation rows and non-numeric `Step No.` as in the excerpt), with step texts taken from the
excerpt in shared/data. In a fresh SQLite database (a temporary folder) it imports the 812
tasks of test.raw.json, then times: reading the sheet, the first import, a second import of
the same file (nothing changes), an xlsx export of all the gold, the import of that export, and
the annotation queue (first page of 50 tasks with the user's status, and "next task") for an
annotator who has gold for half the tasks.

    .venv/bin/python benchmarks/gold_import.py [--rows 4350] [--tasks 652] [--repeats 3] [--seed 0]
"""

import argparse
import os
import platform
import random
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHARED_DATA = Path(os.environ.get("SHARED_DATA_DIR", ROOT.parent / "shared" / "data"))
EXCERPT = SHARED_DATA / "gold-sample" / "golden_human_trajectories_excerpt.xlsx"
TASKS = SHARED_DATA / "webarena" / "test.raw.json"
SECOND_BLOCKS = 18


def _setup_django(folder: Path) -> None:
    os.environ["DATABASE_URL"] = f"sqlite:///{folder / 'bench.sqlite3'}"
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.base")
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def generate_sheet(path: Path, rows: int, tasks: int, seed: int) -> None:
    import openpyxl

    from annotation.formats import read_gold_file

    rng = random.Random(seed)
    texts = [step.text for block in read_gold_file(EXCERPT).blocks for step in block.steps]
    task_ids = rng.sample(range(812), tasks)
    twice = set(rng.sample(task_ids, SECOND_BLOCKS))
    blocks = [(task_id, 1) for task_id in task_ids] + [(task_id, 2) for task_id in twice]
    rng.shuffle(blocks)
    # Spread the rows over the blocks: at least 2 steps each, the rest at random.
    lengths = [2] * len(blocks)
    for _ in range(rows - 2 * len(blocks)):
        lengths[rng.randrange(len(blocks))] += 1
    workbook = openpyxl.Workbook(write_only=True)
    sheet = workbook.create_sheet("Sheet1")
    sheet.append(["Task No.", "Step No.", "Text"])
    for (task_id, _), length in zip(blocks, lengths):
        pink = rng.random() < 0.02
        for number in range(1, length + 1):
            continuation = number > 1 and rng.random() < 0.01
            sheet.append([None if continuation else task_id, "Pink" if pink else number, rng.choice(texts)])
    workbook.save(path)


def _best(repeats: int, run) -> tuple[float, object]:
    best, result = None, None
    for _ in range(repeats):
        started = time.perf_counter()
        result = run()
        elapsed = time.perf_counter() - started
        best = elapsed if best is None else min(best, elapsed)
    return best, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=4350)
    parser.add_argument("--tasks", type=int, default=652)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as temp:
        folder = Path(temp)
        _setup_django(folder)
        from django.contrib.auth.models import Group, User

        from annotation.formats import export_bytes, read_gold_file
        from annotation.models import GoldTrajectory
        from annotation.selectors import QueueFilters, gold_blocks, next_task, task_queue
        from annotation.services.gold_import import import_gold_file
        from trajectories.services.tasks import import_task_file

        import_task_file(TASKS)
        sheet = folder / "golden_human_trajectories_full_size.xlsx"
        generate_sheet(sheet, args.rows, args.tasks, args.seed)

        read_time, parsed = _best(args.repeats, lambda: read_gold_file(sheet))
        started = time.perf_counter()
        first = import_gold_file(sheet, annotator="paper", create_annotator=True)
        first_time = time.perf_counter() - started
        again_time, again = _best(args.repeats,
                                  lambda: import_gold_file(sheet, annotator="paper", create_annotator=True))
        exported = folder / "exported.xlsx"
        export_time, _ = _best(args.repeats, lambda: exported.write_bytes(
            export_bytes(gold_blocks(GoldTrajectory.objects.filter(annotator__username="paper")), "xlsx")))
        started = time.perf_counter()
        round_trip = import_gold_file(exported, annotator="round-trip", create_annotator=True)
        round_trip_time = time.perf_counter() - started

        annotator = User.objects.create(username="alice")
        annotator.groups.add(Group.objects.get(name="annotator"))
        GoldTrajectory.objects.filter(annotator__username="round-trip", task__number__lt=406).update(
            annotator=annotator)
        everything = QueueFilters()
        queue_time, _ = _best(args.repeats, lambda: list(task_queue(annotator, everything)[:50]))
        count_time, _ = _best(args.repeats, lambda: task_queue(annotator, everything).count())
        next_time, _ = _best(args.repeats, lambda: next_task(annotator, everything))

    print(f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}")
    print(f"sheet: {args.rows} step rows, {len(parsed.blocks)} gold blocks over {args.tasks} tasks")
    print(f"read sheet (best of {args.repeats}):        {read_time * 1000:8.1f} ms")
    print(f"first import:                    {first_time * 1000:8.1f} ms  "
          f"({first.count('created')} gold created, {first.steps} steps, {len(first.unplaced)} rows unplaced)")
    print(f"second import (best of {args.repeats}):     {again_time * 1000:8.1f} ms  "
          f"({again.count('unchanged')} unchanged, {again.count('created') + again.count('updated')} written)")
    print(f"export xlsx (best of {args.repeats}):       {export_time * 1000:8.1f} ms")
    print(f"import of the export:            {round_trip_time * 1000:8.1f} ms  "
          f"({round_trip.count('created')} gold created, {round_trip.steps} steps)")
    print(f"queue page of 50 (best of {args.repeats}):  {queue_time * 1000:8.1f} ms")
    print(f"queue count (best of {args.repeats}):       {count_time * 1000:8.1f} ms")
    print(f"next task (best of {args.repeats}):         {next_time * 1000:8.1f} ms")


if __name__ == "__main__":
    main()
