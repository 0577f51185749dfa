"""The gold quality checks and the agreement report, as background jobs, on a sheet the size of the
full published dataset.

Generates the same xlsx as benchmarks/gold_import.py (4,350 step rows over 652 WebArena task ids,
18 tasks in a second block of rows, step texts from the excerpt in shared/data), adds the numbering
anomalies of the full sheet (--anomalies of each kind: blocks all numbered 1, a first step left at
the end of the task before, repeated numbers; the import must still find 670 gold trajectories
and 4,350 steps), imports it into a
fresh SQLite database holding the 812 tasks of test.raw.json (Celery in-process, as in the embedded
setup), then times: the import (which is followed by the quality job), the quality job run on
demand (flags already stored: updated in place), and the agreement job of the 18 tasks with two
golds, with the offline judge. The first quality job loads the MiniLM model and encodes every
intent and gold; later ones, here timed as in a new worker process, read the stored vectors.

    .venv/bin/python benchmarks/gold_quality.py [--rows 4350] [--tasks 652] [--repeats 3] [--seed 0]
"""

import argparse
import os
import platform
import tempfile
import time
from pathlib import Path

from gold_import import TASKS, _best, _setup_django, generate_sheet


def add_anomalies(path: Path, count: int, seed: int) -> None:
    """Renumber rows of the generated sheet as in the full published one."""
    import random

    import openpyxl

    rng = random.Random(seed)
    rows = [list(row) for row in openpyxl.load_workbook(path).worksheets[0].iter_rows(values_only=True)]
    header, data = rows[0], rows[1:]
    starts = [i for i, row in enumerate(data) if row[1] == 1 and row[0] is not None]
    ends = {start: next((j for j in range(start + 1, len(data)) if data[j][1] == 1 and data[j][0] is not None),
                        len(data)) for start in starts}
    numbered = [start for start in starts if ends[start] - start >= 4 and all(
        isinstance(data[i][1], int) and data[i][0] is not None for i in range(start, ends[start]))]
    chosen = rng.sample(numbered, 3 * count)
    for start in chosen[:count]:  # every row numbered 1
        for i in range(start, ends[start]):
            data[i][1] = 1
    for start in chosen[count:2 * count]:  # step 3 numbered 2 again
        data[start + 2][1] = 2
    for start in chosen[2 * count:]:  # the first step written under the task before
        if start > 0 and isinstance(data[start - 1][1], int) and data[start - 1][1] >= 2:
            data[start][0] = data[start - 1][0] or next(row[0] for row in reversed(data[:start]) if row[0])
    workbook = openpyxl.Workbook(write_only=True)
    sheet = workbook.create_sheet("Sheet1")
    for row in [header] + data:
        sheet.append(row)
    workbook.save(path)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=4350)
    parser.add_argument("--tasks", type=int, default=652)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--anomalies", type=int, default=5, help="blocks per kind of numbering anomaly")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as temp:
        folder = Path(temp)
        _setup_django(folder)
        from django.conf import settings

        from annotation.models import GoldCheckJob, GoldFlag
        from annotation.services.gold_checks import start_gold_check
        from annotation.services.gold_import import import_gold_file
        from judges.models import JudgeConfig
        from trajectories.services.tasks import import_task_file

        assert settings.CELERY_TASK_ALWAYS_EAGER, "run without CELERY_BROKER_URL: jobs run in this process"
        import_task_file(TASKS)
        JudgeConfig.objects.get_or_create(name="offline", defaults={"backend": "offline"})
        sheet = folder / "golden_human_trajectories_full_size.xlsx"
        generate_sheet(sheet, args.rows, args.tasks, args.seed)
        add_anomalies(sheet, args.anomalies, args.seed)

        started, cpu_started = time.perf_counter(), time.process_time()
        report = import_gold_file(sheet, annotator="paper", create_annotator=True)
        import_time, import_cpu = time.perf_counter() - started, time.process_time() - cpu_started
        after_import = GoldCheckJob.objects.get(kind="quality")
        assert after_import.status == "done", after_import.error
        quality_after_import = (after_import.finished_at - after_import.started_at).total_seconds()

        def quality_job():
            job = start_gold_check(GoldCheckJob.Kind.QUALITY, benchmark="webarena")
            job.refresh_from_db()
            assert job.status == "done", job.error
            return job

        from judges import embeddings

        embeddings._encoder.cache_clear()  # as in a new worker process: no model loaded, no vector in memory
        quality_time, job = _best(args.repeats, quality_job)
        model_loaded = embeddings._encoder.cache_info().currsize

        def agreement_job():
            job = start_gold_check(GoldCheckJob.Kind.AGREEMENT, benchmark="webarena",
                                   parameters={"judge": "offline", "tau": 0.7})
            job.refresh_from_db()
            assert job.status == "done", job.error
            return job

        started = time.perf_counter()
        first_agreement = agreement_job()
        agreement_first = time.perf_counter() - started
        agreement_again, _ = _best(args.repeats, agreement_job)
        flags = {kind: GoldFlag.objects.filter(kind=kind, active=True).count() for kind in GoldFlag.Kind.values}

    print(f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}")
    print(f"sheet: {args.rows} step rows over {args.tasks} tasks -> {len(report.gold)} gold trajectories, "
          f"{report.steps} steps, {len(report.anomalies)} anomalies resolved")
    print(f"import, then the quality job:        {import_time * 1000:8.1f} ms "
          f"(of which the quality job {quality_after_import * 1000:.1f} ms; CPU time of both {import_cpu:.1f} s)")
    print(f"quality job on demand (best of {args.repeats}):  {quality_time * 1000:8.1f} ms  "
          f"({job.total} golds checked; vectors read from the database, model loaded: {bool(model_loaded)})")
    print(f"agreement job, offline judge, first: {agreement_first * 1000:8.1f} ms  "
          f"({first_agreement.total} gold pairs)")
    print(f"agreement job again (best of {args.repeats}):    {agreement_again * 1000:8.1f} ms  (decisions cached)")
    print("open flags: " + ", ".join(f"{kind} {count}" for kind, count in flags.items() if count))


if __name__ == "__main__":
    main()
