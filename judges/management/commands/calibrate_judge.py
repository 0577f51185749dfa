"""How well a judge agrees with humans, and the threshold at which it agrees best."""

from django.core.management.base import BaseCommand, CommandError

from judges.backends import make_backend
from judges.calibration import (
    BOOTSTRAP_RESAMPLES,
    BOOTSTRAP_SEED,
    DEFAULT_THRESHOLD,
    best_threshold,
    format_interval,
    trust,
)
from judges.labelled import SPLITS, LabelledPairsError, load_labelled_pairs
from judges.selectors import UnknownJudge, judge_config_required, reviewed_pairs
from judges.services import Judge, backend_spec


def _percent(value) -> str:
    return "-" if value is None else f"{value:.1%}"


class Command(BaseCommand):
    help = (
        "Report a judge's agreement with human-confirmed decisions (accuracy, precision, recall, Cohen's kappa) "
        "and the threshold that maximises it. With --pairs, agreement with a labelled pairs file instead."
    )

    def add_arguments(self, parser):
        parser.add_argument("--judge", required=True, help="JudgeConfig name, or a backend: exact, offline, openai")
        parser.add_argument("--kind", help="Only decisions of this kind (e.g. step_match)")
        parser.add_argument("--threshold", type=float, default=DEFAULT_THRESHOLD, help="Judge score counted as yes")
        parser.add_argument("--pairs", help="Labelled pairs file (e.g. fixtures/judge_pairs.json): ask the judge on it")
        parser.add_argument("--split", choices=SPLITS,
                            help="With --pairs: only that part of a split file (fixtures/judge_pairs_mutated.json)")

    def handle(self, *args, judge, kind, threshold, pairs, split, **options):
        try:
            config = judge_config_required(judge)
        except UnknownJudge as exc:
            raise CommandError(f"--judge: {exc}") from None
        backend = make_backend(backend_spec(config))
        if pairs:
            groups = self._labelled(Judge(backend), pairs, split)
        else:
            reviewed = reviewed_pairs(backend.name, backend.model, kind).get((backend.name, backend.model), [])
            if not reviewed:
                raise CommandError(
                    f"no human-confirmed decisions to compare {backend.name}:{backend.model} with; review some "
                    "decisions, or use --pairs fixtures/judge_pairs.json"
                )
            groups = {"all": [(p.score, p.human_score) for p in reviewed]}
            for name in sorted({p.kind for p in reviewed}):
                groups[name] = [(p.score, p.human_score) for p in reviewed if p.kind == name]
        self.stdout.write(f"judge {config.name}: backend {backend.name}, model {backend.model or '-'}")
        width = max(16, *(len(name) for name in groups))
        self.stdout.write(f"{'':<{width}} {'n':>5} {'accuracy':>9} {'precision':>9} {'recall':>9} {'kappa':>7} "
                          f"{'kappa 95% CI':>16}")
        for name, scored in groups.items():
            judged = trust(scored, threshold)
            result = judged.agreement
            kappa = "-" if result.kappa is None else f"{result.kappa:.3f}"
            self.stdout.write(
                f"{name:<{width}} {result.count:>5} {_percent(result.accuracy):>9} {_percent(result.precision):>9} "
                f"{_percent(result.recall):>9} {kappa:>7} {format_interval(judged.interval):>16}"
            )
        self.stdout.write(f"kappa 95% CI: percentile bootstrap, {BOOTSTRAP_RESAMPLES} resamples, seed {BOOTSTRAP_SEED}")
        if not pairs:
            verdict = trust(groups["all"], threshold)
            self.stdout.write("trusted" if verdict.trusted else f"not trusted yet: {'; '.join(verdict.concerns)}")
        best = best_threshold(groups["all"], threshold)
        self.stdout.write(
            f"at threshold {threshold:g}; best threshold {best.threshold:.3f}: accuracy {_percent(best.accuracy)}, "
            f"kappa {'-' if best.kappa is None else f'{best.kappa:.3f}'}"
        )

    @staticmethod
    def _labelled(judge: Judge, path: str, split: str | None) -> dict[str, list[tuple[float, float]]]:
        try:
            labelled = load_labelled_pairs(path)
        except LabelledPairsError as error:
            raise CommandError(str(error)) from None
        if split:
            labelled = [pair for pair in labelled if pair.split == split]
            if not labelled:
                raise CommandError(f"{path} has no pairs in the {split!r} split")
        verdicts = judge.step_equivalent_pairs([(p.gold, p.agent) for p in labelled])
        failed = [p.id for p, v in zip(labelled, verdicts) if v.score is None]
        if failed:
            raise CommandError(f"the judge failed on {len(failed)} pairs: {', '.join(failed[:10])}")
        groups = {"all": []}
        for pair, verdict in zip(labelled, verdicts):
            scored = (verdict.score, 1.0 if pair.equivalent else 0.0)
            groups["all"].append(scored)
            if pair.split and not split:
                groups.setdefault(pair.split, []).append(scored)
            else:
                groups.setdefault(pair.group or "ungrouped", []).append(scored)
        return groups
