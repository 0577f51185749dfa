"""The judge every metric asks: one interface over the backends, with a decision store.

Every answer is a JudgeDecision row. Asking again costs nothing: decisions are looked up by
cache key (backend, model, prompt version, kind, inputs) before any backend is asked, and a
human verdict on the same question (same `inputs_hash`, whichever judge it was given on) wins
over any judge's score. A failed decision is stored with its error and asked again next time.
"""

import hashlib
import json
import os
from collections import defaultdict
from dataclasses import dataclass
from itertools import islice

from django.conf import settings
from django.db import connection, models, transaction
from django.utils import timezone
from django.utils.text import slugify

from infrastructure import counters
from infrastructure.fields import copy_new_rows

from . import outcome_questions
from . import questions as q
from .answers import Answer, StepScores, Verdict
from .backends import Backend, BackendSpec, make_backend
from .models import JudgeBackend, JudgeConfig, JudgeDecision, StructuredOutputMode
from .selectors import judge_config_required
from .steps import JudgeStep

LOOKUP_CHUNK = 500
VERDICTS_PAGE = 1000


def backend_spec(config: JudgeConfig) -> BackendSpec:
    """A JudgeConfig with settings filled in: endpoint, key, and the request options."""
    options = dict(config.options or {})
    if config.backend == "openai":
        options = {
            "timeout": settings.JUDGE_TIMEOUT,
            "max_retries": settings.JUDGE_MAX_RETRIES,
            "concurrency": settings.JUDGE_CONCURRENCY,
            "requests_per_minute": settings.JUDGE_REQUESTS_PER_MINUTE,
            "redis_url": settings.REDIS_URL,
            "prices": settings.JUDGE_PRICES,
            **options,
        }
    api_key = os.environ.get(config.api_key_env, "") if config.api_key_env else settings.OPENAI_API_KEY
    return BackendSpec(
        backend=config.backend,
        model=config.model,
        base_url=config.base_url or settings.OPENAI_BASE_URL,
        api_key=api_key,
        temperature=config.temperature,
        options=options,
        mode_memory=StoredModes(),
    )


class StoredModes:
    """The structured-output modes endpoints accepted, kept in the database (`StructuredOutputMode`)."""

    def recall(self, endpoint: str, model: str) -> str | None:
        return StructuredOutputMode.objects.filter(base_url=endpoint, model=model).values_list(
            "mode", flat=True).first()

    def remember(self, endpoint: str, model: str, mode: str) -> None:
        StructuredOutputMode.objects.update_or_create(base_url=endpoint, model=model, defaults={"mode": mode})


def settings_judge_config() -> JudgeConfig:
    """The judge the settings describe (JUDGE_BACKEND, JUDGE_MODEL, OPENAI_BASE_URL), unsaved."""
    backend = settings.JUDGE_BACKEND
    model = settings.JUDGE_MODEL if backend == "openai" else ""
    return JudgeConfig(name=slugify(f"{backend}-{model}" if model else backend), backend=backend, model=model)


def default_judge_config() -> JudgeConfig:
    """The row marked default, else the settings' judge, saved so that jobs can refer to it."""
    marked = JudgeConfig.objects.filter(is_default=True).first()
    if marked:
        return marked
    wanted = settings_judge_config()
    config, _ = JudgeConfig.objects.get_or_create(
        name=wanted.name, defaults={"backend": wanted.backend, "model": wanted.model}
    )
    return config


def judge_config_for(name: str | None) -> JudgeConfig:
    """The stored judge a job is made with: the named configuration, or a backend's own name
    (`exact`, `offline`, `openai`: its row is made on first use), or the default when no name
    is given. Raises UnknownJudge naming the known judges."""
    if not name:
        return default_judge_config()
    config = judge_config_required(name)
    if config.pk is None:
        config, _ = JudgeConfig.objects.get_or_create(
            name=config.name, defaults={"backend": config.backend, "model": config.model}
        )
    return config


def get_judge(config: JudgeConfig | None = None) -> "Judge":
    """The judge of a config; None = the default row if one is marked, else the settings' judge."""
    if config is None:
        config = JudgeConfig.objects.filter(is_default=True).first() or settings_judge_config()
    return Judge(make_backend(backend_spec(config)))


def backend_and_model(config: JudgeConfig) -> tuple[str, str]:
    """The backend and model a config's decisions are stored under (e.g. offline, rules+minilm)."""
    backend = make_backend(backend_spec(config))
    return backend.name, backend.model


def judge_identity(config: JudgeConfig) -> str:
    """Backend, model and the versions of every prompt or rule set: what a score depends on."""
    backend = make_backend(backend_spec(config))
    versions = {kind: backend.version(kind) for kind in q.KINDS}
    digest = hashlib.sha256(json.dumps([config.temperature, versions], sort_keys=True).encode()).hexdigest()
    return f"{backend.name}:{backend.model}:{digest[:12]}"


@dataclass(frozen=True)
class _Asked:
    question: q.Question
    cache_key: str
    version: str


class Judge:
    """Answers the questions of METRICS.md, storing and reusing a JudgeDecision for each.

    `settle(questions)` decides a whole batch of work at once (one lookup, one ask of the
    backend, one write) and keeps the decisions and every human verdict in memory; the question
    methods then read them from there. A settled judge is meant for that batch only (e.g. one
    chunk of an evaluation job): it does not see verdicts given after `settle`.
    """

    def __init__(self, backend: Backend):
        self.backend = backend
        self._settled: dict[str, JudgeDecision] = {}
        self._asked: dict[int, _Asked] = {}
        self._humans: dict[str, JudgeDecision] | None = None
        self._pair_verdicts = True

    def settle(self, questions: list[q.Question]) -> None:
        """Decide the questions now, in bulk, for the question methods that follow."""
        self._humans = _human_verdicts()
        self._pair_verdicts = any(d.kind == q.STEP_MATCH for d in self._humans.values())
        self._settled, self._asked = {}, {}
        asked = [self._key(question) for question in questions]
        self._asked = {id(item.question): item for item in asked}
        self._settled = {
            item.cache_key: own for item, (own, _) in zip(asked, self._lookup(asked)) if own is not None
        }

    # --- the questions -----------------------------------------------------------------------

    def step_scores(self, gold: list[JudgeStep], agent: list[JudgeStep]) -> StepScores:
        """One whole-trajectory question; human verdicts on single pairs replace their cells."""
        if not gold or not agent:
            return StepScores(matrix=[[] for _ in gold], decision_ids=[])
        return self.step_scores_of(q.trajectory_match(gold, agent))

    def step_scores_of(self, question: q.Question) -> StepScores:
        """`step_scores` of a question built by `questions.trajectory_match` (both sides non-empty)."""
        gold_count, agent_count = len(question.inputs["gold"]), len(question.inputs["agent"])
        [(decision, _)] = self._decisions([question])
        if decision.error:
            return StepScores([[None] * agent_count for _ in range(gold_count)], [decision.pk], decision.error)
        matrix = [list(row) for row in decision.output["matrix"]]
        decision_ids = [decision.pk]
        for (j, i), human in self._cell_verdicts(question, gold_count, agent_count):
            matrix[j][i] = human.human_score
            decision_ids.append(human.pk)
        return StepScores(matrix=matrix, decision_ids=decision_ids)

    def step_equivalent(self, gold: JudgeStep, agent: JudgeStep) -> Verdict:
        return self.verdicts([q.step_match(gold, agent)])[0]

    def step_equivalent_pairs(self, pairs: list[tuple[JudgeStep, JudgeStep]]) -> list[Verdict]:
        """Many (gold step, agent step) questions at once: one lookup, parallel asks, one write."""
        return self.verdicts([q.step_match(gold, agent) for gold, agent in pairs])

    def repeat_scores(self, agent: list[JudgeStep]) -> list[Verdict]:
        """Element k: is agent step k+1 a repeat of step k."""
        return self.verdicts(q.repetitions(agent))

    def requirement_scores(self, intent: str, answer: str, requirements: list[str]) -> list[Verdict]:
        return self.verdicts(q.requirements(intent, answer, requirements))

    def grounded_relevant(self, intent: str, answer: str, observations: list[str]) -> tuple[Verdict, Verdict]:
        """Observations are cut by the rule in `judges.questions` (most recent pages first)."""
        grounded, relevant = self.verdicts(q.answer_quality(intent, answer, observations))
        return grounded, relevant

    def fuzzy_answer(self, intent: str, answer: str, reference: str) -> Verdict:
        return self.verdicts([q.fuzzy_answer(intent, answer, reference)])[0]

    def verdicts(self, questions: list[q.Question]) -> list[Verdict]:
        """One verdict per question built by `judges.questions` (not whole-trajectory ones)."""
        return [_verdict(human or own) for own, human in self._decisions(questions)]

    # --- decisions ---------------------------------------------------------------------------

    def _decisions(self, questions: list[q.Question]) -> list[tuple[JudgeDecision | None, JudgeDecision | None]]:
        """For each question, this judge's decision and the latest human verdict, if any."""
        return self._lookup([self._key(question) for question in questions])

    def answered(self, questions: list[q.Question]) -> list[JudgeDecision | None]:
        """The decision each question would be answered with now without asking the backend (a
        human verdict first, as `verdicts`), None where the backend would be asked: what asking
        them will cost, told before it is asked."""
        asked = [self._key(question) for question in questions]
        stored, reviewed = self._known(asked)
        return [None if self._unanswered(item, stored, reviewed)
                else reviewed.get(item.question.inputs_hash) or stored[item.cache_key] for item in asked]

    def _lookup(self, asked: list[_Asked]) -> list[tuple[JudgeDecision | None, JudgeDecision | None]]:
        stored, reviewed = self._known(asked)
        missing = {}
        for item in asked:
            if self._unanswered(item, stored, reviewed):
                missing.setdefault(item.cache_key, item)
        if missing:
            answers = self.backend.answer([item.question for item in missing.values()])
            stored.update(self._store(list(missing.values()), answers, stored))
        return [(stored.get(item.cache_key), reviewed.get(item.question.inputs_hash)) for item in asked]

    def _known(self, asked: list[_Asked]) -> tuple[dict[str, JudgeDecision], dict[str, JudgeDecision]]:
        """This judge's stored decisions by cache key, and the latest human verdicts by inputs hash."""
        keys = {a.cache_key for a in asked}
        stored = {key: self._settled[key] for key in keys & self._settled.keys()}
        if len(stored) < len(keys):
            stored.update(_in_chunks(_decision_rows(), "cache_key", keys - stored.keys()))
        reviewed = self._humans if self._humans is not None else _reviewed([a.question.inputs_hash for a in asked])
        return stored, reviewed

    def _unanswered(self, item: _Asked, stored: dict[str, JudgeDecision], reviewed: dict[str, JudgeDecision]) -> bool:
        """The backend is asked only for questions with no usable decision of its own and no human
        verdict; a whole-trajectory question is always answered, its matrix being needed. A
        settled question is not asked again, even when it failed: the next batch retries it.
        """
        decision = stored.get(item.cache_key)
        settled = item.question.inputs_hash in reviewed and item.question.kind != q.TRAJECTORY_MATCH
        return not settled and item.cache_key not in self._settled and (decision is None or bool(decision.error))

    def _cell_verdicts(self, question: q.Question, gold_count: int, agent_count: int):
        """Human verdicts on single pairs of a whole-trajectory question, by (gold, agent) index."""
        if not self._pair_verdicts:
            return []
        cells = {
            (j, i): q.cell(question.inputs, j, i).inputs_hash for j in range(gold_count) for i in range(agent_count)
        }
        reviewed = self._humans if self._humans is not None else _reviewed(list(cells.values()))
        return [(cell, reviewed[inputs_hash]) for cell, inputs_hash in cells.items() if inputs_hash in reviewed]

    def _key(self, question: q.Question) -> _Asked:
        settled = self._asked.get(id(question))
        if settled is not None and settled.question is question:
            return settled
        version = self.backend.version(question.kind)
        return _Asked(question, question.cache_key(self.backend.name, self.backend.model, version), version)

    def _store(self, items: list[_Asked], answers: list[Answer], stored: dict) -> dict[str, JudgeDecision]:
        """Write new decisions and overwrite failed ones, in one transaction."""
        rows = [self._row(item, answer) for item, answer in zip(items, answers)]
        retried = [row for row in rows if row.cache_key in stored]
        for row in retried:
            row.pk, row.updated_at = stored[row.cache_key].pk, timezone.now()
        with transaction.atomic():
            # Another worker may have stored the same decision meanwhile: its row is kept.
            new = [r for r in rows if r.pk is None]
            if connection.vendor == "postgresql":
                inserted = _copy_new_decisions(new, {item.cache_key: item.question.canonical_inputs for item in items})
            else:
                JudgeDecision.objects.bulk_create(new, ignore_conflicts=True)
                inserted = {}
            if retried:
                JudgeDecision.objects.bulk_update(retried, DECISION_FIELDS)
            counters.count_many(_decision_events(rows))
        others = {row.cache_key for row in rows} - inserted.keys()
        return {**inserted, **_in_chunks(_decision_rows(), "cache_key", others)}

    def _row(self, item: _Asked, answer: Answer) -> JudgeDecision:
        return JudgeDecision(
            kind=item.question.kind,
            cache_key=item.cache_key,
            inputs_hash=item.question.inputs_hash,
            inputs=item.question.inputs,
            score=None if answer.error else answer.score,
            output=answer.output,
            rationale=answer.rationale,
            backend=self.backend.name,
            model=self.backend.model,
            prompt_version=item.version,
            prompt_tokens=answer.prompt_tokens,
            completion_tokens=answer.completion_tokens,
            cost=answer.cost,
            latency_ms=answer.latency_ms,
            calls=answer.calls,
            repairs=answer.repairs,
            structured_output=answer.structured_output,
            coerced=list(answer.coerced),
            error=answer.error,
        )


def _decision_events(rows: list[JudgeDecision]) -> list[tuple[str, dict, float]]:
    """What `/metrics` counts of the decisions the judge has just made, added up per counter
    here: a chunk makes hundreds of decisions, and each event's labels cost a JSON encoding."""
    totals = defaultdict(float)
    for row in rows:
        judge = (("backend", row.backend), ("model", row.model))
        totals["judge_decisions", (*judge, ("kind", row.kind), ("outcome", "error" if row.error else "ok"))] += 1
        totals["judge_latency_seconds_count", judge] += 1
        totals["judge_latency_seconds_sum", judge] += (row.latency_ms or 0) / 1000
        totals["judge_tokens", (*judge, ("direction", "input"))] += row.prompt_tokens or 0
        totals["judge_tokens", (*judge, ("direction", "output"))] += row.completion_tokens or 0
        totals["judge_cost_usd", judge] += float(row.cost or 0)
    return [(name, dict(labels), amount) for (name, labels), amount in totals.items()]


DECISION_FIELDS = [
    "score", "output", "rationale", "prompt_tokens", "completion_tokens", "cost", "latency_ms", "calls", "repairs",
    "structured_output", "coerced", "error", "updated_at",
]


_COPIED = [field for field in JudgeDecision._meta.concrete_fields if not field.primary_key]
# JSON columns encoded here; the inputs come encoded already, as their questions hashed them.
_ENCODED = {field.attname for field in _COPIED if isinstance(field, models.JSONField)} - {"inputs"}


def _copy_new_decisions(rows: list[JudgeDecision], inputs_json: dict[str, str]) -> dict[str, JudgeDecision]:
    """PostgreSQL: insert new decisions by COPY, skipping those stored meanwhile (ten or so per
    trajectory, with observations in their inputs). `inputs_json`: each row's inputs as JSON text
    by cache key (the questions' own). Returns the inserted rows by cache key, with their ids and
    their output as read back from the database would be."""
    if not rows:
        return {}
    now = timezone.now()
    by_key = {row.cache_key: row for row in rows}

    def values():
        for row in rows:
            row.created_at = row.updated_at = now
            texts = {name: json.dumps(getattr(row, name), cls=JudgeDecision._meta.get_field(name).encoder)
                     for name in _ENCODED}
            texts["inputs"] = inputs_json[row.cache_key]
            yield [texts[field.attname] if field.attname in texts else getattr(row, field.attname)
                   for field in _COPIED]
            for name in _ENCODED:
                setattr(row, name, json.loads(texts[name]))

    inserted = copy_new_rows(JudgeDecision, _COPIED, values(), returning=("id", "cache_key"))
    for pk, key in inserted:
        by_key[key].pk = pk
        by_key[key]._state.adding = False
    return {key: by_key[key] for _, key in inserted}


def _decision_rows():
    """Decisions with only what a verdict is made of (the inputs are what was hashed)."""
    return JudgeDecision.objects.only(
        "kind", "cache_key", "inputs_hash", "score", "output", "rationale", "error", "human_score", "human_note"
    )


def _in_chunks(queryset, field: str, values: set[str]) -> dict[str, JudgeDecision]:
    """Rows whose `field` is in `values`, by that field (the last row wins when several match)."""
    found, values = {}, iter(values)
    while chunk := list(islice(values, LOOKUP_CHUNK)):
        for decision in queryset.filter(**{f"{field}__in": chunk}):
            found[getattr(decision, field)] = decision
    return found


def _verdict_rows():
    """Decisions with a human verdict, oldest verdict first (so that the latest one wins)."""
    return _decision_rows().filter(human_score__isnull=False).order_by("reviewed_at", "pk")


def _reviewed(inputs_hashes: list[str]) -> dict[str, JudgeDecision]:
    """The latest human verdict per question."""
    return _in_chunks(_verdict_rows(), "inputs_hash", set(inputs_hashes))


def _human_verdicts() -> dict[str, JudgeDecision]:
    """Every human verdict, the latest per question: they are few, people give them. Asked for with
    a LIMIT first, which has PostgreSQL walk their partial index even while it knows nothing of the
    table (one a job is filling, autovacuum not yet round): else it reads every decision, per chunk."""
    verdicts = list(_verdict_rows()[:VERDICTS_PAGE])
    if len(verdicts) == VERDICTS_PAGE:
        verdicts = list(_verdict_rows())
    return {decision.inputs_hash: decision for decision in verdicts}


def _verdict(decision: JudgeDecision) -> Verdict:
    if decision.human_score is not None:
        return Verdict(decision.human_score, decision.human_note or decision.rationale, decision.pk)
    return Verdict(decision.score, decision.rationale, decision.pk, decision.error)


# --- human review ----------------------------------------------------------------------------


@transaction.atomic
def review_decision(decision: JudgeDecision, *, human_score: float, reviewer, note: str = "") -> JudgeDecision:
    """A reviewer's verdict on a decision; it replaces the judge's score wherever the question recurs."""
    if not 0 <= human_score <= 1:
        raise ValueError(f"human_score must be from 0 to 1, not {human_score}")
    decision.human_score = human_score
    decision.human_note = note
    decision.reviewed_by = reviewer
    decision.reviewed_at = timezone.now()
    decision.save(update_fields=["human_score", "human_note", "reviewed_by", "reviewed_at", "updated_at"])
    return decision


@transaction.atomic
def review_step_pair(
    decision: JudgeDecision, gold_number: int, agent_number: int, *, human_score: float, reviewer, note: str = ""
) -> JudgeDecision:
    """A verdict on one cell of a whole-trajectory decision, kept as a reviewed pair decision.

    The pair's score is the cell's; later `step_scores` of any trajectory with this pair use it.
    """
    if decision.kind != q.TRAJECTORY_MATCH:
        raise ValueError(f"decision {decision.pk} is a {decision.kind} decision, not a trajectory match")
    if decision.error:
        raise ValueError(f"decision {decision.pk} failed ({decision.error}); it has no cells to review")
    gold, agent = decision.inputs["gold"], decision.inputs["agent"]
    if not (1 <= gold_number <= len(gold) and 1 <= agent_number <= len(agent)):
        raise ValueError(f"no pair gold {gold_number} / agent {agent_number} in decision {decision.pk}")
    question = q.cell(decision.inputs, gold_number - 1, agent_number - 1)
    pair, _ = JudgeDecision.objects.get_or_create(
        cache_key=question.cache_key(decision.backend, decision.model, decision.prompt_version),
        defaults={
            "kind": q.STEP_MATCH,
            "inputs_hash": question.inputs_hash,
            "inputs": question.inputs,
            "score": decision.output["matrix"][gold_number - 1][agent_number - 1],
            "rationale": f"Cell of trajectory decision {decision.pk}.",
            "output": {"trajectory_decision": decision.pk},
            "backend": decision.backend,
            "model": decision.model,
            "prompt_version": decision.prompt_version,
        },
    )
    return review_decision(pair, human_score=human_score, reviewer=reviewer, note=note)


# --- judge configurations ------------------------------------------------------------------


class JudgeConfigInUse(Exception):
    """Evaluation jobs refer to the configuration, so it stays."""


@transaction.atomic
def save_judge_config(config: JudgeConfig) -> JudgeConfig:
    """Store a configuration once its backend can be built from it; marking it the default
    unmarks the previous default. Raises ValueError naming what is wrong."""
    try:
        make_backend(backend_spec(config))
    except TypeError as exc:  # an option of the wrong type, e.g. a list for `timeout`
        raise ValueError(f"options: {exc}") from None
    options = config.options or {}
    outcome_questions.OutcomeOptions.of(options)
    if options.get("judge_outcomes") and config.backend != JudgeBackend.OPENAI:
        raise ValueError("options.judge_outcomes: the outcome judge needs an OpenAI-compatible judge (backend openai)")
    if config.is_default:
        JudgeConfig.objects.filter(is_default=True).exclude(pk=config.pk).update(is_default=False)
    stored = JudgeConfig.objects.filter(pk=config.pk).values(*ENDPOINT_FIELDS).first() if config.pk else None
    if stored and any(stored[name] != getattr(config, name) for name in ENDPOINT_FIELDS):
        config.last_test = {}  # a test of another endpoint or model says nothing of this one
    config.save()
    return config


# What a test of a configuration's endpoint depends on.
ENDPOINT_FIELDS = ("backend", "model", "base_url", "api_key_env", "temperature", "options")


@transaction.atomic
def delete_judge_config(config: JudgeConfig) -> None:
    used = [f"{count} {kind} job(s)" for kind, count in
            (("evaluation", config.evaluation_jobs.count()), ("outcome", config.outcome_jobs.count())) if count]
    if used:
        raise JudgeConfigInUse(f"judge {config.name!r} was used by {' and '.join(used)}; it cannot be deleted")
    config.delete()
