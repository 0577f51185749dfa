"""Evaluation jobs: plan the (trajectory, gold) units, score them in chunks, keep progress.

A chunk is scored as a batch: its units are loaded in a few queries, the judge settles all
their questions at once, and their scores are written in one transaction. Every step is
idempotent, so a job survives killed workers: scores are upserted, progress is recounted from
the stored scores rather than incremented, and a job sent again (config/jobs.py's sweeper)
re-queues whatever has no score yet.
"""

import gc
import json
import logging
from collections import defaultdict
from contextlib import contextmanager
from dataclasses import dataclass, field

from django.core.exceptions import PermissionDenied
from django.db import connection, transaction
from django.db.models import Count, Max, Q, Sum
from django.utils import timezone

from annotation.models import GoldStatus, GoldStep, GoldTrajectory
from infrastructure import counters, jobs
from infrastructure.fields import copy_new_rows
from judges.backends.base import EndpointUnreachable
from judges.endpoint_checks import check_choosable
from judges.models import JudgeDecision
from judges.outcome_judging import outcome_jobs_of_evaluation
from judges.services import get_judge, judge_identity
from metrics.models import EvaluationJob, GoldPolicy, TrajectoryScore
from metrics.permissions import may_use_gold_policy
from trajectories.models import Step, Trajectory

from .aggregates import store_aggregates
from .scoring import (
    SCORE_FIELDS,
    JudgeFailed,
    Parameters,
    Scoring,
    inputs_fingerprint,
    score_trajectory,
    unit_inputs,
)

log = logging.getLogger(__name__)

CHUNK_SIZE = 50
UNFINISHED = (EvaluationJob.Status.PENDING, EvaluationJob.Status.RUNNING)


@dataclass(frozen=True)
class Unit:
    trajectory_id: int
    gold_id: int | None


def _gold_candidates(job: EvaluationJob, task_ids) -> dict[int, list[GoldTrajectory]]:
    golds = GoldTrajectory.objects.filter(task_id__in=task_ids, cannot_complete=False)
    if job.gold_policy == GoldPolicy.REFERENCE:
        golds = golds.filter(is_reference=True)
    elif job.gold_policy == GoldPolicy.BEST:
        golds = golds.filter(status=GoldStatus.APPROVED)
    elif job.gold_policy == GoldPolicy.EACH:
        golds = golds.filter(status__in=[GoldStatus.SUBMITTED, GoldStatus.APPROVED])
    else:
        golds = golds.filter(annotator=job.gold_annotator).exclude(status=GoldStatus.DRAFT)
    by_task: dict[int, list[GoldTrajectory]] = {}
    for gold in golds.order_by("task_id", "-updated_at", "-pk"):
        by_task.setdefault(gold.task_id, []).append(gold)
    return by_task


def plan_units(job: EvaluationJob) -> list[Unit]:
    """One unit per trajectory and gold: the reference gold (or the named annotator's newest), or
    every candidate for the 'each' and 'best' policies ('best' keeps one when the job finishes).

    A task without gold is still scored: its gold-based metrics are null.
    """
    trajectories = list(Trajectory.objects.filter(run__in=job.runs.all()).values_list("pk", "task_id"))
    golds = _gold_candidates(job, {task_id for _, task_id in trajectories})
    units = []
    for trajectory_id, task_id in trajectories:
        candidates = golds.get(task_id, [])
        if job.gold_policy not in (GoldPolicy.EACH, GoldPolicy.BEST):
            candidates = candidates[:1]
        units.extend(Unit(trajectory_id, gold.pk) for gold in candidates)
        if not candidates:
            units.append(Unit(trajectory_id, None))
    return units


def _best_first(score: TrajectoryScore) -> tuple:
    """Higher Step Success, then more matched gold steps, then the older gold."""
    return (score.error == "", score.step_success if score.step_success is not None else -1.0,
            score.matched_steps or 0, -(score.gold_id or 0))


def keep_best_scores(job: EvaluationJob) -> None:
    """'best' policy: of a trajectory's scores against every approved gold, keep the best one and
    record in its details which golds it was chosen from."""
    by_trajectory = defaultdict(list)
    for score in job.scores.select_related("gold__annotator").defer("details"):
        by_trajectory[score.trajectory_id].append(score)
    dropped = []
    for scores in by_trajectory.values():
        if len(scores) < 2:
            continue
        scores.sort(key=_best_first, reverse=True)
        best, others = scores[0], scores[1:]
        details = TrajectoryScore.objects.values_list("details", flat=True).get(pk=best.pk) or {}
        details["gold_choice"] = [
            {"gold_id": score.gold_id, "annotator": score.gold.annotator.get_username() if score.gold else None,
             "version": score.gold.version if score.gold else None, "step_success": score.step_success,
             "chosen": score is best}
            for score in scores
        ]
        TrajectoryScore.objects.filter(pk=best.pk).update(details=details)
        dropped.extend(score.pk for score in others)
    for start in range(0, len(dropped), 500):
        TrajectoryScore.objects.filter(pk__in=dropped[start:start + 500]).delete()


@transaction.atomic
def create_evaluation(*, runs, judge_config, gold_policy=GoldPolicy.REFERENCE, gold_annotator=None,
                      parameters=None, user=None) -> EvaluationJob:
    """`user` is who asks (None: the operator's command), held to `may_use_gold_policy`."""
    if not runs:
        raise ValueError("choose at least one run to evaluate")
    if user is not None and not may_use_gold_policy(user, gold_policy):
        raise PermissionDenied(f"evaluating against the {gold_policy!r} gold policy needs the reviewer role; "
                               "everyone else evaluates against the reference gold")
    if gold_policy == GoldPolicy.ANNOTATOR and gold_annotator is None:
        raise ValueError("the 'annotator' gold policy needs the annotator's name")
    if gold_policy != GoldPolicy.ANNOTATOR and gold_annotator is not None:
        raise ValueError(f"a gold annotator is chosen only with the 'annotator' gold policy, not {gold_policy!r}")
    params = Parameters.from_dict(parameters)
    check_choosable(judge_config)
    jobs.check_job_limit(EvaluationJob, user)
    job = EvaluationJob.objects.create(
        judge_config=judge_config, gold_policy=gold_policy, gold_annotator=gold_annotator,
        parameters=params.to_dict(), created_by=user,
    )
    job.runs.set(runs)
    job.total = len(plan_units(job))
    job.save(update_fields=["total"])
    outcome_jobs_of_evaluation(runs, judge_config, created_by=user)
    return job


def start_evaluation(job: EvaluationJob) -> None:
    """Queue the job once the caller commits; WorkersUnreachable if the broker is down (the job is kept)."""
    jobs.enqueue(job)


def pending_chunks(job: EvaluationJob) -> list[list[tuple[int, int | None]]]:
    """Units without a current score, in chunks.

    A re-run skips units whose inputs are unchanged, that no human verdict came after and that no
    judge question failed for.
    """
    units = plan_units(job)
    params = Parameters.from_dict(job.parameters)
    identity = judge_identity(job.judge_config)
    trajectories = Trajectory.objects.select_related("task").in_bulk([u.trajectory_id for u in units])
    golds = GoldTrajectory.objects.in_bulk([u.gold_id for u in units if u.gold_id])
    existing = {
        (score.trajectory_id, score.gold_id): score
        for score in job.scores.only("trajectory_id", "gold_id", "inputs_hash", "error", "failed_questions",
                                     "computed_at")
    }
    # A human verdict may concern any question a score asked; cached decisions make the recheck free.
    last_review = JudgeDecision.objects.aggregate(last=Max("reviewed_at"))["last"]
    todo = []
    for unit in units:
        score = existing.get((unit.trajectory_id, unit.gold_id))
        fingerprint = inputs_fingerprint(trajectories[unit.trajectory_id], golds.get(unit.gold_id), params, identity)
        overruled_since = score is not None and last_review is not None and last_review > score.computed_at
        # A partly scored unit is scored again: its failed questions are asked again, the others are cached.
        if (score is None or score.error or score.failed_questions or score.inputs_hash != fingerprint
                or overruled_since):
            todo.append((unit.trajectory_id, unit.gold_id))
    return [todo[i : i + CHUNK_SIZE] for i in range(0, len(todo), CHUNK_SIZE)]


def begin(job: EvaluationJob) -> list[list[tuple[int, int | None]]]:
    """Mark the job running and return its outstanding work; finishes at once when there is none."""
    with transaction.atomic():
        job = EvaluationJob.objects.select_for_update().get(pk=job.pk)
        if job.status == EvaluationJob.Status.CANCELLED:
            return []
        # Units that no longer exist (a deleted trajectory) must not linger as stale scores.
        current = {(u.trajectory_id, u.gold_id) for u in plan_units(job)}
        stale = [s.pk for s in job.scores.all() if (s.trajectory_id, s.gold_id) not in current]
        job.scores.filter(pk__in=stale).delete()
        job.status = EvaluationJob.Status.RUNNING
        job.total = len(current)
        job.started_at = job.started_at or timezone.now()
        job.finished_at = None
        job.heartbeat_at = timezone.now()
        job.save(update_fields=["status", "total", "started_at", "finished_at", "heartbeat_at"])
    chunks = pending_chunks(job)
    if not chunks:
        refresh_progress(job)
    return chunks


def _load(units: list[tuple[int, int | None]]) -> dict[tuple[int, int | None], tuple]:
    """(trajectory, steps, gold, gold steps) of each unit, in four queries for the whole chunk.

    A unit whose trajectory or gold was deleted since the job was planned is left out.
    """
    trajectories = Trajectory.objects.select_related("task").in_bulk({t for t, _ in units})
    golds = GoldTrajectory.objects.in_bulk({g for _, g in units if g is not None})
    steps, gold_steps = defaultdict(list), defaultdict(list)
    for step in Step.objects.filter(trajectory_id__in=list(trajectories)).order_by("trajectory_id", "index"):
        steps[step.trajectory_id].append(step)
    for step in GoldStep.objects.filter(gold_id__in=list(golds)).order_by("gold_id", "index"):
        gold_steps[step.gold_id].append(step)
    return {
        (t, g): (trajectories[t], steps[t], golds.get(g), gold_steps[g] if g is not None else [])
        for t, g in units
        if t in trajectories and (g is None or g in golds)
    }


@dataclass
class _Outcome:
    """What is stored for one unit: its scoring, or the error that stopped it."""

    scoring: Scoring = field(default_factory=Scoring)
    error: str = ""


def _failure(exc: Exception, trajectory_id: int) -> _Outcome:
    if isinstance(exc, (JudgeFailed, ValueError)):
        return _Outcome(error=str(exc))
    log.error("scoring trajectory %s failed", trajectory_id, exc_info=exc)
    return _Outcome(error=f"{type(exc).__name__}: {exc}")


@contextmanager
def _collecting_only_new_objects():
    """Scoring a chunk allocates many objects, so the cyclic garbage collector runs often; the
    objects that existed before (Django, the judge's models and caches) are left out of its scans.
    A process that froze objects itself keeps them frozen."""
    frozen_before = gc.get_freeze_count()
    gc.freeze()
    try:
        yield
    finally:
        if not frozen_before:
            gc.unfreeze()


def evaluate_units(job: EvaluationJob, judge, units: list[tuple[int, int | None]]) -> None:
    """Score units together: load them, settle all their judge questions at once, store the scores
    in one transaction. A unit's failure is stored on its own row and does not stop the others."""
    with _collecting_only_new_objects():
        _evaluate_units(job, judge, units)


def _evaluate_units(job: EvaluationJob, judge, units: list[tuple[int, int | None]]) -> None:
    params = Parameters.from_dict(job.parameters)
    loaded = _load(units)
    inputs, outcomes = {}, {}
    for unit, (trajectory, steps, gold, gold_steps) in loaded.items():
        try:
            inputs[unit] = unit_inputs(trajectory, steps, gold, gold_steps,
                                       sees_screenshots=judge.backend.sees_screenshots)
        except Exception as exc:  # noqa: BLE001 - one trajectory's failure must not fail the chunk
            outcomes[unit] = _failure(exc, unit[0])
    try:
        judge.settle([question for prepared in inputs.values() for question in prepared.questions.all()])
    except EndpointUnreachable:
        raise
    except Exception:  # noqa: BLE001 - then each unit asks on its own and records its own error
        log.exception("settling the judge questions of %d units failed", len(inputs))
    for unit, prepared in inputs.items():
        try:
            outcomes[unit] = _Outcome(score_trajectory(prepared, judge, params))
        except EndpointUnreachable:
            raise
        except Exception as exc:  # noqa: BLE001 - one trajectory's failure must not fail the chunk
            outcomes[unit] = _failure(exc, unit[0])
    identity = judge_identity(job.judge_config)
    fingerprints = {
        unit: inputs_fingerprint(loaded[unit][0], loaded[unit][2], params, identity) for unit in outcomes
    }
    _store_scores(job, outcomes, fingerprints)


def _store_scores(job: EvaluationJob, outcomes: dict, fingerprints: dict) -> None:
    """Insert or update the units' score rows and their decision links, in one transaction.

    Rows keep their ids. A row another worker inserted meanwhile (the same chunk queued twice
    after a restart) is kept: both were computed from the same inputs.
    """
    now = timezone.now()
    values = {}
    for unit, outcome in outcomes.items():
        fields = {**dict.fromkeys(SCORE_FIELDS), "success_source": "", "check_source": "", "outcome_status": "",
                  "outcome_reason": ""}
        fields.update({k: v for k, v in outcome.scoring.values.items() if v is not None})
        failed = outcome.scoring.failed_questions
        details = {**outcome.scoring.details, "failed_questions": sorted(set(failed.values()))} if failed else \
            outcome.scoring.details
        values[unit] = {**fields, "details": details, "error": outcome.error, "failed_questions": len(failed),
                        "inputs_hash": fingerprints[unit], "computed_at": now}
    # No ordering: the model's default one joins the job, run and task tables.
    scores = TrajectoryScore.objects.filter(job=job, trajectory_id__in={t for t, _ in outcomes}).order_by()

    def stored_ids() -> dict:
        return {(t, g): pk for pk, t, g in scores.values_list("pk", "trajectory_id", "gold_id") if (t, g) in values}

    with transaction.atomic():
        ids = stored_ids()
        # One UPDATE per row: Django's bulk_update builds a CASE per column and row, far slower here.
        for unit, pk in ids.items():
            TrajectoryScore.objects.filter(pk=pk).update(**values[unit])
        new = {unit: fields for unit, fields in values.items() if unit not in ids}
        if new:
            inserted = _insert_scores(job, new)
            ids.update(inserted)
            if len(inserted) < len(new):
                ids = stored_ids()
        counters.count_many(("trajectory_scores", {"outcome": _counted_outcome(outcome)}, 1)
                            for outcome in outcomes.values())
        links = TrajectoryScore.decisions.through
        links.objects.filter(trajectoryscore_id__in=ids.values()).delete()
        _link_decisions([(ids[unit], decision_id) for unit, outcome in outcomes.items()
                         for decision_id in sorted(outcome.scoring.decision_ids)])


def _counted_outcome(outcome: _Outcome) -> str:
    return "error" if outcome.error else "partial" if outcome.scoring.failed_questions else "ok"


_SCORE_COLUMNS = [field for field in TrajectoryScore._meta.concrete_fields if not field.primary_key]


def _insert_scores(job: EvaluationJob, new: dict) -> dict:
    """New score rows (their column values by unit), skipping any another worker stored meanwhile;
    returns the ids of those inserted by unit, on PostgreSQL (by COPY: a chunk's rows with their
    details as one INSERT cost more to build than to store), none elsewhere (Django's bulk insert)."""
    if connection.vendor != "postgresql":
        TrajectoryScore.objects.bulk_create([TrajectoryScore(job=job, trajectory_id=t, gold_id=g, **fields)
                                             for (t, g), fields in new.items()], ignore_conflicts=True)
        return {}
    encoder = TrajectoryScore._meta.get_field("details").encoder

    def rows():
        for (t, g), fields in new.items():
            row = {**fields, "job_id": job.pk, "trajectory_id": t, "gold_id": g,
                   "details": json.dumps(fields["details"], cls=encoder)}
            yield [row[column.attname] for column in _SCORE_COLUMNS]

    inserted = copy_new_rows(TrajectoryScore, _SCORE_COLUMNS, rows(), returning=("id", "trajectory_id", "gold_id"))
    return {(t, g): pk for pk, t, g in inserted}


def _link_decisions(pairs: list[tuple[int, int]]) -> None:
    """(score id, decision id) link rows; on PostgreSQL as two arrays in one statement (ten or so
    per trajectory: Django's bulk insert spent more on building its SQL than the database on it)."""
    links = TrajectoryScore.decisions.through
    if connection.vendor != "postgresql":
        links.objects.bulk_create([links(trajectoryscore_id=score, judgedecision_id=decision)
                                   for score, decision in pairs], ignore_conflicts=True)
        return
    quote = connection.ops.quote_name
    score, decision = (quote(links._meta.get_field(name).column) for name in ("trajectoryscore", "judgedecision"))
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {quote(links._meta.db_table)} ({score}, {decision}) "
            "SELECT * FROM unnest(%s::bigint[], %s::bigint[]) ON CONFLICT DO NOTHING",
            [[pair[0] for pair in pairs], [pair[1] for pair in pairs]],
        )


def evaluate_chunk(job_id: int, units: list[tuple[int, int | None]]) -> None:
    job = EvaluationJob.objects.select_related("judge_config").get(pk=job_id)
    if job.status in (EvaluationJob.Status.CANCELLED, EvaluationJob.Status.FAILED):
        return
    try:
        evaluate_units(job, get_judge(job.judge_config), units)
    except EndpointUnreachable as error:
        fail_evaluation(job, str(error))
        return
    refresh_progress(job)


def fail_evaluation(job: EvaluationJob, reason: str) -> bool:
    """Stop an unfinished job for a reason that holds for every unit left (the judge's endpoint is
    down): its chunks still queued then do nothing, and the job page says why."""
    return _stop(job, EvaluationJob.Status.FAILED, errors=[reason])


def _stop(job: EvaluationJob, status: str, **fields) -> bool:
    """Finish an unfinished job early with `status`; False when it had already finished."""
    updated = EvaluationJob.objects.filter(pk=job.pk, status__in=UNFINISHED).update(
        status=status, finished_at=timezone.now(), **fields)
    if updated:
        job.refresh_from_db()
        jobs.record_finished(job)
    return bool(updated)


def refresh_progress(job: EvaluationJob) -> EvaluationJob:
    """Recount progress from the stored scores and finish the job when every unit has one."""
    with transaction.atomic():
        job = EvaluationJob.objects.select_for_update().get(pk=job.pk)
        _count_scores(job)
        job.heartbeat_at = timezone.now()
        fields = ["done", "failed", "partly_scored", "failed_questions", "heartbeat_at"]
        finished = job.status == EvaluationJob.Status.RUNNING and job.done + job.failed >= job.total
        if finished:
            if job.gold_policy == GoldPolicy.BEST:
                keep_best_scores(job)
                _count_scores(job)
                job.total = job.done + job.failed
                fields.append("total")
            store_aggregates(job)
            job.status = EvaluationJob.Status.DONE
            job.finished_at = timezone.now()
            fields += ["status", "finished_at"]
            jobs.record_finished(job)
        job.save(update_fields=fields)
    return job


def _count_scores(job: EvaluationJob) -> None:
    """The job's counts from its stored scores: done (partly scored included), failed, partly scored."""
    partly = Q(error="", failed_questions__gt=0)
    counts = job.scores.aggregate(failed=Count("pk", filter=~Q(error="")), done=Count("pk", filter=Q(error="")),
                                  partly=Count("pk", filter=partly),
                                  questions=Sum("failed_questions", filter=partly, default=0))
    job.failed, job.done = counts["failed"], counts["done"]
    job.partly_scored, job.failed_questions = counts["partly"], counts["questions"]


def cancel_evaluation(job: EvaluationJob) -> bool:
    return _stop(job, EvaluationJob.Status.CANCELLED)


def rerun_evaluation(job: EvaluationJob, user=None) -> EvaluationJob:
    """Re-evaluate after gold edits or overruled decisions, returning the job that runs.

    An unfinished job is sent again. A finished one is kept as history: the re-run is a new job
    that replaces it, starting from its scores, so that only changed units are recomputed.
    """
    check_choosable(job.judge_config)
    if job.status in UNFINISHED:
        EvaluationJob.objects.filter(pk=job.pk).update(status=EvaluationJob.Status.PENDING, finished_at=None)
        start_evaluation(job)
        return job
    with transaction.atomic():
        rerun = EvaluationJob.objects.create(
            judge_config=job.judge_config, gold_policy=job.gold_policy, gold_annotator=job.gold_annotator,
            parameters=job.parameters, created_by=user or job.created_by, replaces=job, total=job.total,
        )
        rerun.runs.set(job.runs.all())
        _carry_scores(job, rerun)
        start_evaluation(rerun)
    return rerun


def _carry_scores(source: EvaluationJob, target: EvaluationJob) -> None:
    """Copy the source's scores and their decision links, keeping when each was computed (a human
    verdict given since then still makes its unit be scored again)."""
    scores = list(source.scores.order_by("pk"))
    links = defaultdict(list)
    through = TrajectoryScore.decisions.through
    for score_id, decision_id in through.objects.filter(trajectoryscore__job=source).values_list(
            "trajectoryscore_id", "judgedecision_id"):
        links[score_id].append(decision_id)
    computed = {score.pk: score.computed_at for score in scores}
    old_ids = [score.pk for score in scores]
    for score in scores:
        score.pk, score.job = None, target
    TrajectoryScore.objects.bulk_create(scores)
    new_ids = {(t, g): pk for t, g, pk in target.scores.values_list("trajectory_id", "gold_id", "pk")}
    by_time = defaultdict(list)
    for old_id, score in zip(old_ids, scores):
        new_id = new_ids[(score.trajectory_id, score.gold_id)]
        by_time[computed[old_id]].append(new_id)
    for computed_at, ids in by_time.items():  # auto_now stamped them now
        for start in range(0, len(ids), 5000):
            TrajectoryScore.objects.filter(pk__in=ids[start:start + 5000]).update(computed_at=computed_at)
    through.objects.bulk_create([
        through(trajectoryscore_id=new_ids[(score.trajectory_id, score.gold_id)], judgedecision_id=decision_id)
        for old_id, score in zip(old_ids, scores) for decision_id in links[old_id]
    ])
