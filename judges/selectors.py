"""Reads: steps as the judge sees them, judges by name, human-reviewed decisions and the trust they earn."""

import hashlib
from collections import defaultdict
from dataclasses import dataclass, replace
from decimal import Decimal

from django.conf import settings
from django.db import DatabaseError
from django.db.models import Sum

from . import questions as q
from .backends import BACKENDS
from .calibration import DEFAULT_THRESHOLD, Trust, trust
from .models import JudgeBackend, JudgeConfig, JudgeDecision
from .parsing import parse_node, resolved_element
from .steps import JudgeStep


def judge_step_from_gold(gold_step) -> JudgeStep:
    """A GoldStep: its free text plus whatever structure the annotator gave."""
    return JudgeStep(
        text=gold_step.text,
        action_type=gold_step.action_type,
        element_role=gold_step.element_role,
        element_name=gold_step.element_name,
        value=gold_step.value,
    )


def judge_step_from_agent(step) -> JudgeStep:
    """A Step: the executed action, its parsed parts and its element's role and name.

    The element is resolved here, once: every question the step enters (step matching, both
    neighbouring repetitions, the plan) would otherwise search its accessibility tree again.
    """
    role, name = parse_node(step.element_label) if step.element_label else ("", "")
    judge_step = JudgeStep(
        text=step.action,
        action_type=step.action_type,
        element_id=step.element_id,
        element_role=role,
        element_name=name,
        value=step.action_value,
        observation=step.observation,
        url=step.url,
    )
    if role or name:
        return judge_step
    role, name = resolved_element(judge_step)
    return replace(judge_step, element_role=role, element_name=name)


def decision_outputs(decision_ids: list[int | None]) -> dict[int, dict]:
    """The structured outputs of decisions, by id (an element a judge named, ...)."""
    ids = [pk for pk in decision_ids if pk is not None]
    return dict(JudgeDecision.objects.filter(pk__in=ids).values_list("pk", "output")) if ids else {}


class UnknownJudge(ValueError):
    """A judge name that is neither a JudgeConfig nor a backend; the message lists the known ones."""


def judge_config_named(name: str) -> JudgeConfig | None:
    """A JudgeConfig by name; a backend's own name also works before any row exists (unsaved).

    Every command, page and API call that takes a judge name resolves it here (through
    `judge_config_required`, or `judges.services.judge_config_for` when the judge is stored).
    """
    try:
        config = JudgeConfig.objects.filter(name=name).first()
    except DatabaseError:
        config = None  # no database yet: the built-in backends still work
    if config is None and name in BACKENDS:
        config = JudgeConfig(name=name, backend=name, model=settings.JUDGE_MODEL if name == "openai" else "")
    return config


def judge_names() -> list[str]:
    """The names a judge can be given by: the configurations, then the backends without one."""
    try:
        stored = list(JudgeConfig.objects.order_by("name").values_list("name", flat=True))
    except DatabaseError:
        stored = []
    return stored + [name for name in sorted(BACKENDS) if name not in stored]


def judge_config_required(name: str) -> JudgeConfig:
    """`judge_config_named`, or UnknownJudge naming the judges there are."""
    config = judge_config_named(name)
    if config is None:
        raise UnknownJudge(f"no judge named {name!r}; known: {', '.join(judge_names())}")
    return config


@dataclass(frozen=True)
class ReviewedPair:
    """A judge's score and a human's verdict on the same question."""

    kind: str
    score: float
    human_score: float
    decision_id: int
    reviewed_decision_id: int
    inputs_hash: str = ""


def reviewed_pairs(backend: str | None = None, model: str | None = None, kind: str | None = None):
    """Judge scores against human verdicts, by (backend, model).

    A human verdict applies to its question whichever judge it was given on, so a judge is
    compared on every reviewed question it has answered (its latest decision per question).
    Whole-trajectory decisions are left out: their score only sums up a matrix.
    """
    humans = {}
    for decision in JudgeDecision.objects.filter(human_score__isnull=False).order_by("reviewed_at", "pk").only(
        "inputs_hash", "human_score"
    ):
        humans[decision.inputs_hash] = decision
    judged = JudgeDecision.objects.filter(score__isnull=False).exclude(kind=q.TRAJECTORY_MATCH)
    if backend:
        judged = judged.filter(backend=backend)
    if model is not None:
        judged = judged.filter(model=model)
    if kind:
        judged = judged.filter(kind=kind)
    latest = {}
    hashes = list(humans)
    for start in range(0, len(hashes), 500):
        chunk = judged.filter(inputs_hash__in=hashes[start : start + 500]).order_by("created_at", "pk").only(
            "kind", "score", "backend", "model", "inputs_hash"
        )
        for decision in chunk:
            latest[(decision.backend, decision.model, decision.inputs_hash)] = decision
    groups = defaultdict(list)
    for (backend_name, model_name, inputs_hash), decision in latest.items():
        human = humans[inputs_hash]
        groups[(backend_name, model_name)].append(
            ReviewedPair(decision.kind, decision.score, human.human_score, decision.pk, human.pk, inputs_hash)
        )
    return dict(groups)


# One question in AUDIT_SAMPLE_RATE belongs to the audit's random sample, chosen by a hash of the
# question alone: its confirmations estimate a judge's agreement without the bias of hard cases.
AUDIT_SAMPLE_RATE = 5


def audit_sample_key(inputs_hash: str) -> str:
    """The question's place in the random sample's order (a hash, independent of any score)."""
    return hashlib.sha256(f"audit-sample:{inputs_hash}".encode()).hexdigest()


def in_audit_sample(inputs_hash: str) -> bool:
    return int(audit_sample_key(inputs_hash)[:8], 16) % AUDIT_SAMPLE_RATE == 0


def judge_trust(*, kind: str | None = None, tau: float = DEFAULT_THRESHOLD) -> dict[tuple[str, str], Trust]:
    """Per (backend, model): its agreement with the human verdicts and the kappa interval."""
    return {
        key: trust([(pair.score, pair.human_score) for pair in pairs], tau)
        for key, pairs in sorted(reviewed_pairs(kind=kind).items())
    }


def judge_trust_by_kind(tau: float = DEFAULT_THRESHOLD) -> dict[tuple[str, str, str], Trust]:
    """Per (backend, model, kind of question): what `judge_trust` says of one kind."""
    grouped = defaultdict(list)
    for (backend, model), pairs in reviewed_pairs().items():
        for pair in pairs:
            grouped[(backend, model, pair.kind)].append((pair.score, pair.human_score))
    return {key: trust(pairs, tau) for key, pairs in grouped.items()}


@dataclass
class DecisionUsage:
    """Requests and cost of the decisions behind a pass's answers, as they were when made (cached ones
    included): what a job over many trajectories reports having spent."""

    calls: int = 0
    cost: Decimal = Decimal(0)

    def add_usage(self, decision_ids: set[int]) -> None:
        usage = JudgeDecision.objects.filter(pk__in=decision_ids).aggregate(calls=Sum("calls"), cost=Sum("cost"))
        self.calls += usage["calls"] or 0
        self.cost += usage["cost"] or Decimal(0)


def require_openai_backend(config: JudgeConfig, purpose: str) -> None:
    """ValueError unless the config asks an OpenAI-compatible endpoint, which `purpose` needs."""
    if config.backend != JudgeBackend.OPENAI:
        raise ValueError(f"judge {config.name!r} uses the {config.backend} backend; {purpose} needs an "
                         "OpenAI-compatible one (backend openai)")
