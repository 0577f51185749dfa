from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from trajectories.formats.webarena_tasks import TaskConfigError
from trajectories.services.subsets import import_subset_file


class Command(BaseCommand):
    help = (
        "Define a named subset of a benchmark's tasks from a file of task ids (a JSON list, "
        '{"task_ids": [...]}, a list of task objects, or ids one per line or separated by commas), e.g. the '
        "WebArena-Verified hard and non-hard lists. Importing again under the same name replaces the ids."
    )

    def add_arguments(self, parser):
        parser.add_argument("name", help="Subset name, e.g. verified-hard")
        parser.add_argument("path", type=Path)
        parser.add_argument("--benchmark", default="webarena", help="Whose task ids these are (default: webarena)")
        parser.add_argument("--description", default="")

    def handle(self, *args, name, path, benchmark, description, **options):
        if not path.is_file():
            raise CommandError(f"{path}: no such file")
        try:
            outcome, definition = import_subset_file(path, name=name, benchmark=benchmark, description=description)
        except (TaskConfigError, ValueError) as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(self.style.SUCCESS(
            f"subset {definition.name} of {definition.benchmark}: {len(definition.task_ids)} tasks ({outcome})"))
