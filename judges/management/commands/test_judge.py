"""Test a judge configuration's endpoint, as its page and `POST /api/judge-configs/<id>/test/` do."""

from django.core.management.base import BaseCommand, CommandError

from judges.endpoint_checks import run_endpoint_test
from judges.selectors import UnknownJudge, judge_config_required
from judges.services import judge_config_for


class Command(BaseCommand):
    help = ("Ask a judge's endpoint one small question of each kind and print, per question, whether its answer "
            "parsed, the structured-output mode that worked, latency, tokens and cost. The report is kept: "
            "evaluations and outcome jobs refuse to start on a configuration whose last test failed.")

    def add_arguments(self, parser):
        parser.add_argument("config", help="JudgeConfig name, or a backend: exact, offline, openai")

    def handle(self, *args, config, **options):
        try:
            judge_config_required(config)
        except UnknownJudge as exc:
            raise CommandError(str(exc)) from None
        judge = judge_config_for(config)
        try:
            report = run_endpoint_test(judge)
        except ValueError as error:
            raise CommandError(f"judge {config!r}: {error}") from None
        self.stdout.write(f"judge {judge.name}: backend {report['backend']}, model {report['model'] or '-'}")
        for row in report["questions"]:
            if not row["asked"]:
                self.stdout.write(f"- {row['question']:<20} {row['error']}")
                continue
            outcome = "parsed" if row["parsed"] else f"FAILED {row['error']}"
            self.stdout.write(
                f"- {row['question']:<20} {outcome:<8} mode {row['structured_output'] or '-':<18} "
                f"{row['latency_ms']:>6} ms {row['prompt_tokens'] + row['completion_tokens']:>6} tokens "
                f"${row['cost']}  repairs {row['repairs']}")
        if not report["ok"]:
            raise CommandError(f"the endpoint test failed: {report['error']}")
        self.stdout.write("every question parsed")
