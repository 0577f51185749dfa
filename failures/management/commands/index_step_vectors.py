"""Store the sentence vectors of every step that has none (search by meaning reads them)."""

from django.core.management.base import BaseCommand

from ...services.step_vectors import index_step_vectors


class Command(BaseCommand):
    help = ("Compute and store the sentence vector of every step that has none, for search by meaning; "
            "imports through the site ask a worker for this themselves.")

    def handle(self, *args, **options):
        stored = index_step_vectors()
        self.stdout.write(f"{stored} step vector{'' if stored == 1 else 's'} stored")
