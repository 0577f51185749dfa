"""Attribute a run's failures with the offline rules and print every source against the people."""

from django.core.management.base import BaseCommand, CommandError

from trajectories.models import AgentRun

from ...selectors import attribution_table
from ...services.attribution import attribute_by_rules

COLUMNS = (("agent", "agent"), ("exact", "exact step"), ("within_1", "within ±1"), ("within_3", "within ±3"),
           ("failure_type", "type"))


class Command(BaseCommand):
    help = ("Name the decisive step of each failed trajectory of a run by the offline rules (a baseline "
            "without gold or model), then print each attribution source against the people: the people's own "
            "agreement first, the random floor last.")

    def add_arguments(self, parser):
        parser.add_argument("--run", required=True, help="Run name")

    def handle(self, *args, run, **options):
        try:
            agent_run = AgentRun.objects.get(name=run)
        except AgentRun.DoesNotExist:
            raise CommandError(f"--run: run {run!r} does not exist") from None
        count = attribute_by_rules(agent_run)
        self.stdout.write(f"offline rules: {count} failed trajector{'y' if count == 1 else 'ies'} attributed")
        self.stdout.write("\t".join(["source", "n", *(label for _, label in COLUMNS)]))
        for row in attribution_table(agent_run.pk):
            figures = [getattr(row.result, name).value for name, _ in COLUMNS]
            self.stdout.write("\t".join([row.label, str(row.result.pairs),
                                         *("-" if value is None else f"{value:.3f}" for value in figures)]))
