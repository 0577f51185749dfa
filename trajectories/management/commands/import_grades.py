from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from trajectories.formats.verdict_files import VerdictFileError
from trajectories.services.verdict_import import GRADES, import_verdicts


class Command(BaseCommand):
    help = (
        "Import human outcome grades (1 correct, 0.5 partially correct, 0 incorrect) of one run's tasks: CSV with "
        "one column per grader and their note beside it (AgentOccam's human assessment), or rows of task, grader, "
        "grade, note in CSV, JSON or JSONL. Summary rows (task id Win Rate, Average, All, Total or empty) are skipped "
        "and named; a row naming a task the platform does not hold is left out and named (--strict refuses the file "
        "instead); any other row that cannot be read refuses the file. Re-running updates the grades."
    )

    def add_arguments(self, parser):
        parser.add_argument("file", type=Path)
        parser.add_argument("--run", required=True, help="Name of the run the grades are about")
        parser.add_argument("--strict", action="store_true",
                            help="Refuse the file when a row names a task the platform does not hold")

    def handle(self, *args, file, run, strict, **options):
        if not file.is_file():
            raise CommandError(f"{file}: no such file")
        try:
            report = import_verdicts(file.name, file.read_bytes(), table=GRADES, run=run, strict=strict).table
        except VerdictFileError as error:
            raise CommandError(f"{error}; nothing was stored.") from None
        self.stdout.write(self.style.SUCCESS(str(report)))
