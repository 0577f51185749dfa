"""The charts of the leaderboard and comparison pages: which numbers go in, and a cache of the images.

The runs are the leaderboard's (same filters, same order), at most MAX_RUNS of them, or exactly
the runs asked for. Every image is derived from stored aggregates and scores of finished
evaluations, which change only when an evaluation finishes again, so the cache key names each
run's evaluation and its finish time and rendered images are kept for a day. An image not in the
cache is drawn by a background job (`PlotJob`): the page polls until it is there.
"""

import hashlib
from dataclasses import asdict, dataclass, field, replace
from datetime import timedelta

from celery import current_app
from django.conf import settings
from django.core.cache import cache
from django.db import transaction
from django.utils import timezone

from infrastructure import jobs

from metrics import aggregation, charts
from metrics.aggregation import METRICS
from metrics.models import PlotJob, TrajectoryScore
from metrics.registry import RATE, SCORE_REGISTRY
from metrics.selectors.latest_evaluations import cache_key
from metrics.selectors.leaderboard import (
    METRIC_LABELS,
    Leaderboard,
    LeaderboardFilters,
    LeaderboardRow,
    Ranking,
    chosen_subset,
    site_breakdown,
)
from trajectories.models import TaskSubset

DISTRIBUTION = "distribution"
SITES = "sites"
SUCCESS_RECOVERY = "success-recovery"
PLOTS = (DISTRIBUTION, SITES, SUCCESS_RECOVERY)
# Box plots of a yes/no metric say nothing; the rates summarized have a spread of values.
DISTRIBUTION_METRICS = tuple(metric.name for metric in SCORE_REGISTRY
                             if metric.aggregated and metric.summarized and metric.type == RATE)
MAX_RUNS = 12
CACHE_SECONDS = 24 * 3600


@dataclass(frozen=True)
class PlotRequest:
    name: str
    fmt: str = "svg"
    filters: LeaderboardFilters = field(default_factory=LeaderboardFilters)
    metric: str = ""  # default: step_success for distributions, success for site bars
    kind: str = "box"
    run_ids: tuple[int, ...] = ()

    def __post_init__(self):
        if self.name not in PLOTS:
            raise ValueError(f"plot: {self.name!r} is not one of {', '.join(PLOTS)}")
        if self.fmt not in charts.FORMATS:
            raise ValueError(f"format: {self.fmt!r} is not one of {', '.join(charts.FORMATS)}")
        if self.kind not in charts.KINDS:
            raise ValueError(f"kind: {self.kind!r} is not one of {', '.join(charts.KINDS)}")
        allowed = DISTRIBUTION_METRICS if self.name == DISTRIBUTION else METRICS
        if self.metric and self.metric not in allowed:
            raise ValueError(f"metric: {self.metric!r} cannot be drawn here; choose one of {', '.join(allowed)}")

    @property
    def chosen_metric(self) -> str:
        return self.metric or ("step_success" if self.name == DISTRIBUTION else "success")

    @property
    def filename(self) -> str:
        metric = "" if self.name == SUCCESS_RECOVERY else f"-{self.chosen_metric}"
        return f"{self.name}{metric}.{self.fmt}"


def plotted_rows(request: PlotRequest) -> list[LeaderboardRow]:
    """Only the runs drawn are read, whatever the number of runs: the first MAX_RUNS evaluated ones of the
    ranking, or those asked."""
    if request.run_ids:
        by_id = {row.run_id: row for row in Ranking(request.filters, run_ids=request.run_ids, evaluated=True)[:]}
        return [by_id[run_id] for run_id in request.run_ids if run_id in by_id]
    return Ranking(request.filters, evaluated=True)[:MAX_RUNS]


def metric_values(rows: list[LeaderboardRow], metric: str, site: str = "",
                  subset: TaskSubset | None = None) -> dict[str, list[float]]:
    """{run name: the metric's non-null per-trajectory values} from each run's evaluation (on a subset's tasks)."""
    jobs = {row.run_id: row.evaluation.job_id for row in rows}
    values: dict[int, list[float]] = {run_id: [] for run_id in jobs}
    scores = TrajectoryScore.objects.filter(
        job_id__in=set(jobs.values()), trajectory__run_id__in=list(jobs), error="", **{f"{metric}__isnull": False}
    )
    if subset is not None:
        scores = scores.filter(subset.task_filter("trajectory__task__"))
    scores = scores.values_list("job_id", "trajectory__run_id", metric, "trajectory__task__sites")
    for job_id, run_id, value, sites in scores:
        if jobs[run_id] == job_id and (not site or aggregation.site_group({"sites": sites}) == site):
            values[run_id].append(float(value))
    return {row.name: values[row.run_id] for row in rows}


def _draw(request: PlotRequest, rows: list[LeaderboardRow]):
    metric = request.chosen_metric
    if request.name == DISTRIBUTION:
        series = metric_values(rows, metric, request.filters.site, chosen_subset(request.filters))
        return charts.distribution_chart(series, label=METRIC_LABELS[metric], kind=request.kind)
    if request.name == SITES:
        breakdown = site_breakdown(Leaderboard(request.filters, rows), metric)
        return charts.site_bars(breakdown.sites, breakdown.means(), label=METRIC_LABELS[metric])
    points = [
        (row.name, *(row.metric(name).mean if row.metric(name) else None for name in ("recovery", "success")))
        for row in rows
    ]
    return charts.scatter_chart(points, x_label=METRIC_LABELS["recovery"], y_label=METRIC_LABELS["success"])


def _image_key(request: PlotRequest, rows: list[LeaderboardRow]) -> str:
    return cache_key("plot", request.name, request.fmt, request.chosen_metric, request.kind, request.filters.site,
                     request.filters.subset, [(row.run_id, row.name, row.evaluation) for row in rows])


def plot_bytes(request: PlotRequest) -> bytes:
    """The image, drawn now if it is not in the cache."""
    rows = plotted_rows(request)
    key = _image_key(request, rows)
    image = cache.get(key)
    if image is None:
        image = charts.render(_draw(request, rows), request.fmt)
        cache.set(key, image, CACHE_SECONDS)
    return image


def plot_or_job(request: PlotRequest) -> tuple[bytes | None, PlotJob | None]:
    """The image when it is in the cache; else the background job drawing it, started unless one is
    already on its way. Without a broker (one process, tasks in-process) it is drawn at once."""
    if current_app.conf.task_always_eager:
        return plot_bytes(request), None
    key = _image_key(request, plotted_rows(request))
    image = cache.get(key)
    if image is not None:
        return image, None
    digest = hashlib.sha256(key.encode()).hexdigest()
    with transaction.atomic():
        job = PlotJob.objects.filter(key=digest, status__in=PlotJob.unfinished_statuses).first()
        if job is None:
            forget_finished_jobs()
            job = PlotJob.objects.create(key=digest, request={
                "name": request.name, "fmt": request.fmt, "metric": request.metric, "kind": request.kind,
                "run_ids": list(request.run_ids), "filters": asdict(request.filters)})
            jobs.enqueue(job)
    return None, job


def forget_finished_jobs() -> int:
    """Remove the chart jobs finished more than PLOT_JOBS_KEPT_HOURS ago, whose images are in the cache or were
    never drawn: nothing reads them again. Called as each new one starts, so that they never pile up."""
    finished_before = timezone.now() - timedelta(hours=settings.PLOT_JOBS_KEPT_HOURS)
    removed, _ = PlotJob.objects.exclude(status__in=PlotJob.unfinished_statuses).filter(
        finished_at__lt=finished_before).delete()
    return removed


def draw_job(job_id: int) -> None:
    """The job's image, drawn into the cache; a failure is kept on the job (the page says so)."""
    job = PlotJob.objects.get(pk=job_id)
    if not job.is_unfinished:
        return
    PlotJob.objects.filter(pk=job_id).update(status=PlotJob.Status.RUNNING, heartbeat_at=timezone.now())
    stored = dict(job.request)
    request = PlotRequest(**{**stored, "run_ids": tuple(stored["run_ids"]),
                             "filters": LeaderboardFilters(**stored["filters"])})
    try:
        for fmt in sorted(charts.FORMATS, key=lambda fmt: fmt != request.fmt):  # both: the page offers each
            plot_bytes(replace(request, fmt=fmt))
    except Exception as error:  # noqa: BLE001 - kept on the job and shown; the next view starts a new one
        PlotJob.objects.filter(pk=job_id).update(status=PlotJob.Status.FAILED, error=f"{type(error).__name__}: "
                                                 f"{error}", finished_at=timezone.now())
        return
    PlotJob.objects.filter(pk=job_id).update(status=PlotJob.Status.DONE, finished_at=timezone.now())
