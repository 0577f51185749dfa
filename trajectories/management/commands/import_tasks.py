from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from trajectories.formats.webarena_tasks import TaskConfigError
from trajectories.services.tasks import import_task_file


class Command(BaseCommand):
    help = (
        "Import task files: WebArena (test.raw.json, per-task config files), WebArena-Lite (also defines the "
        "subset webarena-lite of WebArena), WebArena-Verified (reports what changed against WebArena) and "
        "Mind2Web-Live (key nodes). An entry that cannot be read is reported and skipped, and the rest of its file "
        "imported (--strict refuses the file whole instead); re-running updates tasks in place."
    )

    def add_arguments(self, parser):
        parser.add_argument("paths", nargs="+", type=Path, help="JSON files, or folders of them")
        parser.add_argument("--benchmark", help="Benchmark name (default: from the file: webarena, webarena-lite, webarena-verified, mind2web-live)")
        parser.add_argument("--strict", action="store_true",
                            help="Refuse a file whole when any entry cannot be read or is read other than as written")

    def handle(self, *args, paths, benchmark, strict, **options):
        files = []
        for path in paths:
            if path.is_dir():
                files.extend(sorted(path.glob("*.json")))
            elif path.is_file():
                files.append(path)
            else:
                raise CommandError(f"{path}: no such file or folder")
        failures = 0
        for path in files:
            try:
                report = import_task_file(path, benchmark=benchmark, strict=strict)
            except TaskConfigError as exc:
                failures += 1
                self.stderr.write(self.style.ERROR(str(exc)))
                continue
            style = self.style.WARNING if report.skipped or report.notes else self.style.SUCCESS
            self.stdout.write(style(str(report)))
        if failures:
            raise CommandError(f"{failures} of {len(files)} file(s) were refused; nothing from them was stored.")
