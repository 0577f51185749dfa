"""Failure themes as a background job: asked for when people annotate, computed by a worker."""

import logging
from collections import defaultdict

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from infrastructure import jobs
from judges.embeddings import sentence_encoder
from trajectories.models import AgentRun, Step

from ..accuracy import consensus
from ..agreement import Label
from ..models import FailureAttribution, SourceKind, ThemeJob
from ..themes import FailureText, themes

log = logging.getLogger(__name__)
HUMAN_KINDS = (SourceKind.HUMAN, SourceKind.IMPORTED)
STEP_TEXT = 300  # characters of the decisive step's reasoning that join the notes


def request_themes(run: AgentRun | None = None, benchmark: str = "") -> ThemeJob:
    """A theme job for the scope; the one waiting already when there is one (many annotations in a
    row ask for one job)."""
    waiting = ThemeJob.objects.filter(run=run, benchmark=benchmark, status=ThemeJob.Status.PENDING).first()
    if waiting is not None:
        return waiting
    job = ThemeJob.objects.create(run=run, benchmark=benchmark)
    jobs.enqueue(job, quiet=True)
    return job


def failure_texts(run_id: int | None = None, benchmark: str = "") -> list[FailureText]:
    """Per failed trajectory the people attributed: their notes, and the action and reasoning of the
    step they agreed was decisive."""
    rows = FailureAttribution.objects.filter(source__kind__in=HUMAN_KINDS, trajectory__success=False)
    if run_id is not None:
        rows = rows.filter(trajectory__run_id=run_id)
    if benchmark:
        rows = rows.filter(trajectory__task__benchmark=benchmark)
    labels, notes = defaultdict(list), defaultdict(list)
    for trajectory_id, step, note in rows.order_by("trajectory_id", "pk").values_list(
            "trajectory_id", "step_index", "note"):
        labels[trajectory_id].append(Label("", step))
        if note:
            notes[trajectory_id].append(note)
    decisive = {trajectory_id: consensus(items).step for trajectory_id, items in labels.items()}
    wanted = Q()
    for trajectory_id, step in decisive.items():
        if step is not None:
            wanted |= Q(trajectory_id=trajectory_id, index=step)
    rows = Step.objects.filter(wanted).values_list("trajectory_id", "action", "reasoning") if wanted else []
    steps = {trajectory_id: f"{action} {reasoning[:STEP_TEXT]}" for trajectory_id, action, reasoning in rows}
    return [FailureText(trajectory_id, " ".join([*notes[trajectory_id], steps.get(trajectory_id, "")]).strip())
            for trajectory_id in sorted(labels)]


def compute_themes(job_id: int) -> ThemeJob:
    """Run a theme job to its end, replacing the scope's earlier themes; a failure is recorded on the job."""
    job = ThemeJob.objects.get(pk=job_id)
    if job.status == ThemeJob.Status.DONE:
        return job
    started = timezone.now()
    ThemeJob.objects.filter(pk=job.pk).update(status=ThemeJob.Status.RUNNING, started_at=started, heartbeat_at=started)
    try:
        texts = failure_texts(job.run_id, job.benchmark)
        vectors = sentence_encoder().encode([item.text for item in texts])
        found = [{"phrases": list(theme.phrases), "size": theme.size, "representatives": list(theme.representatives),
                  "trajectories": list(theme.trajectories)} for theme in themes(texts, vectors)]
    except Exception as exc:  # noqa: BLE001 - the themes page shows why it failed
        log.exception("theme job %s failed", job.pk)
        ThemeJob.objects.filter(pk=job.pk).update(status=ThemeJob.Status.FAILED, finished_at=timezone.now(),
                                                  error=f"{type(exc).__name__}: {exc}")
    else:
        with transaction.atomic():
            ThemeJob.objects.filter(pk=job.pk).update(status=ThemeJob.Status.DONE, finished_at=timezone.now(),
                                                      themes=found, failures=len(texts))
            # Only the latest themes of a scope are shown: the earlier ones go.
            ThemeJob.objects.filter(run_id=job.run_id, benchmark=job.benchmark, status=ThemeJob.Status.DONE,
                                    pk__lt=job.pk).delete()
    job.refresh_from_db()
    jobs.record_finished(job)
    return job
