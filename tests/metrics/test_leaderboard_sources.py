"""The leaderboard ranks runs by any verdict source, named sources of imported files included, from counts
stored when verdicts change; a run's page links to the tasks where two sources disagree."""

import html
import re

import pytest
from django.urls import reverse
from django.utils.text import slugify
from rest_framework.test import APIClient

from accounts.services import create_api_token
from metrics.selectors import leaderboard as lb
from metrics.selectors.leaderboard import LeaderboardFilters
from tests.factories import AgentRunFactory, UserFactory
from tests.trajectories.verdict_samples import write_verdict_run
from trajectories.models import RunVerdictCount, Trajectory, Verdict, VerdictSource
from trajectories.services.ingest import import_paths
from trajectories.services.outcomes_and_grades import record_grade
from trajectories.verdict_agreement import named_source

pytestmark = pytest.mark.django_db


def text(response) -> str:
    assert response.status_code == 200
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", response.content.decode())))


@pytest.fixture
def runs(tmp_path):
    """Two imports of the same folder; in the second, WebJudge says no where it said yes in the first."""
    first, second = AgentRunFactory(name="first"), AgentRunFactory(name="second")
    assert import_paths([write_verdict_run(tmp_path / "first")], first).ok
    folder = write_verdict_run(tmp_path / "second")
    page = folder / "click-checkboxes.json"
    page.write_text(page.read_text().replace('"success": true, "score": 4', '"success": false, "score": 1'))
    assert import_paths([folder], second).ok
    return first, second


def _judge() -> str:
    return named_source(VerdictSource.objects.get(name="WebJudge").pk)


def test_an_import_stores_each_sources_counts_and_the_switch_lists_every_source(runs):
    first, _ = runs
    stored = {(row.source, row.site, row.passed, row.total) for row in RunVerdictCount.objects.filter(run=first)}
    assert (_judge(), "unknown", 1, 1) in stored and ("harness", "unknown", 1, 1) in stored
    sources = lb.success_sources()
    assert sources[_judge()] == "WebJudge (o4-mini)"
    assert {"combined", "harness", "check", "human"} < set(sources) and len(sources) == 7


def test_the_leaderboard_ranks_by_a_named_source_in_a_fixed_number_of_queries(runs, django_assert_num_queries):
    first, second = runs
    filters = LeaderboardFilters(success_source=_judge())
    board = lb.leaderboard(filters)
    assert [(row.name, row.success.mean, row.success.count) for row in board.rows] == [("first", 1, 1),
                                                                                       ("second", 0, 1)]
    assert board.success_label == "WebJudge (o4-mini)"
    ascending = lb.leaderboard(LeaderboardFilters(success_source=_judge(), descending=False))
    assert [row.name for row in ascending.rows] == ["second", "first"]
    # tallies to recount, the runs ranked, their columns, evaluations, stored counts, tallies, the sources' names
    with django_assert_num_queries(7):
        lb.leaderboard(filters)


def test_a_grade_recorded_through_its_service_is_counted_at_once(runs):
    first, _ = runs
    trajectory = Trajectory.objects.get(run=first, task__task_id="click-dialog")
    record_grade(trajectory, UserFactory(username="ann"), 0)
    assert RunVerdictCount.objects.get(run=first, source="human").total == 1
    row = lb.leaderboard(LeaderboardFilters(success_source="human")).rows[0]
    assert (row.success.mean, row.success.count) == (0, 1)


def test_a_single_write_is_counted_by_the_next_read(runs):
    first, _ = runs
    verdict = Verdict.objects.get(run=first, source__name="WebJudge")
    verdict.success = False
    verdict.save()
    row = next(row for row in lb.leaderboard(LeaderboardFilters(success_source=_judge())).rows if row.name == "first")
    assert (row.success.mean, row.success.count) == (0, 1)


def test_the_page_and_api_offer_named_sources(runs, client):
    client.force_login(UserFactory())
    page = client.get(reverse("metrics:leaderboard"), {"success_source": _judge()}).content.decode()
    assert f'<option value="{_judge()}" selected>WebJudge (o4-mini)</option>' in page
    assert "Success (WebJudge (o4-mini))" in html.unescape(page)
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {create_api_token(UserFactory(username='reader'))[1]}")
    body = api.get(reverse("api-leaderboard"), {"success_source": _judge()}).json()
    assert [(run["name"], run["metrics"]["success"]["mean"]) for run in body["results"]] == [("first", 1), ("second", 0)]
    assert _judge() in body["results"][0]["success_sources"]
    refused = api.get(reverse("api-leaderboard"), {"success_source": "source:999999"})
    assert refused.status_code == 400 and "source:999999" in str(refused.json())


def test_the_run_page_links_to_the_tasks_where_two_sources_disagree(runs, client):
    first, _ = runs
    client.force_login(UserFactory())
    url = reverse("metrics:run-detail", args=[first.pk])
    body = client.get(url).content.decode()
    expert = named_source(VerdictSource.objects.get(name="expert graders").pk)
    pair = f"{expert}-{_judge()}"
    assert f'data-pair="{pair}">1 task where expert graders and WebJudge (o4-mini) disagree</a>' in body
    assert f'data-pair="check-{_judge()}"' not in body  # no offline check has spoken on the run
    listed = text(client.get(url, {"disagree": pair}))
    assert "1 trajectory where expert graders and WebJudge (o4-mini) disagree" in listed
    assert "click-checkboxes" in listed and "click-dialog" not in listed


def test_success_from_offers_only_the_sources_of_the_chosen_benchmarks_runs(runs, client):
    first, _ = runs
    other = AgentRunFactory(name="elsewhere", benchmark="webvoyager")
    assert first.benchmark != "webvoyager"
    assert set(lb.success_sources("webvoyager")) == {"combined", "harness", "check", "human"}
    assert _judge() in lb.success_sources(first.benchmark)
    client.force_login(UserFactory())
    form = client.get(reverse("metrics:leaderboard"), {"benchmark": other.benchmark}).content.decode()
    choices = form.split('name="success_source"', 1)[1].split("</select>", 1)[0]
    assert "WebJudge" not in choices and "harness" in choices
    assert "WebJudge" in client.get(reverse("metrics:leaderboard")).content.decode()


def test_the_leaderboard_export_holds_every_source_and_a_success_never_empty(runs, client, tmp_path):
    import csv
    import io

    labels_only = AgentRunFactory(name="labels-only")
    folder = write_verdict_run(tmp_path / "labels")
    (folder / "click-dialog.json").unlink()  # the other trajectory has no harness verdict, only named sources'
    assert import_paths([folder], labels_only).ok
    client.force_login(UserFactory())
    response = client.get(reverse("metrics:export", args=["leaderboard", "csv"]))
    rows = {row["run"]: row for row in csv.DictReader(io.StringIO(response.content.decode()))}
    assert rows["first"]["success_webjudge_o4_mini"] == "1.0" and rows["first"]["success_webjudge_o4_mini_count"] == "1"
    assert rows["second"]["success_webjudge_o4_mini"] == "0.0"
    assert {"success_expert_graders", "success_agent_self_report"} < set(rows["first"])
    assert (rows["first"]["success"], rows["first"]["success_from"]) == ("1.0", "combined")
    only = rows["labels-only"]  # no built-in source spoke: the first named source that did (by id) is its success
    first = Verdict.objects.filter(run=labels_only).order_by("source_id").first().source
    column = "success_" + slugify(str(first)).replace("-", "_")
    assert only["success_harness"] == "" and only["success"] != ""
    assert (only["success_from"], only["success"], only["success_count"]) == (
        named_source(first.pk), only[column], only[f"{column}_count"])
    chosen = client.get(reverse("metrics:export", args=["leaderboard", "csv"]), {"success_source": _judge()})
    by_judge = {row["run"]: row for row in csv.DictReader(io.StringIO(chosen.content.decode()))}
    assert (by_judge["second"]["success"], by_judge["second"]["success_from"]) == ("0.0", _judge())
