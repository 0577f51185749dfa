from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from trajectories.formats.verdict_files import VerdictFileError
from trajectories.services.verdict_import import TABLES, import_verdicts


class Command(BaseCommand):
    help = (
        "Import verdicts on agents' success from any source, each file read by its content: Online-Mind2Web "
        "human_label.json (one run per agent column), WebJudge JSON lines, browser-use judge result.json, Agent-E "
        "evaluation records, AgentRewardBench annotations.csv and judge files, and plain per-task tables of harness "
        "outcomes or human grades (as import_outcomes and import_grades). Each file is stored whole or not at all; "
        "summary rows (Win Rate, Average, All) are skipped and named. Re-running updates the verdicts in place."
    )

    def add_arguments(self, parser):
        parser.add_argument("files", nargs="+", type=Path)
        parser.add_argument("--run", default="", help="The run the verdicts judge (required for WebJudge, "
                                                      "browser-use judge and Agent-E files); for human_label.json, "
                                                      "one agent's column")
        parser.add_argument("--source", default="", help='Name of the verdict source, e.g. "WebJudge o4-mini" '
                                                         "(default: the format's own)")
        parser.add_argument("--benchmark", default="", help="Benchmark of the tasks when the file does not say")
        parser.add_argument("--threshold", type=float, default=None,
                            help="Score at or above which a judge's score is a success (browser-use: 70)")
        parser.add_argument("--table", choices=TABLES, default="",
                            help="Read the files as plain tables of outcomes or grades")
        parser.add_argument("--strict", action="store_true",
                            help="Refuse verdicts on tasks the platform does not hold instead of creating them")

    def handle(self, *args, files, run, source, benchmark, threshold, table, strict, **options):
        failed = 0
        for file in files:
            if not file.is_file():
                self.stderr.write(self.style.ERROR(f"{file}: no such file"))
                failed += 1
                continue
            try:
                report = import_verdicts(file.name, file.read_bytes(), run=run, source_name=source,
                                         benchmark=benchmark, threshold=threshold, table=table, strict=strict)
            except VerdictFileError as error:
                self.stderr.write(self.style.ERROR(f"{error}; nothing was stored."))
                failed += 1
                continue
            self.stdout.write(self.style.SUCCESS(str(report)))
        if failed:
            raise CommandError(f"{failed} of {len(files)} files not imported")
