from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotation.formats import FORMATS, detect_format, export_bytes
from annotation.models import GoldStatus, GoldTrajectory
from annotation.selectors import gold_blocks


class Command(BaseCommand):
    help = (
        "Export gold trajectories in the columns import_gold reads (xlsx or CSV) or as gold/v1 JSON; "
        "the format follows the file name unless --format is given."
    )

    def add_arguments(self, parser):
        parser.add_argument("path", type=Path, metavar="PATH")
        parser.add_argument("--format", choices=FORMATS)
        parser.add_argument("--annotator", help="Only this annotator's gold")
        parser.add_argument("--status", choices=GoldStatus.values, help="Only gold with this status")
        parser.add_argument("--benchmark", help="Only tasks of this benchmark")
        parser.add_argument("--task", action="append", default=[], metavar="TASK_ID", help="Only these task ids")

    def handle(self, *args, path, format, annotator, status, benchmark, task, **options):
        try:
            fmt = format or detect_format(path.name)
        except ValueError as exc:
            raise CommandError(f"{exc}; pass --format") from exc
        golds = GoldTrajectory.objects.all()
        if annotator:
            golds = golds.filter(annotator__username=annotator)
        if status:
            golds = golds.filter(status=status)
        if benchmark:
            golds = golds.filter(task__benchmark=benchmark)
        if task:
            golds = golds.filter(task__task_id__in=task)
        blocks = gold_blocks(golds)
        path.write_bytes(export_bytes(blocks, fmt))
        steps = sum(len(block.steps) for block in blocks)
        self.stdout.write(f"{path}: {len(blocks)} gold trajectories, {steps} steps ({fmt})")
