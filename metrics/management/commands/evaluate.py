import json
import time

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from infrastructure.jobs import WorkersUnreachable
from judges.selectors import UnknownJudge
from judges.services import judge_config_for
from metrics.models import EvaluationJob, GoldPolicy, parse_gold_policy
from metrics.selectors.jobs_and_scores import job_progress
from metrics.services.evaluation import create_evaluation, start_evaluation
from trajectories.models import AgentRun


def _parameter(text: str) -> tuple[str, object]:
    key, sep, raw = text.partition("=")
    if not sep:
        raise CommandError(f"--param {text!r}: expected key=value, e.g. tau=0.8")
    try:
        value = json.loads(raw)
    except json.JSONDecodeError:
        value = raw
    return key.strip(), value


class Command(BaseCommand):
    help = "Evaluate runs against gold steps with a judge; --wait shows progress until the job ends."

    def add_arguments(self, parser):
        parser.add_argument("--run", action="append", required=True, help="Run name (repeatable)")
        parser.add_argument("--judge", help="JudgeConfig name, or a backend: exact, offline, openai "
                                            "(default: the default judge)")
        parser.add_argument("--gold", default=GoldPolicy.REFERENCE,
                            help="reference | best | each | annotator=NAME (default: reference; "
                                 "'approved' and 'annotator:NAME' are accepted as older spellings)")
        parser.add_argument("--param", action="append", default=[], help="tau=0.7, window=1, ordered=false")
        parser.add_argument("--wait", action="store_true", help="Wait for the job, with a progress bar")

    def handle(self, *args, run, judge, gold, param, wait, **options):
        runs = []
        for name in run:
            try:
                runs.append(AgentRun.objects.get(name=name))
            except AgentRun.DoesNotExist:
                raise CommandError(f"run {name!r} does not exist") from None
        try:
            judge_config = judge_config_for(judge)
        except UnknownJudge as exc:
            raise CommandError(f"--judge: {exc}") from None
        try:
            policy, annotator_name = parse_gold_policy(gold)
        except ValueError as exc:
            raise CommandError(f"--gold: {exc}") from None
        annotator = None
        if policy == GoldPolicy.ANNOTATOR:
            annotator = get_user_model().objects.filter(username=annotator_name).first()
            if annotator is None:
                raise CommandError(f"--gold {gold!r}: no user named {annotator_name!r}")
        try:
            job = create_evaluation(runs=runs, judge_config=judge_config, gold_policy=policy,
                                    gold_annotator=annotator, parameters=dict(map(_parameter, param)))
        except ValueError as exc:
            raise CommandError(str(exc)) from None
        try:
            start_evaluation(job)
        except WorkersUnreachable as exc:
            if not wait:
                raise CommandError(str(exc)) from None
            self.stderr.write(str(exc))
        self.stdout.write(f"evaluation #{job.pk}: {job.total} trajectories, judge {judge_config.name}, "
                          f"parameters {job.parameters}")
        if wait:
            self._wait(job)

    def _wait(self, job: EvaluationJob):
        with tqdm(total=job.total, unit="traj", file=self.stdout) as bar:
            while True:
                job.refresh_from_db()
                bar.update(job.done + job.failed - bar.n)
                if job.status not in (EvaluationJob.Status.PENDING, EvaluationJob.Status.RUNNING):
                    break
                time.sleep(0.5)
        progress = job_progress(job)
        self.stdout.write(f"evaluation #{job.pk} {job.status}: {progress['done']} scored, {progress['failed']} failed")
        if job.status != EvaluationJob.Status.DONE:
            raise CommandError(f"evaluation #{job.pk} ended {job.status}")
