"""Background jobs and their queue messages, kept together.

A job is a database row (an import, an evaluation) plus one queue message that tells a worker
to run it. The row is written in the caller's transaction and the message is sent only after
that commits. A message that could not be sent (broker down) or that was lost (the broker
restarted, or the worker holding it died) is found by the sweeper, which runs in every worker
and sends it again; the job tasks are idempotent, so a message sent twice does no harm.

Services enqueue through `enqueue`, never by importing a task: the task is named by its Celery
name (`BackgroundJob.dispatch_task`), so services and tasks do not import each other.
"""

import logging
import threading
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta

from celery import current_app
from celery.signals import worker_ready
from django.apps import apps
from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import models, transaction
from django.db.models import F, Q
from django.db.models.functions import Coalesce, Greatest
from django.utils import timezone
from rest_framework.exceptions import APIException

from accounts.roles import ADMIN, has_role

from infrastructure import counters

log = logging.getLogger(__name__)


class WorkersUnreachable(Exception):
    """The job row is stored but its message could not be sent; the sweeper will send it."""

    def __init__(self, job: "BackgroundJob", error: Exception):
        self.job, self.error = job, error
        super().__init__(
            f"Background workers are unreachable: your {job.job_kind} #{job.pk} is saved and will start "
            "when they are back."
        )


class TooManyJobs(APIException):
    """The account already has JOB_LIMITS_PER_ACCOUNT unfinished jobs of this kind (the API answers 429)."""

    status_code = 429
    default_code = "too_many_jobs"


def check_job_limit(model: type["BackgroundJob"], user) -> None:
    """One account cannot fill the queue: at most JOB_LIMITS_PER_ACCOUNT[kind] unfinished jobs of a kind
    at once (admins and the operator's commands, `user` None, have no limit). Call it inside the
    transaction that creates the job: the account's row is locked, so two requests cannot both pass."""
    limit = settings.JOB_LIMITS_PER_ACCOUNT.get(model.job_kind)
    if user is None or not limit or has_role(user, ADMIN):
        return
    with transaction.atomic():
        list(get_user_model().objects.select_for_update().filter(pk=user.pk).values_list("pk"))
        unfinished = model.objects.filter(created_by=user, status__in=model.unfinished_statuses).count()
    if unfinished >= limit:
        raise TooManyJobs(f"you already have {unfinished} {model.job_kind}s waiting or running, the most one "
                          f"account may have at once: start this one when one of them has finished")


class JobStatus(models.TextChoices):
    PENDING = "pending", "Pending"
    RUNNING = "running", "Running"
    DONE = "done", "Done"
    FAILED = "failed", "Failed"


class BackgroundJob(models.Model):
    """What every job row carries so that its message can be tracked and sent again."""

    dispatch_task: str = ""  # Celery name of the task that runs the job with the row's pk
    job_kind: str = "job"
    unfinished_statuses: tuple[str, ...] = ("pending", "running")

    dispatched_at = models.DateTimeField(
        null=True, blank=True, help_text="When its queue message was last sent; empty: not sent yet."
    )
    heartbeat_at = models.DateTimeField(null=True, blank=True, help_text="Last progress written by a worker.")

    class Meta:
        abstract = True

    @property
    def last_activity(self) -> datetime:
        return max(t for t in (self.created_at, self.dispatched_at, self.heartbeat_at) if t is not None)

    @property
    def is_unfinished(self) -> bool:
        return self.status in self.unfinished_statuses

    @property
    def is_waiting_for_workers(self) -> bool:
        return self.is_unfinished and self.dispatched_at is None

    @property
    def silent_for(self) -> str:
        """How long the job has shown no sign of life, in words: "45 seconds", "1 minute", "3 hours"."""
        seconds = max(0, int((timezone.now() - self.last_activity).total_seconds()))
        for unit, size in (("hour", 3600), ("minute", 60), ("second", 1)):
            if seconds >= size or unit == "second":
                count = seconds // size
                return f"{count} {unit}{'' if count == 1 else 's'}"

    @property
    def is_stalled(self) -> bool:
        """Unfinished with no sign of life for longer than JOB_STALLED_AFTER: offer a retry."""
        stalled_after = timedelta(seconds=settings.JOB_STALLED_AFTER)
        return self.is_unfinished and timezone.now() - self.last_activity > stalled_after


def _send(job: BackgroundJob) -> None:
    send_task(job.dispatch_task, job.pk)


def send_task(name: str, pk: int) -> None:
    """Send one message to the task called `name` (its Celery name) with a row's pk: run in-process
    when there is no broker; raises kombu's OperationalError when the broker cannot be reached. For a
    part of a job (an import's chunk), which its job sends again when it is resumed."""
    if name not in current_app.tasks:
        current_app.loader.import_default_modules()  # the apps' tasks modules, found by autodiscovery
    task = current_app.tasks[name]
    if current_app.conf.task_always_eager:
        task.apply_async(args=[pk])
        return
    # One attempt, no reconnection loop: a broker that is down is answered at once, not after seconds.
    options = {**(current_app.conf.broker_transport_options or {}), "max_retries": 0}
    with current_app.connection_for_write(transport_options=options) as connection:
        task.apply_async(args=[pk], retry=False, connection=connection)


def _mark_sent(job: BackgroundJob, previous: datetime | None) -> bool:
    """Claim the send: only one of several sweepers that saw the same row wins."""
    now = timezone.now()
    claimed = type(job).objects.filter(pk=job.pk, dispatched_at=previous).update(dispatched_at=now)
    if claimed:
        job.dispatched_at = now
    return bool(claimed)


def dispatch_now(job: BackgroundJob) -> None:
    """Send the job's message; raises WorkersUnreachable (the row stays undispatched) on failure."""
    from kombu.exceptions import OperationalError

    # Marked before sending, so that a sweeper never sends a message that is on its way.
    job.dispatched_at = timezone.now()
    type(job).objects.filter(pk=job.pk).update(dispatched_at=job.dispatched_at)
    try:
        _send(job)
    except OperationalError as error:
        log.warning("could not send %s #%s: %s", job.job_kind, job.pk, error)
        type(job).objects.filter(pk=job.pk).update(dispatched_at=None)
        job.dispatched_at = None
        raise WorkersUnreachable(job, error) from error


def enqueue(job: BackgroundJob, *, quiet: bool = False) -> None:
    """Send the job's message once the caller's transaction commits.

    Raises WorkersUnreachable from the commit when the broker cannot be reached (the row is kept);
    `quiet` leaves such a job to the sweeper without a word, for follow-up work nobody waits on.
    """
    def send():
        try:
            dispatch_now(job)
        except WorkersUnreachable:
            if not quiet:
                raise

    transaction.on_commit(send)


def record_finished(job: BackgroundJob) -> None:
    """Count a job that has just ended, with how long it waited in the queue and how long it ran."""
    increments = [("job_finished", {"kind": job.job_kind, "status": job.status}, 1)]
    started, finished = getattr(job, "started_at", None), job.finished_at
    if started is not None:
        increments += [("job_queue_wait_seconds_count", {"kind": job.job_kind}, 1),
                       ("job_queue_wait_seconds_sum", {"kind": job.job_kind},
                        max(0.0, (started - job.created_at).total_seconds()))]
        if finished is not None:
            increments += [("job_run_seconds_count", {"kind": job.job_kind}, 1),
                           ("job_run_seconds_sum", {"kind": job.job_kind},
                            max(0.0, (finished - started).total_seconds()))]
    counters.count_many(increments)


def heartbeat(model: type[BackgroundJob], pk: int) -> None:
    model.objects.filter(pk=pk).update(heartbeat_at=timezone.now())


def run_job(model: type[BackgroundJob], job_id: int, work: Callable, *, progress_fields: Sequence[str],
            result_fields: Sequence[str], related: Sequence[str] = (),
            self_explaining: tuple[type[Exception], ...] = ()) -> BackgroundJob:
    """Run a pending or interrupted job of one pass (a message sent twice finds it finished and does nothing).

    `work(job, progress)` does the job and returns its report, calling `progress(report)` as it goes: the
    report's `progress_fields` are then written with a heartbeat, so the job's page follows it. Done, the
    job takes the report's `result_fields`; failed, it keeps the progress written so far and says what
    stopped it, in the error's own words for the `self_explaining` errors (an endpoint that does not
    answer), else with the error's type. Either way it is counted among the finished jobs (`/metrics`).
    """
    rows = model.objects.select_related(*related) if related else model.objects
    job = rows.get(pk=job_id)
    if not job.is_unfinished:
        return job
    job.started_at = timezone.now()
    model.objects.filter(pk=job.pk).update(status=JobStatus.RUNNING, started_at=job.started_at)

    def progress(report) -> None:
        model.objects.filter(pk=job.pk).update(heartbeat_at=timezone.now(),
                                               **{name: getattr(report, name) for name in progress_fields})

    fields = ["status", "error", "finished_at"]
    try:
        report = work(job, progress)
    except self_explaining as error:
        job.status, job.error = JobStatus.FAILED, str(error)
    except Exception as error:  # noqa: BLE001 - whatever stopped the job is shown on it; its progress stays
        job.status, job.error = JobStatus.FAILED, f"{type(error).__name__}: {error}"
    else:
        job.status = JobStatus.DONE
        for name in result_fields:
            setattr(job, name, getattr(report, name))
        fields += result_fields
    job.finished_at = timezone.now()
    job.save(update_fields=fields)
    record_finished(job)
    return job


def job_models() -> list[type[BackgroundJob]]:
    return [model for model in apps.get_models() if issubclass(model, BackgroundJob) and model.dispatch_task]


def broker_started_at() -> datetime | None:
    """When the broker last started, where the broker can tell (Redis): messages sent before then are lost."""
    url = current_app.conf.broker_url or ""
    if not url.startswith(("redis://", "rediss://")):
        return None
    import redis

    client = redis.Redis.from_url(url, socket_connect_timeout=2, socket_timeout=2)
    try:
        uptime = client.info("server")["uptime_in_seconds"]
    finally:
        client.close()
    return timezone.now() - timedelta(seconds=int(uptime) + 1)


def _queue_is_empty() -> bool:
    """True when the default queue holds no message (so a silent job's message is not merely waiting)."""
    with current_app.connection_for_write() as connection:
        channel = connection.default_channel
        try:
            _, count, _ = channel.queue_declare(queue=current_app.conf.task_default_queue, passive=True)
        except connection.channel_errors:
            return True  # no such queue (Redis drops an empty list): nothing is waiting
    return count == 0


def _with_latest_sign(jobs: models.QuerySet) -> models.QuerySet:
    """Annotate `latest_sign`: the newest of creation, last send and last progress."""
    return jobs.annotate(latest_sign=Greatest(F("created_at"), Coalesce("dispatched_at", "created_at"),
                                              Coalesce("heartbeat_at", "created_at")))


def jobs_to_send(model: type[BackgroundJob], *, now: datetime, broker_start: datetime | None,
                 queue_empty: bool) -> models.QuerySet:
    """The unfinished jobs whose message is missing.

    - never sent (the broker was down when they were created);
    - sent before the broker's current start (the broker lost its queue when it restarted);
    - no sign of life for JOB_REDISPATCH_AFTER seconds while the queue is empty (the worker that
      held the message died).
    """
    unfinished = model.objects.filter(status__in=model.unfinished_statuses)
    missing = Q(dispatched_at__isnull=True)
    if broker_start is not None:
        missing |= Q(dispatched_at__lt=broker_start)
    if queue_empty:
        silent_since = now - timedelta(seconds=settings.JOB_REDISPATCH_AFTER)
        unfinished = _with_latest_sign(unfinished)
        missing |= Q(dispatched_at__isnull=False, latest_sign__lt=silent_since)
    return unfinished.filter(missing)


def sweep() -> int:
    """Send again every job whose message is missing; returns how many were sent."""
    now = timezone.now()
    broker_start = broker_started_at()
    queue_empty = _queue_is_empty()
    sent = 0
    for model in job_models():
        for job in jobs_to_send(model, now=now, broker_start=broker_start, queue_empty=queue_empty):
            if not _mark_sent(job, job.dispatched_at):
                continue
            try:
                _send(job)
            except Exception:  # noqa: BLE001 - the broker went away again; the next sweep retries
                model.objects.filter(pk=job.pk).update(dispatched_at=None)
                log.warning("sweeper could not send %s #%s", job.job_kind, job.pk, exc_info=True)
                return sent
            sent += 1
            log.info("sweeper sent %s #%s again", job.job_kind, job.pk)
    return sent


def retry(job: BackgroundJob) -> None:
    """A user's retry of a stalled job: send its message now (WorkersUnreachable if that fails)."""
    type(job).objects.filter(pk=job.pk).update(heartbeat_at=timezone.now())
    dispatch_now(job)


def waiting_counts() -> dict:
    """Per job kind: jobs not sent yet and jobs stalled, for /healthz."""
    now = timezone.now()
    stalled_before = now - timedelta(seconds=settings.JOB_STALLED_AFTER)
    counts = {}
    for model in job_models():
        unfinished = model.objects.filter(status__in=model.unfinished_statuses)
        counts[model.job_kind] = {
            "not_sent": unfinished.filter(dispatched_at__isnull=True).count(),
            "stalled": _with_latest_sign(unfinished).filter(latest_sign__lt=stalled_before).count(),
        }
    return counts


class Sweeper(threading.Thread):
    """Runs `sweep` every JOB_SWEEP_INTERVAL seconds inside a worker process."""

    def __init__(self, interval: float):
        super().__init__(name="job-sweeper", daemon=True)
        self.interval = interval
        self.stopped = threading.Event()

    def run(self) -> None:
        from django.db import close_old_connections

        while not self.stopped.is_set():
            try:
                sweep()
            except Exception:  # noqa: BLE001 - broker or database away: try again next round
                log.warning("job sweep failed", exc_info=True)
            finally:
                close_old_connections()
            self.stopped.wait(self.interval)


_sweeper: Sweeper | None = None


@worker_ready.connect
def _sweep_in_every_worker(sender=None, **kwargs):
    """Every worker sends again the jobs whose messages are missing, at start and then periodically."""
    start_sweeper()


def start_sweeper() -> Sweeper | None:
    global _sweeper
    if settings.CELERY_TASK_ALWAYS_EAGER or settings.JOB_SWEEP_INTERVAL <= 0:
        return None
    if _sweeper is None or not _sweeper.is_alive():
        _sweeper = Sweeper(settings.JOB_SWEEP_INTERVAL)
        _sweeper.start()
    return _sweeper

