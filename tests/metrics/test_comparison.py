import pytest
from django.urls import reverse
from scipy import stats

from annotation.services.reference import make_reference
from metrics.models import TrajectoryScore
from metrics.selectors import comparison
from tests.factories import AgentRunFactory, JudgeConfigFactory, TaskFactory, UserFactory
from tests.metrics.reports import GOLD, evaluate, gold, trajectory, two_evaluated_runs

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("empty_cache")]


@pytest.fixture
def runs():
    return two_evaluated_runs()


def _values(job, metric):
    return {row["trajectory__task_id"]: row[metric]
            for row in TrajectoryScore.objects.filter(job=job).values("trajectory__task_id", metric)}


def test_every_metric_is_compared_over_the_shared_tasks(runs):
    result = comparison.compare_runs(runs.alpha, runs.beta)
    assert (result.baseline.name, result.candidate.name, result.shared_tasks) == ("alpha", "beta", 4)
    by_metric = {item.metric: item for item in result.metrics}
    assert set(by_metric) >= {"step_success", "recovery", "success", "element_accuracy", "correct"}
    # By hand (tests/metrics/reports.py), on tasks 101, 102, 201, 301 (401: alpha's alone): step success of
    # alpha 1, 1/3, 1, 0 and of beta 0, 1, 2/3, 1 against the three gold steps; success as each run reported it.
    # The tests' p-values a second way: scipy's own tests on the same pairs (Wilcoxon drops zero differences).
    for metric, alpha, beta in (("step_success", [1, 1 / 3, 1, 0], [0, 1, 2 / 3, 1]),
                                ("success", [1, 0, 1, 0], [0, 1, 1, 1])):
        overall = by_metric[metric].overall
        differences = [b - a for a, b in zip(alpha, beta)]
        assert (overall.pairs, overall.only_in_baseline, overall.only_in_candidate) == (4, 1, 0), metric
        assert (overall.baseline_mean, overall.candidate_mean, overall.mean_difference) == pytest.approx(
            (sum(alpha) / 4, sum(beta) / 4, sum(differences) / 4)), metric
        assert overall.wilcoxon_p == pytest.approx(stats.wilcoxon([d for d in differences if d]).pvalue), metric
        assert overall.t_test_p == pytest.approx(stats.ttest_rel(beta, alpha).pvalue), metric
        assert overall.ci_low <= overall.mean_difference <= overall.ci_high
    step = by_metric["step_success"].overall
    assert step.mean_difference == pytest.approx(((0 - 1) + (1 - 1 / 3) + (2 / 3 - 1) + (1 - 0)) / 4)


def test_per_site_comparison_pairs_within_each_site_group(runs):
    result = comparison.compare_runs(runs.alpha, runs.beta)
    assert result.sites == ("gitlab", "gitlab+reddit", "shopping_admin")
    by_site = dict(next(item for item in result.metrics if item.metric == "step_success").by_site)
    assert by_site["shopping_admin"].pairs == 2
    assert by_site["shopping_admin"].mean_difference == pytest.approx(((0 - 1) + (1 - 1 / 3)) / 2)
    assert by_site["gitlab+reddit"].mean_difference == 1.0
    assert by_site["gitlab"].ci_low is None  # one pair supports no interval


def test_tasks_that_differ_most_come_first(runs):
    result = comparison.compare_runs(runs.alpha, runs.beta, difference_metric="step_success", limit=3)
    assert [(t.task_id, round(t.difference, 3)) for t in result.differing_tasks] == [
        ("101", -1.0), ("301", 1.0), ("102", 0.667)]
    assert result.differing_tasks[0].site == "shopping_admin"
    by_success = comparison.compare_runs(runs.alpha, runs.beta, difference_metric="success")
    assert {t.task_id for t in by_success.differing_tasks} == {"101", "102", "301"}


def test_gold_policy_each_averages_a_tasks_golds():
    run = AgentRunFactory(name="one")
    task = TaskFactory()
    gold(task, GOLD)
    gold(task, ["click [1]", "click [9]"])
    trajectory(run, task, ["click [1]", "click [2]", "click [3]"])
    from metrics.services import evaluation
    from metrics.tasks import run_evaluation

    job = evaluation.create_evaluation(runs=[run], judge_config=JudgeConfigFactory(name="exact", backend="exact"),
                                       gold_policy="each")
    run_evaluation(job.pk)
    side = comparison.evaluated_side(run)
    [scores] = comparison.task_scores(side).values()
    assert scores.values["step_success"] == pytest.approx((1.0 + 0.5) / 2)


def test_runs_must_be_evaluated_and_different(runs):
    fresh = AgentRunFactory(name="fresh")
    with pytest.raises(comparison.NotEvaluated, match="run 'fresh' has no finished evaluation"):
        comparison.compare_runs(runs.alpha, fresh)
    with pytest.raises(comparison.NotEvaluated, match="with judge 'llm'"):
        comparison.compare_runs(runs.alpha, runs.beta, judge="llm")
    with pytest.raises(ValueError, match="two different runs"):
        comparison.compare_runs(runs.alpha, runs.alpha)
    with pytest.raises(ValueError, match="unknown metric 'speed'"):
        comparison.compare_runs(runs.alpha, runs.beta, difference_metric="speed")


def test_a_comparison_is_cached_until_an_evaluation_finishes_again(runs, django_assert_num_queries):
    first = comparison.compare_runs(runs.alpha, runs.beta)
    with django_assert_num_queries(2):  # which evaluations represent the runs; nothing else
        assert comparison.compare_runs(runs.alpha, runs.beta) == first
    newer = evaluate(runs.beta, runs.beta_job.judge_config)
    assert comparison.compare_runs(runs.alpha, runs.beta).candidate.evaluation.job_id == newer.pk


def test_another_metrics_differing_tasks_reuse_the_statistics(runs, monkeypatch):
    comparison.compare_runs(runs.alpha, runs.beta)
    calls = []
    monkeypatch.setattr(comparison, "compare_paired", lambda *args, **kwargs: calls.append(args))
    result = comparison.compare_runs(runs.alpha, runs.beta, difference_metric="recovery")
    assert calls == []
    assert result.difference_metric == "recovery"
    assert [(t.task_id, t.difference) for t in result.differing_tasks] == [
        ("101", -1.0), ("102", 1.0), ("201", -1.0), ("301", 1.0)]


# Pages ----------------------------------------------------------------------------------------


@pytest.fixture
def user_client(client):
    client.force_login(UserFactory(username="viewer"))
    return client


def test_compare_page_shows_statistics_and_links_to_side_by_side(runs, user_client):
    response = user_client.get(reverse("metrics:compare"), {"baseline": "alpha", "candidate": "beta"})
    assert response.status_code == 200
    html = response.content.decode()
    assert 'id="shared-tasks">4<' in html
    assert 'id="comparison-sites"' in html and "gitlab+reddit" in html
    side_by_side = reverse("metrics:compare-task", args=[runs.alpha.pk, runs.beta.pk, runs.tasks["a1"].pk])
    assert side_by_side in html
    assert f"{reverse('metrics:export', args=['scores', 'csv'])}?run={runs.alpha.pk}&amp;run={runs.beta.pk}" in html
    assert reverse("metrics:plot", args=["distribution", "svg"]) + f"?runs={runs.alpha.pk},{runs.beta.pk}" in html


def test_compare_page_explains_what_is_missing(runs, user_client):
    AgentRunFactory(name="fresh")
    html = user_client.get(reverse("metrics:compare"), {"baseline": "alpha", "candidate": "fresh"}).content.decode()
    assert "run &#x27;fresh&#x27; has no finished evaluation: evaluate it first" in html
    html = user_client.get(reverse("metrics:compare"), {"baseline": "alpha", "candidate": "alpha"}).content.decode()
    assert "Choose a run other than the baseline." in html
    assert user_client.get(reverse("metrics:compare")).status_code == 200


def test_side_by_side_aligns_both_trajectories_to_the_gold(runs, user_client):
    url = reverse("metrics:compare-task", args=[runs.alpha.pk, runs.beta.pk, runs.tasks["a1"].pk])
    response = user_client.get(url)
    assert response.status_code == 200
    view = response.context["view"]
    assert view.same_gold
    kinds = [(row.kind, row.gold_step) for row in view.rows]
    assert kinds == [("before", 1), ("gold", 1), ("gold", 2), ("before", 3), ("gold", 3), ("after", None)]
    first_gold = view.rows[1]
    assert first_gold.gold_texts == ("click [1]",)
    alpha_cell, beta_part = first_gold.sides[0].cells[0], first_gold.sides[1]
    assert (alpha_cell.mark.step, alpha_cell.action, alpha_cell.mark.came_back) == (2, "click [1]", 1)
    assert beta_part.cells == () and beta_part.unmatched
    html = response.content.decode()
    alpha_trajectory = view.sides[0].trajectory.pk
    assert f"{reverse('metrics:trajectory-detail', args=[alpha_trajectory])}#step-2" in html
    assert "left the path (expected g1)" in html and "back at g3 after 1 step" in html


def test_side_by_side_of_a_task_one_run_lacks(runs, user_client):
    url = reverse("metrics:compare-task", args=[runs.alpha.pk, runs.beta.pk, runs.tasks["x"].pk])
    response = user_client.get(url)
    assert response.status_code == 200
    assert "This run has no trajectory for the task." in response.content.decode()
    fresh = AgentRunFactory(name="fresh")
    url = reverse("metrics:compare-task", args=[runs.alpha.pk, fresh.pk, runs.tasks["x"].pk])
    assert user_client.get(url).status_code == 404


def test_side_by_side_escapes_what_agents_wrote(user_client):
    task = TaskFactory()
    gold(task, ["<img src=x onerror=alert(1)>"])
    judge = JudgeConfigFactory(name="exact", backend="exact")
    first, second = AgentRunFactory(name="first"), AgentRunFactory(name="second")
    trajectory(first, task, ["type [3] [<script>alert(2)</script>]"])
    trajectory(second, task, ["click [1]"])
    evaluate(first, judge), evaluate(second, judge)
    html = user_client.get(reverse("metrics:compare-task", args=[first.pk, second.pk, task.pk])).content.decode()
    assert "<script>alert(2)</script>" not in html and "&lt;script&gt;alert(2)&lt;/script&gt;" in html
    assert "<img src=x" not in html and "&lt;img src=x onerror=alert(1)&gt;" in html


def test_side_by_side_shows_both_golds_when_the_runs_used_different_ones():
    task = TaskFactory()
    judge = JudgeConfigFactory(name="exact", backend="exact")
    gold(task, ["click [1]"])
    first = AgentRunFactory(name="first")
    trajectory(first, task, ["click [1]"])
    evaluate(first, judge)
    later = gold(task, ["click [2]", "click [3]"])
    make_reference([later])  # a reviewer makes it the reference: the next evaluation uses it
    second = AgentRunFactory(name="second")
    trajectory(second, task, ["click [2]"])
    evaluate(second, judge)
    view = comparison.side_by_side(task, [first, second], viewer=UserFactory())
    assert not view.same_gold
    gold_rows = [row for row in view.rows if row.kind == "gold"]
    assert [row.gold_texts for row in gold_rows] == [("click [1]", "click [2]"), (None, "click [3]")]
    # the first run's gold has one step: there is nothing for it to match at gold step 2
    assert (gold_rows[1].sides[0].unmatched, gold_rows[1].sides[1].unmatched) == (False, True)
    assert gold_rows[1].sides[1].never_reached
