from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotation.models import GoldStatus
from annotation.services.gold_import import import_gold_file


class Command(BaseCommand):
    help = (
        "Import human gold trajectories from the published xlsx sheet, a CSV with the same columns, "
        "or gold/v1 JSON. One transaction per file; importing the same file again changes nothing. The gold is "
        "recorded under an existing annotator's account unless --create-annotator is given."
    )

    def add_arguments(self, parser):
        parser.add_argument("paths", nargs="+", type=Path, metavar="PATH")
        parser.add_argument("--annotator", required=True,
                            help="Account the gold is recorded under: an existing one with the annotator role "
                                 "(see --create-annotator)")
        parser.add_argument("--create-annotator", action="store_true",
                            help="Create a missing annotator account (no password, annotator role)")
        parser.add_argument("--status", default=GoldStatus.APPROVED, choices=GoldStatus.values)
        parser.add_argument("--benchmark", default="webarena", help="Benchmark of the task ids in sheets")
        parser.add_argument("--strict", action="store_true",
                            help="Refuse a file whose step numbering needed resolving, listing every anomaly")
        parser.add_argument("--reference", action="store_true",
                            help="Make the file's gold (its first block per task) the reference gold of its tasks")

    def handle(self, *args, paths, annotator, create_annotator, status, benchmark, strict, reference, **options):
        failed = []
        for path in paths:
            try:
                report = import_gold_file(path, annotator=annotator, status=status, benchmark=benchmark,
                                          create_annotator=create_annotator, strict=strict, reference=reference)
            except ValueError as exc:  # GoldFormatError (names file and row), or a bad annotator
                failed.append(path)
                self.stderr.write(f"{path}: not imported: {exc}")
                continue
            self.stdout.write(report.summary())
        if failed:
            raise CommandError(f"{len(failed)} of {len(paths)} files not imported")
