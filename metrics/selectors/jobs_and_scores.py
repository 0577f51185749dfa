"""Reads of evaluation jobs, scores and aggregates."""

from collections import Counter
from dataclasses import dataclass

from django.db.models import Count, Exists, F, Min, OuterRef, Prefetch, QuerySet
from django.utils import timezone

from annotation.models import GoldStatus, GoldTrajectory
from annotation.permissions import visible_gold
from annotation.selectors import AuditItem
from judges.models import JudgeDecision, OutcomeJob
from metrics.aggregation import METRICS
from metrics.alignment import AgentStepMark, align_side
from metrics.definitions.element_accuracy import MISS_LABELS
from metrics.models import Aggregate, EvaluationJob, GoldPolicy, TrajectoryScore
from metrics.permissions import visible_decisions
from metrics.selectors.leaderboard import METRIC_LABELS
from metrics.services.scoring import NULL_REASONS
from trajectories.models import Task, Trajectory


def job_progress(job: EvaluationJob | OutcomeJob) -> dict:
    """Progress as shown on the job page, in the API and by `evaluate --wait`; an outcome job's likewise."""
    finished = job.done + job.failed
    elapsed = None
    if job.started_at:
        elapsed = ((job.finished_at or timezone.now()) - job.started_at).total_seconds()
    rate = finished / elapsed if elapsed and finished else None
    remaining = max(job.total - finished, 0)
    eta = remaining / rate if rate and job.status == EvaluationJob.Status.RUNNING else None
    return {
        "id": job.pk,
        "status": job.status,
        "total": job.total,
        "done": job.done,
        "failed": job.failed,
        **({"partly_scored": job.partly_scored, "failed_questions": job.failed_questions}
           if isinstance(job, EvaluationJob) else {}),
        "remaining": remaining,
        "percent": round(100 * finished / job.total, 1) if job.total else 100.0,
        "rate_per_second": round(rate, 2) if rate else None,
        "eta_seconds": round(eta) if eta is not None else None,
        "started_at": job.started_at,
        "finished_at": job.finished_at,
    }


def scores_with_context() -> QuerySet[TrajectoryScore]:
    """Scores with their run, task and judge decision ids loaded, in run and task order."""
    return (
        TrajectoryScore.objects.select_related("trajectory__run", "trajectory__task", "gold__annotator")
        .prefetch_related(Prefetch("decisions", queryset=JudgeDecision.objects.only("id")))
        .order_by("trajectory__run__name", "trajectory__task__number", "trajectory__task__task_id", "gold_id")
    )


@dataclass(frozen=True)
class StepVerdicts:
    """What the metrics said about one agent step, for the trajectory page."""

    mark: AgentStepMark
    repeated: bool
    element_miss: str

    @property
    def badges(self) -> list[tuple[str, str]]:
        """(kind, sentence) of each badge of the step: a match, a deviation, a recovery or an element miss.
        Built here rather than by the page's template, which would pay for every test once per step."""
        mark, found = self.mark, []
        if mark.path_gold_step:
            found.append(("match", f"on the gold path: gold step {mark.path_gold_step}"))
        if mark.ssr_gold_step and mark.ssr_gold_step != mark.path_gold_step:
            found.append(("match", f"step success: gold step {mark.ssr_gold_step}"))
        if mark.left_path:
            found.append(("deviation", f"leaves the gold path (expected gold step {mark.left_path})"))
        elif mark.off_path and not mark.came_back:
            found.append(("deviation", "off the gold path"))
        if mark.came_back:
            cost = mark.recovery_cost
            after = f" after {cost} step{'' if cost == 1 else 's'}" if cost else ""
            found.append(("recovery", f"back on the path at gold step {mark.came_back}{after}"))
        if self.repeated:
            found.append(("deviation", "repeats the previous step"))
        if self.element_miss:
            found.append(("miss", f"element accuracy miss: {self.element_miss}"))
        return found


# Judge decisions listed on the trajectory page; a long trajectory's repetition checks alone are one per step.
DECISIONS_SHOWN = 100


@dataclass(frozen=True)
class TrajectoryEvaluation:
    score: TrajectoryScore
    gold_steps: list  # [(gold step, (agent step, score) of the match or None)]
    steps: dict[int, StepVerdicts]  # of the agent steps asked for only
    decisions: list[JudgeDecision]  # the first DECISIONS_SHOWN
    decision_count: int
    others: list[TrajectoryScore]
    gold_hidden: bool = False  # scored against gold the viewer may not read: its text is left out


def trajectory_evaluation(trajectory: Trajectory, job_id=None, *, viewer, steps=()) -> TrajectoryEvaluation | None:
    """A trajectory's score in one job (the newest finished one unless asked), with the decisions behind it;
    gold text (the gold steps, decisions holding them) only when `viewer` may read that gold. What the metrics
    said of each agent step is built for the step numbers `steps` alone (the page shown), so that a page of a
    long trajectory costs what its steps do."""
    # Every score of the trajectory (a few: one per evaluation and gold) in one query, with whether the viewer
    # may read its gold; the one shown is picked among them. An evaluation's errors (one per trajectory it could
    # not score) are not shown here.
    scores = list(
        TrajectoryScore.objects.filter(trajectory=trajectory)
        .select_related("job__judge_config", "gold__annotator").defer("job__errors")
        .annotate(gold_readable=Exists(visible_gold(viewer).filter(pk=OuterRef("gold_id"))))
        .order_by("-job__created_at", "gold_id")
    )
    asked = int(job_id) if job_id and str(job_id).isdigit() else None
    score = (next((score for score in scores if score.job_id == asked), None)
             or next((score for score in scores if score.job.status == EvaluationJob.Status.DONE), None)
             or next(iter(scores), None))
    if score is None:
        return None
    details = score.details or {}
    marks = align_side(score.agent_steps or 0, details).steps
    repeated = set((details.get("repetitiveness") or {}).get("repeated_steps", ()))
    misses = {miss["step"]: MISS_LABELS.get(miss["reason"], miss["reason"])
              for miss in (details.get("element_accuracy") or {}).get("misses", ())}
    matched = {
        pair["gold_step"]: (pair["agent_step"], pair["score"])
        for pair in (details.get("step_success") or {}).get("matched", ())
    }
    readable = score.gold is not None and score.gold_readable
    # The page shows neither a decision's inputs nor its raw output.
    decisions = score.decisions.select_related("reviewed_by").defer("inputs", "output").order_by("kind", "pk")
    if not readable:  # else each was used on gold the viewer may read: this score's
        decisions = visible_decisions(viewer, decisions)
    shown = set(steps)
    listed = list(decisions[:DECISIONS_SHOWN])
    return TrajectoryEvaluation(
        score=score,
        gold_steps=[(step, matched.get(step.index)) for step in score.gold.steps.order_by("index")] if readable else [],
        steps={mark.step: StepVerdicts(mark, mark.step in repeated, misses.get(mark.step, ""))
               for mark in marks if mark.step in shown},
        decisions=listed,
        decision_count=len(listed) if len(listed) < DECISIONS_SHOWN else decisions.count(),
        others=[other for other in scores if other.pk != score.pk],
        gold_hidden=score.gold is not None and not readable,
    )


def run_evaluations(run) -> list[dict]:
    """The run's evaluations, newest first; a re-run says what changed against the one it replaced."""
    jobs = list(EvaluationJob.objects.filter(runs=run).select_related("judge_config")
                .annotate(replaced_by_count=Count("replaced_by")).order_by("-created_at")[:20])
    return [{"job": job, **job_progress(job), "changes": rerun_changes(job, run) if job.replaces_id else None}
            for job in jobs]


@dataclass(frozen=True)
class MetricChange:
    label: str
    before: float | None
    after: float | None


def rerun_changes(job: EvaluationJob, run) -> list[MetricChange]:
    """The run's metrics that a finished re-run changed against the evaluation it replaced."""
    if job.status != EvaluationJob.Status.DONE:
        return []
    means = {}
    for job_id, metric, mean in Aggregate.objects.filter(
            job_id__in=[job.pk, job.replaces_id], run=run, scope=Aggregate.Scope.RUN, group="",
            metric__in=METRICS).values_list("job_id", "metric", "mean"):
        means[(job_id, metric)] = mean
    changes = []
    for metric in METRICS:
        before, after = means.get((job.replaces_id, metric)), means.get((job.pk, metric))
        if (before is None) != (after is None) or (before is not None and round(before, 3) != round(after, 3)):
            changes.append(MetricChange(METRIC_LABELS[metric], before, after))
    return changes


def stale_scores(job_ids) -> dict[int, int]:
    """{job id: its scores whose gold changed since the job began} - gold saved after that, or
    (reference policy) no longer the task's reference, or a reference gold the task gained since
    it was scored without one. Re-evaluating scores them again."""
    job_ids = list(job_ids)
    earliest = EvaluationJob.objects.filter(pk__in=job_ids).aggregate(start=Min("started_at"))["start"]
    if earliest is None:
        return {}
    scores = TrajectoryScore.objects.filter(job_id__in=job_ids, error="")
    reference = scores.filter(job__gold_policy=GoldPolicy.REFERENCE)
    # From the few golds concerned to their scores (by the gold index), not through every score.
    saved_since = GoldTrajectory.objects.filter(updated_at__gt=earliest).values("pk")
    not_reference = GoldTrajectory.objects.filter(is_reference=False).values("pk")
    saved, moved, gained = (found.order_by().values_list("job_id", "pk") for found in (
        scores.filter(gold_id__in=saved_since, gold__updated_at__gt=F("job__started_at")),
        reference.filter(gold_id__in=not_reference),
        reference.filter(gold__isnull=True, trajectory__task__gold_trajectories__is_reference=True,
                         trajectory__task__gold_trajectories__cannot_complete=False),
    ))
    # One query; UNION counts once a score that more than one of them finds.
    return dict(Counter(job_id for job_id, _ in saved.union(moved, gained)))


@dataclass(frozen=True)
class NullNotes:
    """The reasons of the null metrics of a table of scores, each said once in a numbered note
    under the table: `marks[score id][field]` is the number of the note `reasons[number - 1]`."""

    marks: dict[int, dict[str, int]]
    reasons: list[str]

    def mark(self, score_id: int, field: str) -> int | None:
        return self.marks.get(score_id, {}).get(field)


def null_notes(scores) -> NullNotes:
    """Number the distinct null reasons of `scores` (TrajectoryScore rows with their details) in
    the order they first occur."""
    numbers: dict[str, int] = {}
    marks = {}
    for score in scores:
        reasons = (score.details or {}).get(NULL_REASONS, {})
        marks[score.pk] = {field: numbers.setdefault(reason, len(numbers) + 1) for field, reason in reasons.items()}
    return NullNotes(marks, list(numbers))


def tasks_without_reference(job: EvaluationJob):
    """Tasks of the job's runs that have approved gold but no reference gold: under the
    'reference' policy they are scored without gold, so the job page lists them."""
    task_ids = Trajectory.objects.filter(run__in=job.runs.all()).values("task_id")
    return (Task.objects.filter(pk__in=task_ids, gold_trajectories__status=GoldStatus.APPROVED)
            .exclude(gold_trajectories__is_reference=True).distinct().order_by("benchmark", "number", "task_id"))


def scores_off_reference(job: EvaluationJob) -> int:
    """Scores of a 'reference' job whose gold is no longer its task's reference (or whose task has
    gained one since): re-evaluating scores them against the current reference."""
    if job.gold_policy != GoldPolicy.REFERENCE:
        return 0
    scores = job.scores.filter(error="")
    moved = scores.filter(gold__isnull=False, gold__is_reference=False).count()
    gained = scores.filter(gold__isnull=True, trajectory__task__gold_trajectories__is_reference=True,
                           trajectory__task__gold_trajectories__cannot_complete=False).count()
    return moved + gained


def with_uses(items: list[AuditItem]) -> list[AuditItem]:
    """Where each audited decision was used: the run and task of the trajectories it scored (the judge
    audit page shows them; annotation's audit queue, below the scores, cannot)."""
    uses: dict[int, list[str]] = {}
    rows = TrajectoryScore.decisions.through.objects.filter(
        judgedecision_id__in={item.decision.pk for item in items}
    ).values_list(
        "judgedecision_id", "trajectoryscore__trajectory__run__name", "trajectoryscore__trajectory__task__task_id"
    )
    for decision_id, run, task_id in rows:
        label = f"{run} · task {task_id}"
        if label not in uses.setdefault(decision_id, []):
            uses[decision_id].append(label)
    for item in items:
        item.context = uses.get(item.decision.pk, [])
    return items
