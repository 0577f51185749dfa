"""Attribute a run's failures with the offline rules or an LLM method, and print every source against the people."""

import time

from django.core.management.base import BaseCommand, CommandError

from infrastructure.jobs import JobStatus, WorkersUnreachable
from judges.selectors import UnknownJudge
from judges.services import judge_config_for
from trajectories.models import AgentRun

from ...llm_methods import METHODS
from ...models import AttributionJob
from ...selectors import attribution_table
from ...services.attribution import attribute_by_rules
from ...services.llm_attribution import create_attribution_job

RULES = "rules"
COLUMNS = (("agent", "agent"), ("exact", "exact step"), ("within_1", "within ±1"), ("within_3", "within ±3"),
           ("failure_type", "type"))


class Command(BaseCommand):
    help = ("Name the decisive step of each failed trajectory of a run, by the offline rules (a baseline without "
            "gold or model, at once) or by one of the LLM methods of Who&When (all_at_once, step_by_step, "
            "binary_search; a background job with an OpenAI-compatible judge), then print each attribution source "
            "against the people: the people's own agreement first, the random floor last.")

    def add_arguments(self, parser):
        parser.add_argument("--run", required=True, help="Run name")
        parser.add_argument("--method", default=RULES, choices=[RULES, *METHODS],
                            help="rules (default), or an LLM method")
        parser.add_argument("--judge", help="LLM methods: JudgeConfig name of an openai judge (default: the default "
                                            "judge)")
        parser.add_argument("--wait", action="store_true",
                            help="LLM methods: wait for the job, then print its result and the table")

    def handle(self, *args, run, method, judge, wait, **options):
        try:
            agent_run = AgentRun.objects.get(name=run)
        except AgentRun.DoesNotExist:
            raise CommandError(f"--run: run {run!r} does not exist") from None
        if method == RULES:
            count = attribute_by_rules(agent_run)
            self.stdout.write(f"offline rules: {count} failed trajector{'y' if count == 1 else 'ies'} attributed")
        else:
            job = self._start(agent_run, method, judge)
            if not wait:
                return
            self._wait(job)
        self._table(agent_run)

    def _start(self, run: AgentRun, method: str, judge: str | None) -> AttributionJob:
        try:
            config = judge_config_for(judge)
        except UnknownJudge as exc:
            raise CommandError(f"--judge: {exc}") from None
        try:
            job = create_attribution_job(run, config, method)
        except ValueError as exc:
            raise CommandError(f"--judge: {exc}") from None
        except WorkersUnreachable as exc:
            self.stderr.write(str(exc))
            job = exc.job
        self.stdout.write(f"failure attribution #{job.pk}: {job.total} failed trajectories of run {run.name}, "
                          f"{METHODS[method]}, judge {config.name}")
        return job

    def _wait(self, job: AttributionJob) -> None:
        while job.is_unfinished:
            time.sleep(0.5)
            job.refresh_from_db()
        self.stdout.write(f"failure attribution #{job.pk} {job.status}: {job.attributed} attributed, "
                          f"{len(job.errors)} without a decisive step; {job.calls} requests, ${job.cost}")
        for item in job.errors:
            self.stdout.write(f"- task {item['task']}: {item['error']}")
        if job.status != JobStatus.DONE:
            raise CommandError(f"failure attribution #{job.pk} failed: {job.error}")

    def _table(self, run: AgentRun) -> None:
        self.stdout.write("\t".join(["source", "n", *(label for _, label in COLUMNS)]))
        for row in attribution_table(run.pk):
            figures = [getattr(row.result, name).value for name, _ in COLUMNS]
            self.stdout.write("\t".join([row.label, str(row.result.pairs),
                                         *("-" if value is None else f"{value:.3f}" for value in figures)]))
