from unittest.mock import patch

import pytest
from django.urls import reverse

from metrics import charts, plots
from metrics.selectors.leaderboard import LeaderboardFilters
from tests.factories import AgentRunFactory, TaskFactory, UserFactory
from tests.metrics.reports import evaluate, trajectory, two_evaluated_runs

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"

pytestmark = pytest.mark.usefixtures("empty_cache")


# Charts (no database) -------------------------------------------------------------------------


def test_distribution_chart_as_svg_and_png_is_deterministic():
    series = {"alpha": [0.1, 0.5, 0.9, 1.0], "beta": [0.3, 0.4], "empty": []}
    for kind in charts.KINDS:
        svg = charts.render(charts.distribution_chart(series, label="Step success", kind=kind), "svg")
        assert svg.startswith(b"<?xml") and b"<svg" in svg
        again = charts.render(charts.distribution_chart(series, label="Step success", kind=kind), "svg")
        assert svg == again
    png = charts.render(charts.distribution_chart(series, label="Step success"), "png")
    assert png.startswith(PNG_SIGNATURE)


def test_text_is_drawn_as_paths_so_names_never_become_markup():
    name = "--><script>alert(1)</script>"
    svg = charts.render(charts.site_bars(["shopping"], {name: [0.5]}, label="Success"), "svg")
    assert b"<script" not in svg and b"<text" not in svg and b"-->" + b"<" not in svg
    assert b"<!-- - -&gt;&lt;script&gt;alert(1)&lt;/script&gt; -->" in svg  # only an escaped comment names it


def test_site_bars_and_scatter_accept_missing_values():
    bars = charts.site_bars(["gitlab", "reddit"], {"a": [0.5, None], "b": [None, None]}, label="Success")
    assert len(bars.axes[0].patches) == 4
    scatter = charts.scatter_chart([("a", 0.5, 0.25), ("b", None, 0.5)], x_label="Recovery", y_label="Success")
    [axes] = scatter.axes
    assert [tuple(c.get_offsets()[0]) for c in axes.collections] == [(0.5, 0.25)]
    assert "not plotted (no value): b" in scatter.get_supxlabel()


def test_bad_chart_requests_are_refused():
    with pytest.raises(ValueError, match="kind: 'pie'"):
        charts.distribution_chart({}, label="x", kind="pie")
    with pytest.raises(ValueError, match="format: 'gif'"):
        charts.render(charts.scatter_chart([], x_label="x", y_label="y"), "gif")
    with pytest.raises(ValueError, match="plot: 'pie'"):
        plots.PlotRequest(name="pie")
    with pytest.raises(ValueError, match="metric: 'success' cannot be drawn here"):
        plots.PlotRequest(name="distribution", metric="success")


# Data and caching -----------------------------------------------------------------------------


@pytest.fixture
def runs(db):
    return two_evaluated_runs()


def test_distribution_values_come_from_each_runs_evaluation(runs):
    rows = plots.plotted_rows(plots.PlotRequest(name="distribution"))
    values = plots.metric_values(rows, "step_success")
    assert sorted(values["alpha"]) == pytest.approx(sorted([1.0, 1 / 3, 1.0, 0.0]))
    assert sorted(values["beta"]) == pytest.approx(sorted([0.0, 1.0, 2 / 3, 1.0]))
    assert plots.metric_values(rows, "step_success", site="gitlab") == {"beta": [pytest.approx(2 / 3)],
                                                                        "alpha": [1.0]}


def test_plotted_runs_follow_the_leaderboard_or_the_runs_asked_for(runs, monkeypatch):
    ordered = plots.plotted_rows(plots.PlotRequest(name="sites", filters=LeaderboardFilters(sort="name",
                                                                                          descending=False)))
    assert [row.name for row in ordered] == ["alpha", "beta"]
    asked = plots.plotted_rows(plots.PlotRequest(name="sites", run_ids=(runs.beta.pk, runs.alpha.pk, 999)))
    assert [row.name for row in asked] == ["beta", "alpha"]
    monkeypatch.setattr(plots, "MAX_RUNS", 1)
    assert len(plots.plotted_rows(plots.PlotRequest(name="sites"))) == 1


def test_images_are_cached_until_an_evaluation_finishes_again(runs, monkeypatch):
    drawn = []
    draw = plots._draw
    monkeypatch.setattr(plots, "_draw", lambda request, rows: drawn.append(request.name) or draw(request, rows))
    request = plots.PlotRequest(name="success-recovery", fmt="png")
    first = plots.plot_bytes(request)
    assert plots.plot_bytes(request) == first and drawn == ["success-recovery"]
    evaluate(runs.alpha, runs.alpha_job.judge_config)
    plots.plot_bytes(request)
    assert drawn == ["success-recovery", "success-recovery"]


# The download view ----------------------------------------------------------------------------


@pytest.fixture
def user_client(client, db):
    client.force_login(UserFactory(username="viewer"))
    return client


def test_plot_view_serves_svg_and_png_inline_or_as_downloads(runs, user_client):
    response = user_client.get(reverse("metrics:plot", args=["sites", "svg"]), {"metric": "recovery"})
    assert response.status_code == 200 and response["Content-Type"] == "image/svg+xml"
    assert response["Content-Disposition"] == 'inline; filename="sites-recovery.svg"'
    assert "default-src 'none'" in response["Content-Security-Policy"]
    response = user_client.get(reverse("metrics:plot", args=["distribution", "png"]),
                               {"kind": "violin", "download": "1", "runs": f"{runs.alpha.pk},{runs.beta.pk}"})
    assert response["Content-Type"] == "image/png" and response.content.startswith(PNG_SIGNATURE)
    assert response["Content-Disposition"] == 'attachment; filename="distribution-step_success.png"'


@pytest.mark.parametrize("path, query, message", [
    (("sites", "gif"), {}, "format: 'gif'"),
    (("pie", "svg"), {}, "plot: 'pie'"),
    (("distribution", "svg"), {"metric": "grounded"}, "metric: 'grounded' cannot be drawn here"),
    (("sites", "svg"), {"runs": "1,x"}, "runs: runs must be run ids"),
    (("sites", "svg"), {"kind": "pie"}, "kind:"),
])
def test_bad_plot_requests_say_what_is_wrong(user_client, path, query, message):
    response = user_client.get(reverse("metrics:plot", args=path), query)
    assert response.status_code == 400 and message in response.content.decode()


def test_a_run_without_values_still_gets_a_chart(user_client):
    run = AgentRunFactory(name="no-gold")
    evaluate(trajectory(run, TaskFactory(), ["click [1]"]).run)
    response = user_client.get(reverse("metrics:plot", args=["distribution", "svg"]), {"metric": "recovery"})
    assert response.status_code == 200 and response.content.startswith(b"<?xml")


def test_scatter_labels_of_runs_that_score_alike_do_not_overlap():
    points = [(f"agent-run-number-{i}", 0.5 + 0.003 * i, 0.5 + 0.002 * i) for i in range(8)]
    points += [("far", 0.99, 0.99), ("zero", 0.0, 0.0)]
    figure = charts.scatter_chart(points, x_label="Recovery", y_label="Success")
    charts.render(figure, "png")  # the final layout
    [axes] = figure.axes
    renderer = figure.canvas.get_renderer()
    labels = {text.get_text(): text.get_window_extent(renderer) for text in axes.texts}
    assert sorted(labels) == sorted(name for name, _, _ in points)
    frame = axes.get_window_extent(renderer)
    boxes = list(labels.values())
    for i, box in enumerate(boxes):
        assert frame.x0 <= box.x0 and box.x1 <= frame.x1 and frame.y0 <= box.y0 and box.y1 <= frame.y1
        assert not any(box.overlaps(other) for other in boxes[i + 1:]), list(labels)[i]


@pytest.fixture
def with_workers():
    from config.celery import app

    eager, app.conf.task_always_eager = app.conf.task_always_eager, False
    yield
    app.conf.task_always_eager = eager


def test_with_workers_a_cold_chart_is_drawn_in_the_background_while_the_page_polls(
        runs, user_client, with_workers, monkeypatch, django_capture_on_commit_callbacks):
    from metrics.models import PlotJob

    sent = []
    monkeypatch.setattr("infrastructure.jobs._send", sent.append)
    url = reverse("metrics:plot", args=["sites", "svg"])
    with patch("metrics.charts.site_bars", side_effect=AssertionError("drawn in the request")), \
            django_capture_on_commit_callbacks(execute=True):
        first = user_client.get(url, {"metric": "recovery"})
        again = user_client.get(url, {"metric": "recovery"})
    assert first.status_code == again.status_code == 202 and first.json()["status"] == "pending"
    [job] = PlotJob.objects.all()  # the second request waits for the same job
    assert sent == [job]
    plots.draw_job(job.pk)  # what the worker does
    job.refresh_from_db()
    assert job.status == "done" and job.finished_at is not None
    drawn = user_client.get(url, {"metric": "recovery"})
    assert drawn.status_code == 200 and drawn.content.startswith(b"<?xml")
    # the PNG download beside the chart was drawn by the same job
    png = user_client.get(reverse("metrics:plot", args=["sites", "png"]), {"metric": "recovery", "download": "1"})
    assert png.status_code == 200 and png.content.startswith(PNG_SIGNATURE)


def test_finished_chart_jobs_are_removed_a_day_later_as_new_ones_start(runs, user_client, with_workers, monkeypatch,
                                                                       django_capture_on_commit_callbacks, settings):
    from datetime import timedelta

    from django.utils import timezone

    from metrics.models import PlotJob

    monkeypatch.setattr("infrastructure.jobs._send", lambda job: None)
    now = timezone.now()
    old_done = PlotJob.objects.create(key="a" * 64, request={}, status="done", finished_at=now - timedelta(hours=25))
    old_failed = PlotJob.objects.create(key="b" * 64, request={}, status="failed", finished_at=now - timedelta(hours=25))
    recent = PlotJob.objects.create(key="c" * 64, request={}, status="done", finished_at=now - timedelta(hours=23))
    waiting = PlotJob.objects.create(key="d" * 64, request={}, status="pending")
    with django_capture_on_commit_callbacks(execute=True):
        assert user_client.get(reverse("metrics:plot", args=["sites", "svg"]), {"metric": "recovery"}).status_code == 202
    left = set(PlotJob.objects.values_list("pk", flat=True))
    assert {recent.pk, waiting.pk} < left and not {old_done.pk, old_failed.pk} & left and len(left) == 3
    settings.PLOT_JOBS_KEPT_HOURS = 1
    assert plots.forget_finished_jobs() == 1  # the recent one too, once kept for an hour only


def test_the_leaderboard_asks_for_its_charts_from_a_script_that_shows_progress(runs, user_client):
    html = user_client.get(reverse("metrics:leaderboard")).content.decode()
    assert html.count("data-plot=") == 3 and html.count('class="plot-status muted" role="status"') == 3
    assert "js/plots.js" in html and "<noscript><img src=" in html
