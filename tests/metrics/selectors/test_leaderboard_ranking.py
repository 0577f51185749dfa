"""The database ranks, filters, counts and pages the leaderboard: its order is the order of the numbers each row
shows, for every column, direction, filter and verdict source, and a page costs the same queries at 2 runs and
at 20."""

import pytest
from django.core.paginator import Paginator
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from rest_framework.test import APIClient

from metrics.aggregation import METRICS
from metrics.selectors import leaderboard as lb
from metrics.selectors.leaderboard import LeaderboardFilters
from tests.factories import AgentRunFactory, JudgeConfigFactory, TaskFactory, UserFactory
from tests.metrics.reports import evaluate, trajectory, two_evaluated_runs
from trajectories.models import OutcomeGrade, TaskResult, TaskSubset, Trajectory, Verdict, VerdictSource
from trajectories.services.tallies import refresh_tallies
from trajectories.verdict_agreement import SOURCE_LABELS, named_source

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("empty_cache")]


@pytest.fixture
def runs():
    """alpha and beta (evaluated), gamma (evaluated by another judge), delta (steps, never evaluated),
    Epsilon (results-only); a named source and human graders on some of their tasks."""
    made = two_evaluated_runs()
    tasks = made.tasks
    gamma = AgentRunFactory(name="gamma", agent="cot", model="mistral", paradigm="full_plan")
    for key, success in (("a1", True), ("g1", False), ("gr", True)):
        trajectory(gamma, tasks[key], ["click [1]", "click [2]"], success=success)
    evaluate(gamma, JudgeConfigFactory(name="second", backend="exact"))
    delta = AgentRunFactory(name="delta", agent="plan", model="gpt-4")
    for key, success in (("a1", True), ("g1", True)):
        trajectory(delta, tasks[key], ["click [1]"], success=success)
    epsilon = AgentRunFactory(name="Epsilon", agent="", model="claude")
    for key, success in (("a1", True), ("a2", False), ("g1", True), ("gr", False)):
        TaskResult.objects.create(run=epsilon, task=tasks[key], success=success)
    source = VerdictSource.objects.create(kind="llm_judge", name="WebJudge", model="o4-mini")
    for run, said in ((made.alpha, (True, False, False)), (made.beta, (True, True, True)),
                      (epsilon, (False, True, False)), (delta, (True, False, True))):
        for key, success in zip(("a1", "g1", "gr"), said):
            Verdict.objects.create(run=run, task=tasks[key], source=source, success=success)
    for run, key, value in ((made.alpha, "a1", 1.0), (made.beta, "a1", 0.0), (gamma, "g1", 1.0),
                            (epsilon, "gr", 1.0)):
        OutcomeGrade.objects.create(run=run, task=tasks[key], grader_name="ann", value=value)
    refresh_tallies([made.alpha.pk, made.beta.pk, gamma.pk, delta.pk, epsilon.pk])
    made.source = named_source(source.pk)
    made.runs = {"gamma": gamma, "delta": delta, "Epsilon": epsilon}
    return made


def _value(row, sort):
    if sort in METRICS:
        summary = row.metrics.get(sort)
        return summary.mean if summary else None
    value = {"created": row.created_at, "scored": row.scored}.get(sort, getattr(row, sort, None))
    return value.lower() if isinstance(value, str) else value


def _expected(rows, sort, descending):
    """Runs with numbers first; within them by the value shown (missing ones last either way), ties by name."""
    ordered = []
    for numbered in (True, False):
        group = sorted((row for row in rows if bool(row.evaluation or row.results_only) == numbered),
                       key=lambda row: row.name.lower())
        present = [row for row in group if _value(row, sort) is not None]
        ordered += sorted(present, key=lambda row: _value(row, sort), reverse=descending)
        ordered += [row for row in group if _value(row, sort) is None]
    return [row.name for row in ordered]


def _check_order(filters):
    board = lb.leaderboard(filters)
    names = [row.name for row in board.rows]
    assert names == _expected(board.rows, filters.sort, filters.descending), filters
    return names


SCOPES = ({}, {"site": "gitlab"}, {"judge": "second"}, {"benchmark": "webarena", "paradigm": "full_plan"})


def _every_ranking(source_choices, scopes=SCOPES, **fixed):
    for scope in scopes:
        for descending in (True, False):
            for sort in lb.SORT_KEYS:
                for source in source_choices if sort == "success" else ["combined"]:
                    yield LeaderboardFilters(sort=sort, descending=descending, success_source=source, **scope, **fixed)


def test_every_sort_filter_and_source_ranks_by_the_numbers_shown(runs):
    for filters in _every_ranking([*SOURCE_LABELS, runs.source]):
        _check_order(filters)
    # the orders are not all alike: runs without a number come last whichever way
    highest = _check_order(LeaderboardFilters(sort="step_success"))
    assert highest[-2:] == _check_order(LeaderboardFilters(sort="step_success", descending=False))[-2:] == [
        "Epsilon", "delta"]
    assert highest[:3] != _check_order(LeaderboardFilters(sort="step_success", descending=False))[:3]
    assert _check_order(LeaderboardFilters(sort="name", descending=False)) == [
        "alpha", "beta", "Epsilon", "gamma", "delta"]  # delta: never evaluated, not results-only
    # By hand from the fixture: WebJudge said alpha 1 of 3 (a1), beta 3 of 3, Epsilon 1 of 3 (g1), delta 2 of 3
    # and nothing of gamma. Runs with numbers (evaluated or results-only) first: beta 1, then alpha and Epsilon
    # at 1/3 by name, gamma without a rate; delta (never evaluated) last although WebJudge rated it.
    board = lb.leaderboard(LeaderboardFilters(success_source=runs.source))
    assert [row.name for row in board.rows] == ["beta", "alpha", "Epsilon", "gamma", "delta"]
    assert [_value(row, "success") for row in board.rows[:4]] == pytest.approx([1.0, 1 / 3, 1 / 3, None])
    judged = lb.leaderboard(LeaderboardFilters(judge="second", sort="step_success"))
    assert [row.name for row in judged.rows if row.evaluation] == ["gamma"]


def test_a_subset_ranks_the_same_way(runs):
    TaskSubset.objects.create(name="lite", benchmark="webarena", task_ids=["101", "201", "301"])
    for filters in _every_ranking([*SOURCE_LABELS, runs.source], [scope for scope in SCOPES if "site" not in scope],
                                  subset="lite"):
        _check_order(filters)


def test_pages_of_the_ranking_read_in_turn_are_the_whole_ranking(runs):
    filters = LeaderboardFilters(sort="step_success", descending=False)
    whole = [row.name for row in lb.leaderboard(filters).rows]
    for per_page in (1, 2, 3, 5, 10):
        ranking = lb.Ranking(filters)
        paginator = Paginator(ranking, per_page)
        assert paginator.count == 5
        read = [row.name for number in paginator.page_range for row in paginator.page(number)]
        assert read == whole, per_page
    assert lb.Ranking(LeaderboardFilters(site="nowhere", benchmark="other")).count() == 0
    with pytest.raises(TypeError):
        lb.Ranking(filters)[0]


@pytest.fixture
def api():
    client = APIClient()
    client.force_authenticate(UserFactory(username="reader"))
    return client


def test_the_api_pages_the_ranking(runs, api):
    url = reverse("api-leaderboard")
    whole = [row["name"] for row in api.get(url, {"sort": "-success", "page_size": 5}).json()["results"]]
    assert whole == [row.name for row in lb.leaderboard(LeaderboardFilters()).rows]
    first = api.get(url, {"page_size": 2}).json()
    assert first["count"] == 5 and first["previous"] is None and "page=2" in first["next"]
    last = api.get(url, {"page_size": 2, "page": 3}).json()
    assert [row["name"] for row in first["results"]] == whole[:2] and [row["name"] for row in last["results"]] == [
        whole[4]]
    assert last["next"] is None
    assert api.get(url, {"page_size": 2, "page": 4}).status_code == 404
    assert len(api.get(url).json()["results"]) == 5  # a page holds 50 by default


def test_the_site_table_reads_the_runs_of_one_page(runs, api):
    filters = LeaderboardFilters(sort="name", descending=False)
    whole = lb.leaderboard(filters).rows
    body = api.get(reverse("api-leaderboard-sites"), {"sort": "name", "page_size": 2, "page": 2}).json()
    expected = lb.site_breakdown(lb.Leaderboard(filters, whole[2:4]), "success")
    assert [row["name"] for row in body["results"]] == [row.name for row, _ in expected.rows] == ["Epsilon", "gamma"]
    assert body["sites"] == expected.sites
    assert api.get(reverse("api-leaderboard-sites"), {"page_size": 501}).status_code == 400


def _more_runs(tasks, count):
    judge = JudgeConfigFactory(name="exact", backend="exact")
    for number in range(count):
        run = AgentRunFactory(name=f"run-{number:02d}")
        trajectory(run, tasks["a1"], ["click [1]", "click [2]", "click [3]"], success=number % 2 == 0)
        trajectory(run, tasks["g1"], ["click [1]"], success=number % 3 == 0)
        evaluate(run, judge)


def _queries(client, url, query) -> int:
    client.get(url, query)  # tallies dropped by the writes recounted, rendered tables cached
    with CaptureQueriesContext(connection) as captured:
        assert client.get(url, query).status_code == 200
    return len(captured)


def test_the_page_and_api_run_as_many_queries_at_2_runs_as_at_20(api):
    made = two_evaluated_runs()
    source = VerdictSource.objects.create(kind="llm_judge", name="WebJudge", model="o4-mini")
    TaskSubset.objects.create(name="lite", benchmark="webarena", task_ids=["101", "201", "301"])
    reader = UserFactory(username="page-reader")
    asked = [(reverse("metrics:leaderboard"), query) for query in (
        {}, {"sort": "-step_success", "page": 2}, {"success_source": named_source(source.pk)}, {"site": "gitlab"},
        {"subset": "lite"}, {"subset": "lite", "success_source": named_source(source.pk), "page": 2})]
    asked += [(reverse("api-leaderboard"), query) for query in (
        {}, {"sort": "name", "page_size": 1}, {"subset": "lite", "sort": "-recovery", "page_size": 1})]
    asked += [(reverse("api-leaderboard-sites"), query) for query in (
        {"metric": "recovery", "page_size": 2}, {"metric": "recovery", "page_size": 2, "subset": "lite"})]

    def counts():
        from django.test import Client

        page = Client()
        page.force_login(reader)
        return [_queries(page if url == asked[0][0] else api, url, query) for url, query in asked]

    Verdict.objects.create(run=made.alpha, task=made.tasks["a1"], source=source, success=True)
    refresh_tallies([made.alpha.pk])  # the named source is a choice at both sizes
    small = counts()
    _more_runs(made.tasks, 18)
    assert counts() == small


def test_the_order_follows_each_change(runs):
    filters = LeaderboardFilters(sort="success", success_source=runs.source)
    before = _check_order(filters)
    # a verdict import, a grade, a re-evaluation, a deleted trajectory, a new run: each moves the ranking
    Verdict.objects.filter(run=runs.beta).update(success=False)
    refresh_tallies([runs.beta.pk])
    assert _check_order(filters) != before
    OutcomeGrade.objects.create(run=runs.beta, task=runs.tasks["g1"], grader_name="bob", value=1.0)
    refresh_tallies([runs.beta.pk])
    _check_order(LeaderboardFilters(sort="success", success_source="human"))
    human = lb.leaderboard(LeaderboardFilters(sort="success", success_source="human")).rows
    assert [(row.success.mean, row.success.count) for row in human if row.name == "beta"] == [(0.5, 2)]
    Trajectory.objects.filter(run=runs.alpha, task=runs.tasks["a1"]).delete()  # drops the run's tallies
    _check_order(LeaderboardFilters(sort="trajectories"))
    trajectory(runs.beta, TaskFactory(task_id="501", number=501, sites=["gitlab"]), ["click [1]"], success=True)
    refresh_tallies([runs.beta.pk])
    evaluate(runs.beta, JudgeConfigFactory(name="again", backend="exact"))
    for sort in ("scored", "success", "step_success"):
        _check_order(LeaderboardFilters(sort=sort))
    assert lb.leaderboard(LeaderboardFilters(sort="trajectories")).rows[0].name == "beta"


def test_the_site_choices_follow_evaluations_verdicts_and_deletes(runs):
    assert "gitlab" in lb.site_groups() and "wikipedia" not in lb.site_groups()
    run = AgentRunFactory(name="wiki")
    trajectory(run, TaskFactory(task_id="601", number=601, sites=["wikipedia"]), ["click [1]"], success=None)
    refresh_tallies([run.pk])
    assert "wikipedia" not in lb.site_groups()  # neither evaluated nor judged yet
    evaluate(run, JudgeConfigFactory(name="third", backend="exact"))
    assert "wikipedia" in lb.site_groups() and "wikipedia" in lb.site_groups(judge="third")
    assert "wikipedia" not in lb.site_groups(judge="second")
    run.delete()
    assert "wikipedia" not in lb.site_groups()
    TaskResult.objects.create(run=runs.runs["Epsilon"], task=TaskFactory(task_id="602", number=602,
                                                                        sites=["map"]), success=True)
    refresh_tallies([runs.runs["Epsilon"].pk])
    assert "map" in lb.site_groups()
