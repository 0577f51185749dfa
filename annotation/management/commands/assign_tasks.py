from django.core.management.base import BaseCommand, CommandError

from annotation.services.assignments import assign_tasks, parse_task_ids


class Command(BaseCommand):
    help = "Put tasks in an annotator's queue: assign_tasks alice 1-50 77 --benchmark webarena"

    def add_arguments(self, parser):
        parser.add_argument("annotator")
        parser.add_argument("tasks", nargs="+", metavar="TASK_IDS", help="Task ids, ranges (1-50) or lists (1,4,9)")
        parser.add_argument("--benchmark", default="webarena")

    def handle(self, *args, annotator, tasks, benchmark, **options):
        try:
            report = assign_tasks(annotator, parse_task_ids(tasks), benchmark=benchmark)
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(str(report))
