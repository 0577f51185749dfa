"""The leaderboard's failure-type column and filter, from a chosen attribution source, on the page, in the
API and in the CSV export."""

import io

import pandas as pd
import pytest
from django.urls import reverse

from failures.models import AttributionSource, FailureAttribution, SourceKind
from metrics import exports
from metrics.selectors.leaderboard import LeaderboardFilters, leaderboard
from tests.factories import AgentRunFactory, TaskFactory, TrajectoryFactory, UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def runs():
    """shop: people say looped, looped, blocked (a judge: wrong element once); forum: people say blocked."""
    people = AttributionSource.objects.create(kind=SourceKind.IMPORTED, name="paper annotators")
    judge = AttributionSource.objects.create(kind=SourceKind.JUDGE, name="all at once", model="m")
    shop, forum = AgentRunFactory(name="shop"), AgentRunFactory(name="forum")

    def failed(run, number, failure_type, source=people):
        trajectory = TrajectoryFactory(run=run, task=TaskFactory(task_id=f"{run.name}-{number}"), success=False)
        FailureAttribution.objects.create(trajectory=trajectory, source=source, step_index=1,
                                          failure_type=failure_type)
        return trajectory

    first = failed(shop, 1, "looped")
    failed(shop, 2, "looped")
    failed(shop, 3, "blocked_by_site")
    FailureAttribution.objects.create(trajectory=first, source=judge, step_index=1, failure_type="wrong_element")
    failed(forum, 1, "blocked_by_site")
    return shop, forum, judge


def _types(board):
    return {row.name: [(item.key, round(item.share, 3)) for item in row.failure_types] for row in board.rows}


def test_the_column_shares_each_runs_failures_by_type_from_the_chosen_source(runs):
    shop, forum, judge = runs
    assert _types(leaderboard(LeaderboardFilters(failure_source="people"))) == {
        "shop": [("looped", 0.667), ("blocked_by_site", 0.333)], "forum": [("blocked_by_site", 1.0)]}
    assert _types(leaderboard(LeaderboardFilters(failure_source=str(judge.pk)))) == {
        "shop": [("wrong_element", 1.0)], "forum": []}
    assert all(row.failure_types is None for row in leaderboard(LeaderboardFilters()).rows)


def test_the_filter_keeps_runs_with_a_failure_of_the_type_by_the_source(runs):
    shop, forum, judge = runs
    assert {row.name for row in leaderboard(LeaderboardFilters(failure_type="blocked_by_site")).rows} == {"shop",
                                                                                                          "forum"}
    assert [row.name for row in leaderboard(LeaderboardFilters(failure_type="looped")).rows] == ["shop"]
    assert [row.name for row in leaderboard(LeaderboardFilters(failure_type="looped",
                                                                failure_source=str(judge.pk))).rows] == []
    with pytest.raises(ValueError, match="failure_source: 'nobody'"):
        LeaderboardFilters(failure_source="nobody")


def test_the_page_shows_the_column_escaped_and_the_filter(client, runs):
    client.force_login(UserFactory())
    page = client.get(reverse("metrics:leaderboard"), {"failure_source": "people", "failure_type": "looped"})
    body = page.content.decode()
    assert page.status_code == 200
    assert 'data-col="failure-types">Failure types' in body
    assert '<span data-type="looped">Looped 67%</span> · <span data-type="blocked_by_site">Blocked by the site 33%</span>' in body
    assert 'data-run="forum"' not in body
    plain = client.get(reverse("metrics:leaderboard")).content.decode()
    assert 'data-col="failure-types"' not in plain and 'name="failure_source"' in plain


def test_the_csv_export_and_the_api_carry_the_column(client, runs):
    shop, forum, judge = runs
    client.force_login(UserFactory())
    response = client.get(reverse("metrics:export", args=["leaderboard", "csv"]), {"failure_source": "people"})
    frame = pd.read_csv(io.BytesIO(response.content)).set_index("run")
    assert frame.loc["shop", "failure_types"] == "looped 0.667; blocked_by_site 0.333"
    assert frame.loc["forum", "failure_types_from"] == "people"
    assert list(frame.reset_index().columns) == [column.name for column in exports.LEADERBOARD_COLUMNS]
    body = client.get(reverse("api-leaderboard"), {"failure_source": str(judge.pk)}).json()
    rows = {row["name"]: row["failure_types"] for row in body["results"]}
    assert rows["shop"] == [{"key": "wrong_element", "name": "Wrong element or target", "count": 1, "share": 1.0}]
    assert client.get(reverse("api-leaderboard"), {"failure_source": "nobody"}).status_code == 400
