"""Prometheus metrics at `/metrics`.

Request latency comes from django-prometheus's middleware (per process; with several gunicorn
workers set PROMETHEUS_MULTIPROC_DIR so that one scrape sees them all). The platform's own
numbers come from the database, so they are the same whichever web process, on whichever machine,
answers: counters of events (jobs finished with their queue wait and run time, judge decisions
with their latency, tokens and cost, trajectory scores) that are added to when the event happens
and never fall, and gauges of the rows there are now (`*_rows`, jobs not sent or stalled).
The broker is asked for its queue depth with a short timeout, and its answer is reused for a while,
so that a broker that is down never slows a scrape.
"""

import ipaddress
import os
import secrets
import threading
import time

from django.conf import settings
from django.db.models import Count, Q
from django.http import Http404, HttpResponse, HttpResponseForbidden
from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, CollectorRegistry, generate_latest, multiprocess
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, SummaryMetricFamily

from accounts.lockout import client_address
from infrastructure import counters

# Counters: (stored name, exported name, help, label names).
COUNTERS = [
    ("job_finished", "trajscope_jobs_finished", "Background jobs that ended, by kind and final status.",
     ["kind", "status"]),
    ("judge_decisions", "trajscope_judge_decisions", "Judge decisions made.", ["backend", "model", "kind", "outcome"]),
    ("judge_tokens", "trajscope_judge_tokens", "Tokens sent to and received from LLM judges.",
     ["backend", "model", "direction"]),
    ("judge_cost_usd", "trajscope_judge_cost_usd", "Cost of LLM judge requests.", ["backend", "model"]),
    ("trajectory_scores", "trajscope_trajectory_scores", "Trajectory scores computed.", ["outcome"]),
    ("cache_errors", "trajscope_cache_errors", "Cache operations that failed because the cache could not be "
     "reached (answered as a miss: pages computed, rate limits off).", ["operation"]),
]
# Summaries made of two counters, `<name>_count` and `<name>_sum`.
SUMMARIES = [
    ("job_queue_wait_seconds", "trajscope_job_queue_wait_seconds",
     "Time from a job's creation until a worker began it.", ["kind"]),
    ("job_run_seconds", "trajscope_job_run_seconds", "Time from a worker beginning a job until it ended.", ["kind"]),
    ("judge_latency_seconds", "trajscope_judge_latency_seconds", "Time the judge took per decision.",
     ["backend", "model"]),
]


def _counter_metrics():
    stored = counters.values()
    for name, exported, help_text, labels in COUNTERS:
        family = CounterMetricFamily(exported, help_text, labels=labels)
        for label_values, value in stored.get(name, []):
            family.add_metric([label_values.get(label, "") for label in labels], value)
        yield family
    for name, exported, help_text, labels in SUMMARIES:
        family = SummaryMetricFamily(exported, help_text, labels=labels)
        sums = {tuple(v.get(label, "") for label in labels): value for v, value in stored.get(f"{name}_sum", [])}
        for label_values, value in stored.get(f"{name}_count", []):
            key = tuple(label_values.get(label, "") for label in labels)
            family.add_metric(list(key), value, sums.get(key, 0.0))
        yield family


def _row_gauges():
    from infrastructure.jobs import job_models, waiting_counts
    from judges.models import JudgeDecision
    from metrics.models import TrajectoryScore

    jobs = GaugeMetricFamily("trajscope_job_rows", "Background job rows stored now, by kind and status.",
                             labels=["kind", "status"])
    for model in job_models():
        for row in model.objects.values("status").annotate(n=Count("pk")).order_by():
            jobs.add_metric([model.job_kind, row["status"]], row["n"])
    not_sent = GaugeMetricFamily("trajscope_jobs_not_sent", "Unfinished jobs whose message is not sent yet.",
                                 labels=["kind"])
    stalled = GaugeMetricFamily("trajscope_jobs_stalled", "Unfinished jobs without progress for JOB_STALLED_AFTER.",
                                labels=["kind"])
    for kind, counts in waiting_counts().items():
        not_sent.add_metric([kind], counts["not_sent"])
        stalled.add_metric([kind], counts["stalled"])
    decisions = GaugeMetricFamily("trajscope_judge_decision_rows", "Judge decision rows stored now (the cache).",
                                  labels=["backend", "model", "outcome"])
    per_judge = (JudgeDecision.objects.values("backend", "model")
                 .annotate(ok=Count("pk", filter=Q(error="")), failed=Count("pk", filter=~Q(error=""))).order_by())
    for row in per_judge:
        decisions.add_metric([row["backend"], row["model"], "ok"], row["ok"])
        decisions.add_metric([row["backend"], row["model"], "error"], row["failed"])
    scores = GaugeMetricFamily("trajscope_trajectory_score_rows", "Trajectory score rows stored now.",
                               labels=["outcome"])
    stored = TrajectoryScore.objects.aggregate(ok=Count("pk", filter=Q(error="")), failed=Count("pk", filter=~Q(error="")))
    scores.add_metric(["ok"], stored["ok"])
    scores.add_metric(["error"], stored["failed"])
    return [jobs, not_sent, stalled, decisions, scores]


class BrokerProbe:
    """The broker's queue depth, asked with a short timeout and reused for METRICS_BROKER_CACHE seconds."""

    def __init__(self):
        self.lock = threading.Lock()
        self.asked_at: float | None = None
        self.depth: int | None = None  # None: the broker did not answer

    def answer(self) -> int | None:
        with self.lock:
            now = time.monotonic()
            if self.asked_at is None or now - self.asked_at >= settings.METRICS_BROKER_CACHE:
                self.depth = self._ask()
                self.asked_at = time.monotonic()
            return self.depth

    @staticmethod
    def _ask() -> int | None:
        from config.celery import app

        timeout = settings.METRICS_BROKER_TIMEOUT
        options = {**(app.conf.broker_transport_options or {}), "max_retries": 0, "socket_timeout": timeout,
                   "socket_connect_timeout": timeout}
        try:
            with app.connection_for_write(connect_timeout=timeout, transport_options=options) as connection:
                connection.ensure_connection(max_retries=0, timeout=timeout)
                try:
                    _, count, _ = connection.default_channel.queue_declare(queue=app.conf.task_default_queue,
                                                                           passive=True)
                except connection.channel_errors:
                    count = 0  # no such queue (Redis drops an empty list): nothing is waiting
        except Exception:  # noqa: BLE001 - a broker that is down is the answer
            return None
        return count


broker_probe = BrokerProbe()


def _queue_depth():
    from config.celery import app

    if app.conf.task_always_eager:
        return []
    depth = broker_probe.answer()
    up = GaugeMetricFamily("trajscope_broker_up", "Whether the broker answered its last probe.",
                           value=0 if depth is None else 1)
    if depth is None:
        return [up]
    queue = GaugeMetricFamily("trajscope_queue_depth", "Messages waiting in the broker's queue.", labels=["queue"])
    queue.add_metric([app.conf.task_default_queue], depth)
    return [up, queue]


class PlatformCollector:
    """The platform's numbers, read from the database when Prometheus scrapes."""

    def describe(self):
        return []  # registering must not query the database (it may not exist yet)

    def collect(self):
        yield from _counter_metrics()
        yield from _row_gauges()
        yield from _queue_depth()


_platform = PlatformCollector()
REGISTRY.register(_platform)


def _registry():
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)
        registry.register(_platform)
        return registry
    return REGISTRY


def _may_scrape(request) -> bool:
    """With METRICS_TOKEN set, a bearer token; without, only this machine may scrape: the client's address,
    not that of a proxy on this machine forwarding the world."""
    token = settings.METRICS_TOKEN
    if token:
        sent = request.headers.get("Authorization", "")
        return sent.startswith("Bearer ") and secrets.compare_digest(sent[len("Bearer "):], token)
    try:
        return ipaddress.ip_address(client_address(request) or "").is_loopback
    except ValueError:
        return False


def metrics_view(request):
    if not settings.METRICS_ENABLED:
        raise Http404
    if not _may_scrape(request):
        return HttpResponseForbidden("Metrics need the bearer token set in METRICS_TOKEN.\n",
                                     content_type="text/plain; charset=utf-8")
    return HttpResponse(generate_latest(_registry()), content_type=CONTENT_TYPE_LATEST)
