"""Send a few questions with known answers through a judge backend and show what came back."""

import time

from django.core.management.base import BaseCommand, CommandError

from judges import questions as q
from judges.backends import make_backend
from judges.labelled import DEFAULT_PATH, LabelledPairsError, load_checks, load_labelled_pairs
from judges.selectors import UnknownJudge, judge_config_required
from judges.services import backend_spec


class Command(BaseCommand):
    help = (
        "Verify a judge before a long evaluation: known step pairs and answers go straight to the backend "
        "(no cache), and each answer is printed with its latency, tokens and cost."
    )

    def add_arguments(self, parser):
        parser.add_argument("--judge", required=True, help="JudgeConfig name, or a backend: exact, offline, openai")
        parser.add_argument("--pairs", type=int, default=6, help="How many labelled step pairs to send (default 6)")
        parser.add_argument("--file", default=str(DEFAULT_PATH), help="Labelled pairs file")

    def handle(self, *args, judge, pairs, file, **options):
        try:
            config = judge_config_required(judge)
        except UnknownJudge as exc:
            raise CommandError(f"--judge: {exc}") from None
        try:
            labelled = load_labelled_pairs(file)
            checks = load_checks(file)
        except LabelledPairsError as error:
            raise CommandError(str(error)) from None
        try:
            backend = make_backend(backend_spec(config))
        except ValueError as error:
            raise CommandError(f"judge {judge!r}: {error}") from None
        sample = _balanced(labelled, pairs)
        items = [(f"step pair {p.id}", q.step_match(p.gold, p.agent), 1.0 if p.equivalent else 0.0) for p in sample]
        for check in checks:
            items += [(check.name, question, expected) for question, expected in zip(check.questions, check.expected)]

        self.stdout.write(f"judge {config.name}: backend {backend.name}, model {backend.model or '-'}")
        started = time.monotonic()
        answers = backend.answer([question for _, question, _ in items])
        elapsed = time.monotonic() - started
        failed = agreed = 0
        for (name, question, expected), answer in zip(items, answers):
            label = question.inputs.get("aspect", question.kind)
            if answer.error:
                failed += 1
                outcome = f"ERROR {answer.error}"
            else:
                agreed += (answer.score >= 0.5) == (expected >= 0.5)
                first_line = answer.rationale.splitlines()[0][:90] if answer.rationale else ""
                outcome = f"score {answer.score:.2f} (expected {expected:g})  {first_line}"
            self.stdout.write(
                f"- {label:<16} {name[:60]:<60} {answer.latency_ms:>6} ms {answer.calls} calls "
                f"{answer.prompt_tokens + answer.completion_tokens:>6} tokens ${answer.cost}  {outcome}"
            )
        cost = sum(answer.cost for answer in answers)
        tokens = sum(answer.prompt_tokens + answer.completion_tokens for answer in answers)
        self.stdout.write(
            f"{len(items)} questions in {elapsed:.2f} s: {agreed} agree with the expected answer, {failed} failed; "
            f"{tokens} tokens, ${cost}"
        )
        if failed:
            raise CommandError(f"{failed} of {len(items)} questions failed")


def _balanced(labelled, count: int):
    """`count` pairs, alternating equivalent and not-equivalent ones with a note (the harder ones)."""
    yes = [p for p in labelled if p.equivalent]
    no = [p for p in labelled if not p.equivalent and p.note]
    mixed = [p for pair in zip(yes, no) for p in pair]
    return mixed[:count]
