"""Judge whether each trajectory of a run accomplished its task, with the outcome judge."""

from django.core.management.base import CommandError

from infrastructure.job_commands import JobCommand
from judges.models import OutcomeJob
from judges.outcome_judging import create_outcome_job
from judges.selectors import UnknownJudge
from judges.services import judge_config_for
from trajectories.models import AgentRun


class Command(JobCommand):
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
        job = self.start_job(lambda: create_outcome_job(agent_run, config), option="--judge", wait=wait)
        self.stdout.write(f"outcome judging #{job.pk}: {job.total} trajectories of run {run}, judge {config.name}")
        if wait:
            self.wait_for(job, _outcome)


def _outcome(job: OutcomeJob) -> str:
    return (f"{job.judged} judged, {job.passed} successful, {len(job.errors)} without a verdict; "
            f"{job.calls} requests, ${job.cost}")
