"""Prometheus metrics at `/metrics`.

Request latency comes from django-prometheus's middleware (per process; with several gunicorn
workers set PROMETHEUS_MULTIPROC_DIR so that one scrape sees them all). The platform's own
numbers are read from the database at scrape time, so they are the same whichever web process,
on whichever machine, answers: jobs and their durations, messages waiting in the queue, judge
decisions with their latency, errors, tokens and cost.
"""

import ipaddress
import os
import secrets

from django.conf import settings
from django.db.models import Count, DurationField, ExpressionWrapper, F, Q, Sum
from django.http import Http404, HttpResponse, HttpResponseForbidden
from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, CollectorRegistry, generate_latest, multiprocess
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, SummaryMetricFamily

from accounts.lockout import client_address


def _job_metrics():
    from config.jobs import job_models, waiting_counts

    jobs = GaugeMetricFamily("trajscope_jobs", "Background jobs by kind and status.", labels=["kind", "status"])
    durations = SummaryMetricFamily("trajscope_job_duration_seconds", "Wall time of finished jobs.", labels=["kind"])
    not_sent = GaugeMetricFamily("trajscope_jobs_not_sent", "Unfinished jobs whose message is not sent yet.",
                                 labels=["kind"])
    stalled = GaugeMetricFamily("trajscope_jobs_stalled", "Unfinished jobs without progress for JOB_STALLED_AFTER.",
                                labels=["kind"])
    for model in job_models():
        for row in model.objects.values("status").annotate(n=Count("pk")).order_by():
            jobs.add_metric([model.job_kind, row["status"]], row["n"])
        start = "started_at" if any(f.name == "started_at" for f in model._meta.fields) else "created_at"
        finished = model.objects.filter(finished_at__isnull=False).exclude(**{f"{start}__isnull": True})
        total = finished.aggregate(
            n=Count("pk"),
            seconds=Sum(ExpressionWrapper(F("finished_at") - F(start), output_field=DurationField())),
        )
        durations.add_metric([model.job_kind], total["n"], total["seconds"].total_seconds() if total["seconds"] else 0)
    for kind, counts in waiting_counts().items():
        not_sent.add_metric([kind], counts["not_sent"])
        stalled.add_metric([kind], counts["stalled"])
    return [jobs, durations, not_sent, stalled]


def _queue_depth():
    from config.celery import app

    depth = GaugeMetricFamily("trajscope_queue_depth", "Messages waiting in the broker's queue.", labels=["queue"])
    if not app.conf.task_always_eager:
        queue = app.conf.task_default_queue
        with app.connection_for_write() as connection:
            try:
                _, count, _ = connection.default_channel.queue_declare(queue=queue, passive=True)
            except connection.channel_errors:
                count = 0
        depth.add_metric([queue], count)
    return [depth]


def _judge_metrics():
    from judges.models import JudgeDecision

    labels = ["backend", "model"]
    decisions = CounterMetricFamily("trajscope_judge_decisions", "Judge decisions made.",
                                    labels=[*labels, "kind", "outcome"])
    latency = SummaryMetricFamily("trajscope_judge_latency_seconds", "Time the judge took per decision.",
                                  labels=labels)
    tokens = CounterMetricFamily("trajscope_judge_tokens", "Tokens sent to and received from LLM judges.",
                                 labels=[*labels, "direction"])
    cost = CounterMetricFamily("trajscope_judge_cost_usd", "Cost of LLM judge requests.", labels=labels)
    per_kind = (JudgeDecision.objects.values("backend", "model", "kind")
                .annotate(ok=Count("pk", filter=Q(error="")), failed=Count("pk", filter=~Q(error="")))
                .order_by())
    for row in per_kind:
        decisions.add_metric([row["backend"], row["model"], row["kind"], "ok"], row["ok"])
        decisions.add_metric([row["backend"], row["model"], row["kind"], "error"], row["failed"])
    per_judge = (JudgeDecision.objects.values("backend", "model")
                 .annotate(n=Count("pk"), ms=Sum("latency_ms"), prompt=Sum("prompt_tokens"),
                           completion=Sum("completion_tokens"), usd=Sum("cost"))
                 .order_by())
    for row in per_judge:
        key = [row["backend"], row["model"]]
        latency.add_metric(key, row["n"], (row["ms"] or 0) / 1000)
        tokens.add_metric([*key, "input"], row["prompt"] or 0)
        tokens.add_metric([*key, "output"], row["completion"] or 0)
        cost.add_metric(key, float(row["usd"] or 0))
    return [decisions, latency, tokens, cost]


def _score_metrics():
    from metrics.models import TrajectoryScore

    counts = TrajectoryScore.objects.aggregate(ok=Count("pk", filter=Q(error="")), failed=Count("pk", filter=~Q(error="")))
    scores = CounterMetricFamily("trajscope_trajectory_scores", "Trajectory scores stored.", labels=["outcome"])
    scores.add_metric(["ok"], counts["ok"])
    scores.add_metric(["error"], counts["failed"])
    return [scores]


class PlatformCollector:
    """The platform's numbers, read from the database when Prometheus scrapes."""

    def describe(self):
        return []  # registering must not query the database (it may not exist yet)

    def collect(self):
        yield from _job_metrics()
        yield from _judge_metrics()
        yield from _score_metrics()
        try:
            yield from _queue_depth()
        except Exception:  # noqa: BLE001 - a broker that is down must not hide the other numbers
            yield GaugeMetricFamily("trajscope_broker_up", "Whether the broker answered the scrape.", value=0)


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
