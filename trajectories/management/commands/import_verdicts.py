from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from trajectories.formats.verdict_files import VerdictFileError
from trajectories.services.verdict_import import (
    TABLES, UnknownAgents, import_files, mapping_of_pairs, read_verdict_folder, read_verdicts,
)


class Command(BaseCommand):
    help = (
        "Import verdicts on agents' success from any source, each file read by its content: Online-Mind2Web "
        "human_label.json (one run per agent column), WebJudge JSON lines, browser-use judge result.json, Agent-E "
        "evaluation records, AgentRewardBench annotations.csv and judge files (one per trajectory; a folder or zip "
        "of them is read as one file), and plain per-task tables of harness outcomes or human grades (as "
        "import_outcomes and import_grades). --map sends an agent's verdicts to a run, or leaves them out. A record "
        "that cannot be stored is left out and named; a file none of whose records can be stored (or, with --strict, "
        "any) stores nothing. Summary rows (Win Rate, Average, All) are skipped "
        "and named. Re-running updates the verdicts in place and counts the same ones unchanged."
    )

    def add_arguments(self, parser):
        parser.add_argument("files", nargs="+", type=Path,
                            help="Files; a folder or zip archive of AgentRewardBench judge files")
        parser.add_argument("--run", default="", help="The run the verdicts judge (WebJudge, browser-use judge and "
                                                      "Agent-E files name none); for human_label.json, one agent's "
                                                      "column")
        parser.add_argument("--map", action="append", default=[], metavar="AGENT=RUN", dest="mapping",
                            help="Send the verdicts of an agent (or column) of the files to the run of that name, "
                                 "made when there is none; AGENT= leaves them out. Repeatable; agents not mapped "
                                 "are matched to runs as without --map")
        parser.add_argument("--source", default="", help='Name of the verdict source, e.g. "WebJudge o4-mini" '
                                                         "(default: the format's own)")
        parser.add_argument("--benchmark", default="",
                            help="Benchmark of the tasks when the file does not say; the tasks a file names are "
                                 "made only in a benchmark named so, or by the file")
        parser.add_argument("--threshold", type=float, default=None,
                            help="Score at or above which a judge's score is a success (browser-use: 50)")
        parser.add_argument("--table", choices=TABLES, default="",
                            help="Read the files as plain tables of outcomes or grades")
        parser.add_argument("--strict", action="store_true",
                            help="Refuse a file with any record that cannot be stored (a task the platform does not "
                                 "hold among them) instead of leaving the record out")

    def handle(self, *args, files, run, mapping, source, benchmark, threshold, table, strict, **options):
        try:
            mapping = mapping_of_pairs(mapping)
        except ValueError as error:
            raise CommandError(str(error)) from None
        failed, read = 0, []
        for file in files:
            if not file.exists():
                self.stderr.write(self.style.ERROR(f"{file}: no such file or folder"))
                failed += 1
                continue
            try:
                if file.is_dir():
                    read.append(read_verdict_folder(file.name, [
                        (path.relative_to(file).as_posix(), path.read_bytes())
                        for path in sorted(file.rglob("*")) if path.is_file()], run=run, source_name=source))
                else:
                    read.append(read_verdicts(file.name, file.read_bytes(), run=run, source_name=source,
                                              threshold=threshold, table=table))
            except VerdictFileError as error:
                self.stderr.write(self.style.ERROR(f"{error}; nothing was stored."))
                failed += 1
        try:
            results = import_files(read, [mapping] * len(read), benchmark=benchmark, strict=strict)
        except UnknownAgents as error:
            raise CommandError(f"--map: {error}. Nothing was stored.") from None
        for result in results:
            if isinstance(result, VerdictFileError):
                self.stderr.write(self.style.ERROR(f"{result}; nothing was stored."))
                failed += 1
            else:
                self.stdout.write(self.style.SUCCESS(str(result)))
        if failed:
            raise CommandError(f"{failed} of {len(files)} files not imported")
