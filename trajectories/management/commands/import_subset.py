from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from trajectories.formats.webarena_tasks import TaskConfigError
from trajectories.services.subsets import import_subset_file


class Command(BaseCommand):
    help = (
        "Define a named subset of a benchmark's tasks from a file of task ids (a JSON list, "
        '{"task_ids": [...]}, a list of task objects, or ids one per line or separated by commas), e.g. the '
        "WebArena-Verified hard and non-hard lists. An entry that is no task id is reported and skipped (--strict "
        "refuses the file instead). Importing again under the same name replaces the ids."
    )

    def add_arguments(self, parser):
        parser.add_argument("name", help="Subset name, e.g. verified-hard")
        parser.add_argument("path", type=Path)
        parser.add_argument("--benchmark", default="webarena", help="Whose task ids these are (default: webarena)")
        parser.add_argument("--description", default="")
        parser.add_argument("--strict", action="store_true",
                            help="Refuse the file when any entry cannot be read or is read other than as written")

    def handle(self, *args, name, path, benchmark, description, strict, **options):
        if not path.is_file():
            raise CommandError(f"{path}: no such file")
        try:
            result = import_subset_file(path, name=name, benchmark=benchmark, description=description, strict=strict)
        except (TaskConfigError, ValueError) as exc:
            raise CommandError(str(exc)) from exc
        style = self.style.WARNING if result.skipped or result.notes else self.style.SUCCESS
        self.stdout.write(style(str(result)))
