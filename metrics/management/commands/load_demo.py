"""`manage.py load_demo`: every app's demo data (tasks, runs, gold, an evaluation of each run), so it lives in
metrics, the app on top of the others."""

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management.base import BaseCommand
from django.db import transaction

from accounts.roles import ADMIN, ANNOTATOR, REVIEWER
from annotation.services.gold_import import import_gold_file
from judges.services import default_judge_config
from metrics.models import EvaluationJob
from metrics.services.evaluation import create_evaluation, start_evaluation
from trajectories.services.ingest import import_paths
from trajectories.services.runs import get_or_create_run, read_run_description
from trajectories.services.tasks import import_task_file

DEMO = settings.BASE_DIR / "fixtures"


class Command(BaseCommand):
    help = (
        "Load the demo data: all 812 WebArena tasks, sample agent runs, gold trajectories, and an "
        "evaluation of each run with the default judge. Idempotent."
    )

    def add_arguments(self, parser):
        parser.add_argument("--user", default="demo", help="Demo admin account to create if missing")
        parser.add_argument("--password", default="demo", help="Its password (only set when it is created)")

    def handle(self, *args, user, password, **options):
        self.stdout.write(str(import_task_file(DEMO / "webarena" / "test.raw.json")))
        demo_user = self._demo_user(user, password)
        # Every role can be tried from the login page, with the same password.
        for name, role in (("demo-annotator", ANNOTATOR), ("demo-reviewer", REVIEWER)):
            self._role_account(name, role, password)
        runs = []
        for folder in sorted(p for p in (DEMO / "demo" / "runs").iterdir() if p.is_dir()):
            run = get_or_create_run(folder.name, user=demo_user, **read_run_description(folder))
            report = import_paths([folder], run)
            self.stdout.write(f"run {run.name}: {report.summary()}")
            runs.append(run)
        self.stdout.write(str(import_gold_file(DEMO / "demo" / "gold.json", annotator="demo-annotator",
                                               status="approved", create_annotator=True)))
        for run in runs:
            if EvaluationJob.objects.filter(runs=run).exists():
                continue
            job = create_evaluation(runs=[run], judge_config=default_judge_config(), user=demo_user)
            start_evaluation(job)
            job.refresh_from_db()
            self.stdout.write(f"evaluation #{job.pk} of {run.name}: {job.get_status_display().lower()}, "
                              f"{job.done} scored, {job.failed} failed")

    @transaction.atomic
    def _demo_user(self, username: str, password: str):
        User = get_user_model()
        account, created = User.objects.get_or_create(
            username=username, defaults={"is_staff": True, "is_superuser": True}
        )
        if created:
            account.set_password(password)
            account.save()
            self.stdout.write(f"created admin account {username!r} with password {password!r}")
        account.groups.add(Group.objects.get(name=ADMIN))
        return account

    @transaction.atomic
    def _role_account(self, username: str, role: str, password: str) -> None:
        """An account with one role; its password is set when it has none (never changed once set)."""
        account, _ = get_user_model().objects.get_or_create(username=username)
        if not account.password or not account.has_usable_password():
            account.set_password(password)
            account.save()
            self.stdout.write(f"{role} account {username!r} has the password {password!r}")
        account.groups.add(Group.objects.get(name=role))
