"""Task subsets on the leaderboard, in comparisons, exports and on the run page; Key-node Completion scored."""

import json

import pytest
from django.urls import reverse

from metrics import aggregation, exports, plots
from metrics.models import TrajectoryScore
from metrics.selectors import comparison, leaderboard
from metrics.subsets import run_subsets
from tests.factories import AgentRunFactory, TaskFactory, UserFactory
from tests.metrics.reports import evaluate, trajectory, two_evaluated_runs
from trajectories.models import Task, TaskSubset
from trajectories.services.tasks import import_task_file

pytestmark = pytest.mark.django_db


@pytest.fixture
def runs():
    return two_evaluated_runs()


@pytest.fixture
def lite():
    """Tasks 101 and 201 of the two runs' five, as WebArena-Lite would name them by old_task_id."""
    return TaskSubset.objects.create(name="webarena-lite", benchmark="webarena", task_ids=["101", "201", "999"])


def _expected(run, job, task_ids, metric):
    values = TrajectoryScore.objects.filter(job=job, trajectory__run=run, trajectory__task__task_id__in=task_ids,
                                            error="").values_list(metric, flat=True)
    return aggregation.summarize(values)


def test_the_leaderboard_filtered_to_a_subset_reads_the_same_evaluations_on_its_tasks(runs, lite):
    board = leaderboard.leaderboard(leaderboard.LeaderboardFilters(subset="webarena-lite"))
    rows = {row.name: row for row in board.rows}
    assert set(rows) == {"alpha", "beta"}
    for run, job in ((runs.alpha, runs.alpha_job), (runs.beta, runs.beta_job)):
        for metric in ("success", "step_success", "repetitiveness"):
            assert rows[run.name].metric(metric) == _expected(run, job, ["101", "201"], metric)
        assert rows[run.name].scored == 2
    assert rows["alpha"].metric("success").mean == 1.0 and rows["beta"].metric("success").mean == 0.5
    whole = {row.name: row for row in leaderboard.leaderboard(leaderboard.LeaderboardFilters()).rows}
    assert whole["alpha"].scored == 5
    breakdown = leaderboard.site_breakdown(board, "success")
    assert breakdown.sites == ["gitlab", "shopping_admin"]


def test_a_subset_without_the_runs_tasks_lists_no_run_and_unknown_subsets_are_refused(runs):
    TaskSubset.objects.create(name="other", task_ids=["5"])
    assert leaderboard.leaderboard(leaderboard.LeaderboardFilters(subset="other")).rows == []
    with pytest.raises(ValueError, match="subset: no subset named 'nope'"):
        leaderboard.leaderboard(leaderboard.LeaderboardFilters(subset="nope"))
    with pytest.raises(ValueError, match="site group or a subset, not both"):
        leaderboard.LeaderboardFilters(subset="other", site="gitlab")


def test_comparison_pairs_only_the_subsets_tasks(runs, lite):
    result = comparison.compare_runs(runs.alpha, runs.beta, subset=lite, resamples=50)
    assert (result.shared_tasks, result.subset) == (2, "webarena-lite")
    assert comparison.compare_runs(runs.alpha, runs.beta, resamples=50).shared_tasks == 4


def test_exports_filter_by_subset(runs, lite):
    selection = {runs.alpha.pk: runs.alpha_job.pk}
    assert list(exports.scores_frame(selection, lite)["task_id"]) == ["101", "201"]
    assert set(exports.decisions_frame(selection, lite)["task_id"]) == {"101", "201"}
    aggregates = exports.aggregates_frame(selection, lite)
    assert set(aggregates["scope"]) == {"subset"} and set(aggregates["group"]) == {"webarena-lite"}
    success = aggregates[aggregates["metric"] == "success"].iloc[0]
    assert (success["mean"], success["count"]) == (1.0, 2)
    board = leaderboard.leaderboard(leaderboard.LeaderboardFilters(subset="webarena-lite"))
    assert set(exports.leaderboard_frame(board)["scope"]) == {"webarena-lite"}


def test_pages_and_api_take_the_subset(client, runs, lite):
    user = UserFactory(username="viewer")
    client.force_login(user)
    page = client.get(reverse("metrics:leaderboard"), {"subset": "webarena-lite"}).content.decode()
    assert 'id="subset-scope">webarena-lite<' in page and "subset=webarena-lite" in page
    csv = client.get(reverse("metrics:export", args=["scores", "csv"]),
                     {"run": runs.alpha.pk, "subset": "webarena-lite"}).getvalue().decode()
    assert csv.count("\n") == 3  # header and two tasks
    compare = client.get(reverse("metrics:compare"), {"baseline": "alpha", "candidate": "beta",
                                                      "subset": "webarena-lite"}).content.decode()
    assert "subset=webarena-lite" in compare and 'id="compare-subset">webarena-lite<' in compare
    api = client.get(reverse("api-leaderboard"), {"subset": "webarena-lite"}).json()
    assert {row["name"] for row in api["results"]} == {"alpha", "beta"}
    assert client.get(reverse("api-leaderboard"), {"subset": "nope"}).status_code == 400
    paired = client.get(reverse("api-comparison"), {"baseline": "alpha", "candidate": "beta",
                                                     "subset": "webarena-lite"}).json()
    assert (paired["shared_tasks"], paired["subset"]) == (2, "webarena-lite")
    scores = client.get(reverse("api-export-scores", args=["json"]), {"run": "alpha", "subset": "webarena-lite"})
    assert [row["task_id"] for row in json.loads(scores.getvalue())] == ["101", "201"]


def test_the_run_page_shows_its_subset_numbers_without_reimport(client, runs, lite):
    (item,) = run_subsets(runs.alpha, runs.alpha_job.pk)
    assert (item.trajectories, item.passed, item.judged) == (2, 2, 2)
    assert item.numbers.metrics["success"].mean == 1.0
    client.force_login(UserFactory(username="viewer"))
    page = client.get(reverse("metrics:run-detail", args=[runs.alpha.pk])).content.decode()
    assert 'id="subsets"' in page and "2 / 3" in page and "?subset=webarena-lite" in page


def test_key_node_completion_is_scored_and_aggregated(shared_data):
    import_task_file(shared_data / "more-benchmarks" / "mind2web-live.excerpt.json")
    run = AgentRunFactory(name="live", benchmark="mind2web-live")
    gamestop = Task.objects.get(benchmark="mind2web-live", task_id="0")
    flightaware = Task.objects.get(benchmark="mind2web-live", task_id="1")
    made = trajectory(run, gamestop, ["click [1]", "click [2]"], success=None)
    made.steps.update(url="https://www.gamestop.com/search/?store=2630")
    other = trajectory(run, flightaware, ["click [1]"], success=None)
    other.steps.update(url="https://www.flightaware.com/commercial/aeroapi/")
    job = evaluate(run)
    first = TrajectoryScore.objects.get(job=job, trajectory=made)
    second = TrajectoryScore.objects.get(job=job, trajectory=other)
    assert (first.key_node_completion, first.success, first.success_source) == (1.0, True, "key_nodes")
    assert (second.key_node_completion, second.success) == (pytest.approx(2 / 3), False)
    assert [check["satisfied"] for check in second.details["key_node_completion"]["checks"]] == [True, True, False]
    aggregate = job.aggregates.get(run=run, scope="run", metric="key_node_completion")
    assert (aggregate.mean, aggregate.count) == (pytest.approx(5 / 6), 2)
    row = exports.scores_frame({run.pk: job.pk}).iloc[0]
    assert row["key_node_completion"] == 1.0 and row["success_source"] == "key_nodes"


def test_tasks_without_key_nodes_have_no_key_node_completion(runs):
    assert not TrajectoryScore.objects.filter(job=runs.alpha_job, key_node_completion__isnull=False).exists()


def test_plots_draw_the_subsets_values(runs, lite):
    rows = leaderboard.leaderboard(leaderboard.LeaderboardFilters(subset="webarena-lite")).rows
    values = plots.metric_values(rows, "success", subset=lite)
    assert {name: sorted(found) for name, found in values.items()} == {"alpha": [1.0, 1.0], "beta": [0.0, 1.0]}


def test_semantic_key_nodes_go_through_the_judge():
    task = TaskFactory(benchmark="mind2web-live", task_id="9", eval_types=[], eval_config={}, key_nodes=[
        {"match_function_name": "element_value_semantic_match", "content": {"reference_answer": "Boston"}},
        {"match_function_name": "url_semantic_match", "content": {"reference_answer": "https://a.com/cart"}},
    ])
    run = AgentRunFactory(name="semantic")
    made = trajectory(run, task, ["type [3] [boston]", "click [4]"], success=None)
    made.steps.filter(index=1).update(action_value="boston", url="https://a.com/")
    made.steps.filter(index=2).update(action_value="", url="https://a.com/checkout")
    score = TrajectoryScore.objects.get(job=evaluate(run), trajectory=made)  # exact judge: normalised equality
    checks = score.details["key_node_completion"]["checks"]
    assert [(check["satisfied"], check["judge_score"]) for check in checks] == [(True, 1.0), (False, 0.0)]
    assert (score.key_node_completion, score.success) == (0.5, False)
    assert score.decisions.filter(kind="fuzzy_answer").count() == 3  # one value, two distinct URLs
