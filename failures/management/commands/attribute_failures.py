"""Attribute a run's failures with the offline rules or an LLM method, and print every source against the people."""

from django.core.management.base import CommandError

from infrastructure.job_commands import JobCommand
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


class Command(JobCommand):
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
            job = self._start(agent_run, method, judge, wait)
            if not wait:
                return
            self.wait_for(job, _outcome)
        self._table(agent_run)

    def _start(self, run: AgentRun, method: str, judge: str | None, wait: bool) -> AttributionJob:
        try:
            config = judge_config_for(judge)
        except UnknownJudge as exc:
            raise CommandError(f"--judge: {exc}") from None
        job = self.start_job(lambda: create_attribution_job(run, config, method), option="--judge", wait=wait)
        self.stdout.write(f"failure attribution #{job.pk}: {job.total} failed trajectories of run {run.name}, "
                          f"{METHODS[method]}, judge {config.name}")
        return job

    def _table(self, run: AgentRun) -> None:
        self.stdout.write("\t".join(["source", "n", *(label for _, label in COLUMNS)]))
        for row in attribution_table(run.pk):
            figures = [getattr(row.result, name).value for name, _ in COLUMNS]
            self.stdout.write("\t".join([row.label, str(row.result.pairs),
                                         *("-" if value is None else f"{value:.3f}" for value in figures)]))


def _outcome(job: AttributionJob) -> str:
    return f"{job.attributed} attributed, {len(job.errors)} without a decisive step; {job.calls} requests, ${job.cost}"
