"""Judge whether each trajectory of a run accomplished its task, with the outcome judge."""

import time

from django.core.management.base import BaseCommand, CommandError

from infrastructure.jobs import JobStatus, WorkersUnreachable
from judges.models import OutcomeJob
from judges.outcome_judging import create_outcome_job
from judges.selectors import UnknownJudge
from judges.services import judge_config_for
from trajectories.models import AgentRun


class Command(BaseCommand):
    help = (
        "Judge each trajectory of a run for success (key points, screenshot relevance, verdict) with an "
        "OpenAI-compatible judge, as a background job; the verdicts are the source 'Trajscope outcome judge'."
    )

    def add_arguments(self, parser):
        parser.add_argument("--run", required=True, help="Run name")
        parser.add_argument("--judge", help="JudgeConfig name of an openai judge (default: the default judge)")
        parser.add_argument("--wait", action="store_true", help="Wait for the job and print its result")

    def handle(self, *args, run, judge, wait, **options):
        try:
            agent_run = AgentRun.objects.get(name=run)
        except AgentRun.DoesNotExist:
            raise CommandError(f"--run: run {run!r} does not exist") from None
        try:
            config = judge_config_for(judge)
        except UnknownJudge as exc:
            raise CommandError(f"--judge: {exc}") from None
        try:
            job = create_outcome_job(agent_run, config)
        except ValueError as exc:
            raise CommandError(f"--judge: {exc}") from None
        except WorkersUnreachable as exc:
            if not wait:
                raise CommandError(str(exc)) from None
            self.stderr.write(str(exc))
            job = exc.job
        self.stdout.write(f"outcome judging #{job.pk}: {job.total} trajectories of run {run}, judge {config.name}")
        if wait:
            self._wait(job)

    def _wait(self, job: OutcomeJob) -> None:
        while job.is_unfinished:
            time.sleep(0.5)
            job.refresh_from_db()
        self.stdout.write(f"outcome judging #{job.pk} {job.status}: {job.judged} judged, {job.passed} successful, "
                          f"{len(job.errors)} without a verdict; {job.calls} requests, ${job.cost}")
        for item in job.errors:
            self.stdout.write(f"- task {item['task']}: {item['error']}")
        if job.status != JobStatus.DONE:
            raise CommandError(f"outcome judging #{job.pk} failed: {job.error}")
