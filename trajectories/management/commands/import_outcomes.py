from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from trajectories.formats.verdict_files import VerdictFileError
from trajectories.services.verdict_import import OUTCOMES, import_verdicts


class Command(BaseCommand):
    help = (
        "Import per-task harness verdicts (pass/fail) as results-only runs: CSV, JSON or JSONL, one row per run "
        "and task, e.g. a published leaderboard's {\"t\", \"m\", \"s\"} records (one run per m). "
        "Summary rows (task id Win Rate, Average, All, Total or empty) are skipped and named; a row naming a task the "
        "platform does not hold is left out and named (--strict refuses the file instead); any other row that cannot "
        "be read refuses the file. Re-running updates the verdicts in place."
    )

    def add_arguments(self, parser):
        parser.add_argument("file", type=Path)
        parser.add_argument("--run", default="", help="Run name when the file has no run column; with one, "
                                                      "import only this run's rows")
        parser.add_argument("--run-column", default="", help="Column naming the run (default: run, m, agent, ...)")
        parser.add_argument("--task-column", default="", help="Column of the task id (default: task_id, t, ...)")
        parser.add_argument("--success-column", default="",
                            help="Column of the verdict (default: success, s, pass, ...)")
        parser.add_argument("--benchmark", default="webarena", help="Benchmark of the tasks (default: webarena)")
        parser.add_argument("--strict", action="store_true",
                            help="Refuse the file when a row names a task the platform does not hold")

    def handle(self, *args, file, run, run_column, task_column, success_column, benchmark, strict, **options):
        if not file.is_file():
            raise CommandError(f"{file}: no such file")
        try:
            report = import_verdicts(file.name, file.read_bytes(), table=OUTCOMES, run=run, run_column=run_column,
                                     task_column=task_column, success_column=success_column,
                                     benchmark=benchmark, strict=strict).table
        except VerdictFileError as error:
            raise CommandError(f"{error}; nothing was stored.") from None
        lines = str(report).splitlines()
        for run_report, line in zip(report.runs, lines):
            self.stdout.write(self.style.WARNING(line) if run_report.uniform is not None else self.style.SUCCESS(line))
        for line in lines[len(report.runs):]:  # the summary rows skipped, the rows left out
            self.stdout.write(self.style.WARNING(line))
