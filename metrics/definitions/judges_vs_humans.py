"""Every automatic verdict source read against human verdicts, per agent and over all agents.

The numbers AgentRewardBench reports for its judges: accuracy, precision, recall, F1, NPV, TNR
(success is the positive class), Cohen's kappa with a seeded 95 % bootstrap interval, the number
of tasks scored and the number left unsure. The reference on a run's task is the human consensus,
the majority of the human votes on it (one per human source and grader; a tie, or no yes/no vote,
leaves it unsure), or the votes of one chosen human source alone. A task where the reference or the
source is unsure (an "Unsure" annotation, a task marked not executable, a score with no yes/no) is
counted as unsure rather than scored. Where two humans voted on the same task, every such pair is
scored the same way: the human ceiling each judge is read against.
"""

import itertools
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from judges.calibration import confusion_kappa_interval
from trajectories.verdict_agreement import BinaryAgreement, binary_agreement

AUTOMATIC_KINDS = ("harness", "rule_check", "llm_judge", "agent_self_report")
HUMAN_KIND = "human"
HUMAN_CEILING = "human-ceiling"
# Below this many scored tasks a cell's numbers are too uncertain to compare judges by.
MIN_ITEMS = 30
# Numbers that depend on which of two raters is the reference: not defined between two humans.
DIRECTED = ("precision", "recall", "f1", "npv", "tnr")


@dataclass(frozen=True)
class SourceVerdict:
    """One source's (and grader's) verdict on one task of one run."""

    run: str
    task: int | str
    source: str  # the source's key, e.g. "source:12"
    source_label: str
    kind: str  # harness, rule_check, human, llm_judge, agent_self_report
    success: bool | None  # None: unsure, not executable, no yes/no
    label: str = ""
    grader: str = ""


def majority(votes: Iterable[bool | None]) -> bool | None:
    """The side with more yes/no votes; None on a tie or without any."""
    votes = list(votes)
    yes, no = votes.count(True), votes.count(False)
    return None if yes == no else yes > no


@dataclass(frozen=True)
class AgreementCell:
    """A source against the reference over a group of tasks."""

    agreement: BinaryAgreement
    unsure: int
    interval: tuple[float, float] | None
    between_humans: bool = False

    @property
    def items(self) -> int:
        return self.agreement.items

    @property
    def sparse(self) -> bool:
        return self.items < MIN_ITEMS

    @property
    def metrics(self) -> dict:
        """{name: value} of the reported numbers; the directed ones None between two humans."""
        values = self.agreement.to_dict()
        return {
            "n": self.items, "unsure": self.unsure, "accuracy": values["accuracy"],
            **{name: None if self.between_humans else values[name] for name in DIRECTED},
            "kappa": values["kappa"],
            "kappa_low": self.interval[0] if self.interval else None,
            "kappa_high": self.interval[1] if self.interval else None,
        }

    @property
    def rates(self) -> list[tuple[str, float | None]]:
        """(name, value) of the numbers shown as rates, in the order they are shown."""
        metrics = self.metrics
        return [(name, metrics[name]) for name in ("accuracy", *DIRECTED, "kappa")]

    def to_dict(self) -> dict:
        tp, fp, fn, tn = (self.agreement.true_positive, self.agreement.false_positive,
                          self.agreement.false_negative, self.agreement.true_negative)
        return {**self.metrics, "true_positive": tp, "false_positive": fp, "false_negative": fn,
                "true_negative": tn, "sparse": self.sparse}


def agreement_cell(pairs: Sequence[tuple[bool | None, bool | None]], *, between_humans: bool = False,
                   resamples: int | None = None, seed: int | None = None) -> AgreementCell:
    """(source, reference) pairs; a pair with either side unsure counts as unsure."""
    agreement = binary_agreement(pairs)
    options = {name: value for name, value in (("resamples", resamples), ("seed", seed)) if value is not None}
    interval = confusion_kappa_interval(agreement.true_positive, agreement.false_positive,
                                        agreement.true_negative, agreement.false_negative, **options)
    unsure = sum(1 for source, reference in pairs if source is None or reference is None)
    return AgreementCell(agreement, unsure, interval, between_humans)


@dataclass(frozen=True)
class SourceRow:
    """One source (or the human ceiling) per run where it met the reference, and over all runs."""

    source: str
    label: str
    kind: str
    runs: dict[str, AgreementCell]
    overall: AgreementCell


@dataclass(frozen=True)
class JudgesVsHumans:
    reference: str  # "" for the consensus of every human source, else one human source's key
    reference_label: str
    human_sources: tuple[tuple[str, str], ...]  # (key, label) of the human sources there are
    runs: tuple[str, ...]
    ceiling: SourceRow
    sources: tuple[SourceRow, ...]
    # (run, task) items the reference voted on, and those an automatic source spoke on
    human_items: frozenset = field(default_factory=frozenset)
    automatic_items: frozenset = field(default_factory=frozenset)

    def coverage(self, run: str = "") -> tuple[set, set]:
        """The tasks (of one run, or of all) with a reference verdict, and those with an automatic one:
        where they never meet, no source can be read against the humans."""
        def tasks(items):
            return {task for item_run, task in items if not run or item_run == run}

        return tasks(self.human_items), tasks(self.automatic_items)

    def rows(self, run: str = "") -> list[tuple[SourceRow, AgreementCell]]:
        """The ceiling and each source with its cell for one run (those that met the reference there),
        or over all runs."""
        rows = [self.ceiling, *self.sources]
        if not run:
            return [(row, row.overall) for row in rows]
        return [(row, row.runs[run]) for row in rows if run in row.runs]


def _row(source: str, label: str, kind: str, pairs: dict[str, list], **options) -> SourceRow:
    every = [pair for run_pairs in pairs.values() for pair in run_pairs]
    return SourceRow(source, label, kind,
                     runs={run: agreement_cell(run_pairs, **options) for run, run_pairs in sorted(pairs.items())},
                     overall=agreement_cell(every, **options))


def judges_vs_humans(verdicts: Iterable[SourceVerdict], *, reference: str = "", resamples: int | None = None,
                     seed: int | None = None) -> JudgesVsHumans:
    """Every automatic source against the reference; `reference` names one human source (else the
    consensus of all). Raises ValueError when that source is not a human source of these verdicts."""
    verdicts = list(verdicts)
    humans = {verdict.source: verdict.source_label for verdict in verdicts if verdict.kind == HUMAN_KIND}
    if reference and reference not in humans:
        known = ", ".join(f"{key} ({label})" for key, label in sorted(humans.items())) or "there are none"
        raise ValueError(f"{reference!r} is not a human source of these runs (choose one of: {known})")
    votes: dict[tuple[str, str], dict[tuple[str, str], bool | None]] = defaultdict(dict)
    said: dict[str, dict[tuple[str, str], list[bool | None]]] = defaultdict(lambda: defaultdict(list))
    labels: dict[str, tuple[str, str]] = {}
    for verdict in verdicts:
        if verdict.kind == HUMAN_KIND:
            if not reference or verdict.source == reference:
                votes[(verdict.run, verdict.task)][(verdict.source, verdict.grader)] = verdict.success
        elif verdict.kind in AUTOMATIC_KINDS:
            said[verdict.source][(verdict.run, verdict.task)].append(verdict.success)
            labels[verdict.source] = (verdict.source_label, verdict.kind)
    truth = {item: majority(item_votes.values()) for item, item_votes in votes.items()}
    options = {"resamples": resamples, "seed": seed}

    human_pairs: dict[str, list] = defaultdict(list)
    for (run, _task), item_votes in votes.items():
        for (_, first), (_, second) in itertools.combinations(sorted(item_votes.items()), 2):
            human_pairs[run].append((first, second))
    ceiling = _row(HUMAN_CEILING, "Human vs human (ceiling)", HUMAN_KIND, human_pairs, between_humans=True,
                   **options)

    rows = []
    order = {kind: position for position, kind in enumerate(AUTOMATIC_KINDS)}
    for source in sorted(said, key=lambda key: (order[labels[key][1]], labels[key][0].lower(), key)):
        pairs: dict[str, list] = defaultdict(list)
        for (run, task), values in said[source].items():
            if (run, task) in truth:
                pairs[run].append((majority(values), truth[(run, task)]))
        if pairs:
            rows.append(_row(source, *labels[source], pairs, **options))
    return JudgesVsHumans(
        reference=reference, reference_label=humans.get(reference, "human consensus"),
        human_sources=tuple(sorted(humans.items(), key=lambda item: item[1].lower())),
        runs=tuple(sorted({verdict.run for verdict in verdicts})), ceiling=ceiling, sources=tuple(rows),
        human_items=frozenset(votes), automatic_items=frozenset(item for items in said.values() for item in items))
