"""Gold quality checks and the annotator agreement report, run as background jobs with progress.

Each run stores its findings as GoldFlag rows, updated in place by (gold, kind, key): a flag the
latest run no longer finds becomes inactive, and a reviewer's dismissal (with its reason) is
never undone by a later run.
"""

import logging
import time
from collections import Counter

from django.db import transaction
from django.utils import timezone

from annotation import quality
from annotation.errors import GoldPermissionDenied, GoldValidationError
from annotation.models import GoldCheckJob, GoldFlag, GoldStep, GoldTrajectory
from annotation.permissions import DONE
from accounts.roles import REVIEWER, has_role
from annotation.selectors import DEFAULT_TAU, agreement_report, report_as_dict
from annotation.services.sentence_vectors import StoredEncoder
from infrastructure import jobs
from judges.selectors import judge_config_named
from trajectories.models import Task

log = logging.getLogger(__name__)

# Checks of how a gold fits its task's intent: their flags carry a confidence and side-by-side evidence.
FIT_KINDS = (
    GoldFlag.Kind.OTHER_TASK, GoldFlag.Kind.SIBLING_VALUES, GoldFlag.Kind.WORSE_VERSION, GoldFlag.Kind.POOR_FIT,
)
CHECK_KINDS = FIT_KINDS + (
    GoldFlag.Kind.DUPLICATE, GoldFlag.Kind.TOO_SHORT, GoldFlag.Kind.TOO_LONG, GoldFlag.Kind.ONE_STEP,
    GoldFlag.Kind.MISSING_VALUES,
)
# A pair of golds agreeing less than this is flagged on the agreement page.
DISAGREEMENT_BELOW = 0.5
_PROGRESS_INTERVAL = 0.5  # seconds between progress writes


def start_gold_check(kind: str, *, benchmark: str = "", parameters: dict | None = None, user=None) -> GoldCheckJob:
    """Record a job and run it on a worker once committed (in-process when no broker is set)."""
    job = GoldCheckJob.objects.create(kind=kind, benchmark=benchmark, parameters=parameters or {},
                                      created_by=user if user is not None and user.is_authenticated else None)
    jobs.enqueue(job)
    return job


def start_quality_checks_after_import(benchmarks) -> None:
    """Every import is followed by the quality checks of the benchmarks it touched; with the workers
    unreachable they wait for the sweeper, and the import itself still succeeds."""
    for benchmark in sorted(set(benchmarks)):
        job = GoldCheckJob.objects.create(kind=GoldCheckJob.Kind.QUALITY, benchmark=benchmark)
        jobs.enqueue(job, quiet=True)


class _Progress:
    def __init__(self, job: GoldCheckJob):
        self.job, self.last = job, 0.0

    def __call__(self, done: int) -> None:
        now = time.monotonic()
        if now - self.last >= _PROGRESS_INTERVAL:
            self.last = now
            GoldCheckJob.objects.filter(pk=self.job.pk).update(done=done, heartbeat_at=timezone.now())


def run_gold_check(job_id: int) -> GoldCheckJob:
    """Run a job to its end; a failure is recorded on the job, never half-stored."""
    job = GoldCheckJob.objects.get(pk=job_id)
    if job.status == GoldCheckJob.Status.DONE:
        return job
    started = timezone.now()
    GoldCheckJob.objects.filter(pk=job.pk).update(status=GoldCheckJob.Status.RUNNING, started_at=started, error="",
                                                  heartbeat_at=started)
    try:
        if job.kind == GoldCheckJob.Kind.QUALITY:
            result = _run_quality(job)
        else:
            result = _run_agreement(job)
    except Exception as exc:  # noqa: BLE001 - the job page shows why it failed
        log.exception("gold check job %s failed", job.pk)
        GoldCheckJob.objects.filter(pk=job.pk).update(status=GoldCheckJob.Status.FAILED, finished_at=timezone.now(),
                                                      error=f"{type(exc).__name__}: {exc}")
    else:
        GoldCheckJob.objects.filter(pk=job.pk).update(status=GoldCheckJob.Status.DONE, finished_at=timezone.now(),
                                                      result=result, done=job.total)
    job.refresh_from_db()
    jobs.record_finished(job)
    return job


def _in_scope(queryset, benchmark: str, field: str):
    return queryset.filter(**{field: benchmark}) if benchmark else queryset


def _run_quality(job: GoldCheckJob) -> dict:
    tasks = [
        quality.TaskRecord(pk, task_id, intent, template_id, quality.template_slots(instantiation))
        for pk, task_id, intent, template_id, instantiation in _in_scope(Task.objects, job.benchmark, "benchmark")
        .values_list("pk", "task_id", "intent", "intent_template_id", "instantiation")
    ]
    golds_qs = _in_scope(GoldTrajectory.objects.filter(status__in=DONE), job.benchmark, "task__benchmark")
    texts: dict[int, list[str]] = {}
    for gold_id, text in (GoldStep.objects.filter(gold__in=golds_qs).order_by("gold_id", "index")
                          .values_list("gold_id", "text")):
        texts.setdefault(gold_id, []).append(text)
    golds = [
        quality.GoldRecord(pk, task_pk, tuple(texts.get(pk, ())), cannot_complete)
        for pk, task_pk, cannot_complete in golds_qs.values_list("pk", "task_id", "cannot_complete")
    ]
    job.total = len(golds)
    GoldCheckJob.objects.filter(pk=job.pk).update(total=job.total)
    findings = quality.check_gold(tasks, golds, _Progress(job), encoder=StoredEncoder())
    store_findings(findings, kinds=CHECK_KINDS,
                   scope=_in_scope(GoldFlag.objects, job.benchmark, "gold__task__benchmark"))
    counts = Counter(finding.kind for finding in findings)
    return {"golds": len(golds), "tasks": len(tasks), "flags": dict(counts)}


def store_findings(findings, *, kinds, scope) -> None:
    """Upsert the findings as flags; flags of these kinds in `scope` that were not found go inactive."""
    with transaction.atomic():
        stored = {(flag.gold_id, flag.kind, flag.key): flag for flag in scope.filter(kind__in=kinds)}
        new, changed, seen = [], [], set()
        for finding in findings:
            identity = (finding.gold_pk, finding.kind, finding.key)
            if identity in seen:
                continue
            seen.add(identity)
            flag = stored.get(identity)
            fields = {"message": finding.message, "related_gold_id": finding.related_gold_pk,
                      "related_task_id": finding.related_task_pk, "confidence": finding.confidence, "active": True}
            if flag is None:
                new.append(GoldFlag(gold_id=finding.gold_pk, kind=finding.kind, key=finding.key, **fields))
            elif any(getattr(flag, name) != value for name, value in fields.items()):
                for name, value in fields.items():
                    setattr(flag, name, value)
                changed.append(flag)
        GoldFlag.objects.bulk_create(new, batch_size=500)
        GoldFlag.objects.bulk_update(changed, ["message", "related_gold_id", "related_task_id", "confidence", "active"],
                                     batch_size=500)
        gone = [flag.pk for identity, flag in stored.items() if identity not in seen and flag.active]
        for start in range(0, len(gone), 500):
            GoldFlag.objects.filter(pk__in=gone[start:start + 500]).update(active=False)


def _run_agreement(job: GoldCheckJob) -> dict:
    judge_name = job.parameters.get("judge", "")
    config = judge_config_named(judge_name) if judge_name else None
    pairs_done = _Progress(job)

    def progress(done: int, total: int) -> None:
        if job.total != total:
            job.total = total
            GoldCheckJob.objects.filter(pk=job.pk).update(total=total)
        pairs_done(done)

    report = agreement_report(judge_config=config, tau=job.parameters.get("tau", DEFAULT_TAU),
                              benchmark=job.benchmark, progress=progress)
    findings = [
        quality.Finding(pair.first.gold_id, GoldFlag.Kind.DISAGREEMENT, f"gold:{pair.second.gold_id}",
                        f"agreement {pair.agreement:.2f} with gold #{pair.second.gold_id} by {pair.second.annotator} "
                        f"({pair.matched} of {pair.first.steps} and {pair.second.steps} steps matched, judge "
                        f"{report.judge}, tau {report.tau})",
                        related_gold_pk=pair.second.gold_id)
        for task in report.tasks for pair in task.pairs
        if pair.agreement is not None and pair.agreement < DISAGREEMENT_BELOW
    ]
    store_findings(findings, kinds=(GoldFlag.Kind.DISAGREEMENT,),
                   scope=_in_scope(GoldFlag.objects, job.benchmark, "gold__task__benchmark"))
    return report_as_dict(report)


def dismiss_flag(flag_id: int, *, user, reason: str) -> GoldFlag:
    """A reviewer decides a flag is not a problem; the reason is kept and later runs leave it dismissed."""
    if not has_role(user, REVIEWER):
        raise GoldPermissionDenied("dismissing a gold flag needs the reviewer role")
    reason = reason.strip()
    if not reason:
        raise GoldValidationError({"reason": "say why this flag is not a problem"})
    with transaction.atomic():
        flag = GoldFlag.objects.select_for_update().get(pk=flag_id)
        flag.dismissed_at, flag.dismissed_by, flag.dismiss_reason = timezone.now(), user, reason
        flag.save(update_fields=["dismissed_at", "dismissed_by", "dismiss_reason", "updated_at"])
    return flag
