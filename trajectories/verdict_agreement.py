"""Verdicts on whether an agent succeeded at a task, and how far their sources agree.

A task in a run can carry up to three verdicts, each named by its source:
- `harness`: what the agent's own harness reported (imported with the run, or a results-only file);
- `check`: the platform's offline check, WebArena's string/url match run on the stored trajectory;
- `human`: the consensus of human graders (1 correct, 0.5 partially correct, 0 incorrect).
Plus `combined`, METRICS.md's definition of task success: the harness's verdict when known, else
the offline check's. Django-free, so pages, exports and tests read the same definitions.
"""

import itertools
import statistics
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass

HARNESS = "harness"
CHECK = "check"
HUMAN = "human"
COMBINED = "combined"
SOURCES = (HARNESS, CHECK, HUMAN)
SOURCE_LABELS = {
    COMBINED: "harness, else offline check",
    HARNESS: "harness",
    CHECK: "offline check",
    HUMAN: "human graders",
}
# A named source (`VerdictSource`) beside the built-in ones: "source:<its id>".
NAMED_PREFIX = "source:"
GRADE_LABELS = {1.0: "correct", 0.5: "partially correct", 0.0: "incorrect"}
GRADE_VALUES = tuple(sorted(GRADE_LABELS))
# A results-only run whose verdicts are all equal over this many tasks is more likely scraped wrongly than real.
UNIFORM_WARNING_MIN_TASKS = 100


def named_source(source_id: int) -> str:
    return f"{NAMED_PREFIX}{source_id}"


def named_source_id(key: str) -> int | None:
    """The `VerdictSource` id a source key names; None for a built-in source."""
    number = key.removeprefix(NAMED_PREFIX)
    return int(number) if key.startswith(NAMED_PREFIX) and number.isdigit() else None


def site_group(row: Mapping) -> str:
    """A task's site, or its sites joined by "+" for a multi-site task (its own group)."""
    return "+".join(sorted(row.get("sites") or [])) or "unknown"


def grade_value(raw) -> float:
    """A grade as one of 0, 0.5, 1; raises ValueError naming what was read otherwise."""
    try:
        value = float(str(raw).strip())
    except ValueError:
        raise ValueError(f"grade {raw!r} is not a number (1 correct, 0.5 partially correct, 0 incorrect)") from None
    if value not in GRADE_LABELS:
        raise ValueError(f"grade {raw!r} is not 1 (correct), 0.5 (partially correct) or 0 (incorrect)")
    return value


def consensus(grades: Iterable[float]) -> float | None:
    """The graders' mean grade; None without grades."""
    grades = list(grades)
    return statistics.fmean(grades) if grades else None


def consensus_success(mean: float | None) -> bool | None:
    """Success by consensus: more correct than not (a mean above 0.5). A mean of exactly 0.5
    (one partially correct, or one correct and one incorrect) is not a success."""
    return None if mean is None else mean > 0.5


@dataclass(frozen=True)
class Verdicts:
    """The verdicts of one task in one run; None where a source has not spoken."""

    harness: bool | None = None
    check: bool | None = None
    human: float | None = None  # consensus mean grade
    graders: int = 0

    @property
    def human_success(self) -> bool | None:
        return consensus_success(self.human)

    @property
    def combined(self) -> bool | None:
        return self.harness if self.harness is not None else self.check

    def success(self, source: str) -> bool | None:
        if source == HUMAN:
            return self.human_success
        if source not in (HARNESS, CHECK, COMBINED):
            raise ValueError(f"success source: unknown {source!r}; expected one of {', '.join(SOURCE_LABELS)}")
        return getattr(self, source)

    def known(self) -> dict[str, bool]:
        """{source: success} for the sources that have spoken."""
        return {source: value for source in SOURCES if (value := self.success(source)) is not None}

    def disagreements(self) -> list[tuple[str, str]]:
        """Pairs of sources (in SOURCES order) whose verdicts differ."""
        known = self.known()
        return [(a, b) for a, b in itertools.combinations(SOURCES, 2) if a in known and b in known
                and known[a] != known[b]]


def pair_name(a: str, b: str) -> str:
    return f"{a}-{b}"


def uniform_verdicts(values: Sequence[bool | None]) -> bool | None:
    """The one verdict every task got when there are many tasks and all agree (a likely scraping
    error rather than a real 0 % or 100 %); None otherwise."""
    known = [value for value in values if value is not None]
    return uniform_counts(sum(known), len(known))


def uniform_counts(passed: int, count: int) -> bool | None:
    """`uniform_verdicts` from the number of passes among `count` verdicts."""
    if count >= UNIFORM_WARNING_MIN_TASKS and passed in (0, count):
        return passed == count
    return None


# Agreement ----------------------------------------------------------------------------------

def _ordinal_distance(ranks: Sequence[float], totals: Mapping[float, float]):
    """Krippendorff's ordinal metric: the squared count of pairable values from c to k, halving the ends."""
    def delta(c, k):
        if c == k:
            return 0.0
        low, high = sorted((c, k))
        between = sum(totals[g] for g in ranks if low <= g <= high)
        return (between - (totals[low] + totals[high]) / 2) ** 2
    return delta


def krippendorff_alpha_ordinal(units: Iterable[Sequence[float]]) -> float | None:
    """Krippendorff's alpha with the ordinal metric.

    `units` holds, per graded item, the values its graders gave (missing marks left out). Units
    with fewer than two values cannot be paired and are dropped. None when fewer than two
    pairable values remain or every value is the same (no disagreement is expected, alpha is
    undefined). Follows Krippendorff, "Computing Krippendorff's Alpha-Reliability" (2011).
    """
    coincidences: Counter = Counter()
    for values in units:
        values = list(values)
        m = len(values)
        if m < 2:
            continue
        for i, j in itertools.permutations(range(m), 2):
            coincidences[(values[i], values[j])] += 1 / (m - 1)
    totals: Counter = Counter()
    for (c, _k), weight in coincidences.items():
        totals[c] += weight
    n = sum(totals.values())
    ranks = sorted(totals)
    if n < 2 or len(ranks) < 2:
        return None
    delta = _ordinal_distance(ranks, totals)
    observed = sum(weight * delta(c, k) for (c, k), weight in coincidences.items())
    expected = sum(totals[c] * totals[k] * delta(c, k) for c in ranks for k in ranks)
    return 1 - (n - 1) * observed / expected


@dataclass(frozen=True)
class PairAgreement:
    """Two graders over the items both graded: the share where their marks are equal."""

    first: str
    second: str
    items: int
    agreed: int

    @property
    def percent(self) -> float | None:
        return 100 * self.agreed / self.items if self.items else None


def pairwise_agreement(marks: Mapping[str, Mapping[object, float]]) -> list[PairAgreement]:
    """Every pair of graders (names sorted); `marks` is {grader: {item: value}}."""
    pairs = []
    for first, second in itertools.combinations(sorted(marks), 2):
        shared = set(marks[first]) & set(marks[second])
        agreed = sum(1 for item in shared if marks[first][item] == marks[second][item])
        pairs.append(PairAgreement(first, second, len(shared), agreed))
    return pairs


@dataclass(frozen=True)
class BinaryAgreement:
    """An automatic verdict against the human consensus (the reference: success is the positive class)."""

    true_positive: int
    false_positive: int
    false_negative: int
    true_negative: int

    @property
    def items(self) -> int:
        return self.true_positive + self.false_positive + self.false_negative + self.true_negative

    @property
    def accuracy(self) -> float | None:
        return (self.true_positive + self.true_negative) / self.items if self.items else None

    @property
    def precision(self) -> float | None:
        said_yes = self.true_positive + self.false_positive
        return self.true_positive / said_yes if said_yes else None

    @property
    def recall(self) -> float | None:
        really_yes = self.true_positive + self.false_negative
        return self.true_positive / really_yes if really_yes else None

    @property
    def f1(self) -> float | None:
        precision, recall = self.precision, self.recall
        if precision is None or recall is None or precision + recall == 0:
            return None
        return 2 * precision * recall / (precision + recall)

    @property
    def npv(self) -> float | None:
        """Negative predictive value: how often the automatic verdict's "failed" is right."""
        said_no = self.true_negative + self.false_negative
        return self.true_negative / said_no if said_no else None

    @property
    def tnr(self) -> float | None:
        """True negative rate: the share of real failures the automatic verdict calls failures."""
        really_no = self.true_negative + self.false_positive
        return self.true_negative / really_no if really_no else None

    @property
    def kappa(self) -> float | None:
        """Cohen's kappa; None when chance agreement is total (both sides said one thing throughout)."""
        n = self.items
        if not n:
            return None
        observed = (self.true_positive + self.true_negative) / n
        auto_yes = (self.true_positive + self.false_positive) / n
        human_yes = (self.true_positive + self.false_negative) / n
        chance = auto_yes * human_yes + (1 - auto_yes) * (1 - human_yes)
        return None if chance == 1 else (observed - chance) / (1 - chance)

    def to_dict(self) -> dict:
        return {**asdict(self), "items": self.items, "accuracy": self.accuracy, "precision": self.precision,
                "recall": self.recall, "f1": self.f1, "npv": self.npv, "tnr": self.tnr, "kappa": self.kappa}


def binary_agreement(pairs: Iterable[tuple[bool | None, bool | None]]) -> BinaryAgreement:
    """(automatic verdict, human consensus) pairs; pairs where either is unknown are left out."""
    counts = Counter((auto, human) for auto, human in pairs if auto is not None and human is not None)
    return BinaryAgreement(true_positive=counts[(True, True)], false_positive=counts[(True, False)],
                           false_negative=counts[(False, True)], true_negative=counts[(False, False)])
