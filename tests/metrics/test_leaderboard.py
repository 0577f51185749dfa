import html
import re

import pytest
from django.urls import reverse
from django.utils import timezone

from metrics.aggregation import summarize
from metrics.models import EvaluationJob, TrajectoryScore
from metrics.selectors import leaderboard as lb
from metrics.selectors.latest_evaluations import latest_evaluations
from metrics.selectors.leaderboard import LeaderboardFilters
from tests.factories import AgentRunFactory, JudgeConfigFactory, TaskFactory, UserFactory
from tests.metrics.reports import evaluate, trajectory, two_evaluated_runs
from trajectories.models import AgentRun

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("empty_cache")]


@pytest.fixture
def runs():
    return two_evaluated_runs()


def _row(board, name):
    [row] = [row for row in board.rows if row.name == name]
    return row


def test_rows_carry_the_stored_aggregates_of_each_runs_latest_evaluation(runs):
    board = lb.leaderboard(LeaderboardFilters())
    alpha = _row(board, "alpha")
    assert (alpha.agent, alpha.model, alpha.paradigm, alpha.benchmark) == ("cot", "gpt-4", "step_by_step", "webarena")
    assert alpha.evaluation.job_id == runs.alpha_job.pk and alpha.evaluation.judge == "exact"
    assert (alpha.trajectories, alpha.scored) == (5, 5)
    scores = TrajectoryScore.objects.filter(job=runs.alpha_job)
    for metric in ("step_success", "recovery", "success", "repetitiveness"):
        assert alpha.metrics[metric] == summarize(scores.values_list(metric, flat=True)), metric
    # task 401 has no gold: its step success is null, left out of the mean and counted beside it
    assert (alpha.metrics["step_success"].count, alpha.metrics["step_success"].null_count) == (4, 1)
    assert alpha.metrics["step_success"].mean == pytest.approx((1 + 1 / 3 + 1 + 0) / 4)
    assert alpha.outcomes["total"] == 5
    assert alpha.lengths["pairs"] == 4 and alpha.lengths["gold_steps"]["mean"] == 3


def test_latest_finished_evaluation_represents_a_run_and_a_judge_can_be_chosen(runs):
    later = evaluate(runs.alpha, JudgeConfigFactory(name="exact-again", backend="exact"))
    EvaluationJob.objects.create(judge_config=runs.alpha_job.judge_config, status="running",
                                 started_at=timezone.now()).runs.add(runs.alpha)
    assert latest_evaluations([runs.alpha.pk])[runs.alpha.pk].job_id == later.pk
    assert latest_evaluations([runs.alpha.pk], judge="exact")[runs.alpha.pk].job_id == runs.alpha_job.pk
    assert latest_evaluations([runs.alpha.pk], judge="nobody") == {}
    board = lb.leaderboard(LeaderboardFilters(judge="exact-again"))
    assert _row(board, "alpha").evaluation.job_id == later.pk
    assert _row(board, "beta").evaluation is None


def test_sorting_puts_runs_without_a_value_last_in_either_direction(runs):
    unevaluated = AgentRunFactory(name="gamma")
    trajectory(unevaluated, TaskFactory(), ["click [1]"])
    for descending in (True, False):
        board = lb.leaderboard(LeaderboardFilters(sort="step_success", descending=descending))
        names = [row.name for row in board.rows]
        assert names == (["beta", "alpha", "gamma"] if descending else ["alpha", "beta", "gamma"])
    by_name = lb.leaderboard(LeaderboardFilters(sort="name", descending=True))
    assert [row.name for row in by_name.rows] == ["beta", "alpha", "gamma"]  # unevaluated runs stay last
    assert _row(by_name, "gamma").metrics == {} and _row(by_name, "gamma").trajectories == 1


def test_filters_by_paradigm_benchmark_and_site(runs):
    assert [r.name for r in lb.leaderboard(LeaderboardFilters(paradigm="full_plan")).rows] == ["beta"]
    assert lb.leaderboard(LeaderboardFilters(benchmark="other")).rows == []
    board = lb.leaderboard(LeaderboardFilters(site="gitlab"))
    alpha = _row(board, "alpha")
    # only task 201 is on gitlab alone; the reddit+gitlab task is its own site group
    assert alpha.scored == 1 and alpha.metrics["step_success"].mean == 1.0
    assert _row(board, "beta").metrics["step_success"].mean == pytest.approx(2 / 3)
    assert lb.site_groups() == ["gitlab", "gitlab+reddit", "shopping", "shopping_admin"]


def test_bad_filters_are_refused():
    with pytest.raises(ValueError, match="sort: unknown column 'bogus'"):
        LeaderboardFilters(sort="bogus")
    with pytest.raises(ValueError, match="paradigm"):
        LeaderboardFilters(paradigm="psychic")


def test_site_breakdown_lists_every_site_per_run(runs):
    board = lb.leaderboard(LeaderboardFilters())
    breakdown = lb.site_breakdown(board, "success")
    assert breakdown.sites == ["gitlab", "gitlab+reddit", "shopping", "shopping_admin"]
    cells = {row.name: [cell.mean if cell else None for cell in row_cells] for row, row_cells in breakdown.rows}
    assert cells["alpha"] == [1.0, 0.0, 1.0, 0.5]
    assert cells["beta"] == [1.0, 1.0, None, 0.5]
    assert breakdown.means() == cells
    with pytest.raises(ValueError, match="unknown metric"):
        lb.site_breakdown(board, "speed")


def test_query_count_does_not_grow_with_runs(runs, django_assert_num_queries):
    lb.leaderboard(LeaderboardFilters())  # counts the runs written without their services once
    with django_assert_num_queries(9):
        lb.leaderboard(LeaderboardFilters())
    for name in ("delta", "epsilon", "zeta"):
        evaluate(trajectory(AgentRunFactory(name=name), TaskFactory(), ["click [1]"]).run)
    lb.leaderboard(LeaderboardFilters())
    with django_assert_num_queries(9):
        board = lb.leaderboard(LeaderboardFilters())
    assert len(board.rows) == 5
    with django_assert_num_queries(1):
        lb.site_breakdown(board, "recovery")


@pytest.fixture
def user_client(client):
    client.force_login(UserFactory(username="viewer"))
    return client


def test_page_shows_runs_filters_tables_and_downloads(runs, user_client):
    response = user_client.get(reverse("metrics:leaderboard"), {"sort": "-step_success"})
    assert response.status_code == 200
    html = response.content.decode()
    assert html.index('data-run="beta"') < html.index('data-run="alpha"')
    assert reverse("metrics:run-detail", args=[runs.alpha.pk]) in html
    assert reverse("metrics:job", args=[runs.alpha_job.pk]) in html
    scores_csv = reverse("metrics:export", args=["scores", "csv"])
    assert f"{scores_csv}?run={runs.alpha.pk}&amp;job={runs.alpha_job.pk}" in html
    assert "n=4 · 1 not computable" in html  # alpha's step success: 4 values, task 401 null
    assert 'id="site-breakdown"' in html and "gitlab+reddit" in html
    assert reverse("metrics:plot", args=["sites", "svg"]) in html
    assert "Early stop" in html and "early_stop" not in html and "Agent steps n" in html
    assert response.context["board"].filters == LeaderboardFilters(sort="step_success", descending=True)


def test_page_shows_the_new_numbers_once_an_evaluation_finishes_again(runs, user_client):
    url = reverse("metrics:leaderboard")
    assert f">#{runs.alpha_job.pk}</a>" in user_client.get(url).content.decode()
    later = evaluate(runs.alpha, runs.alpha_job.judge_config)
    html = user_client.get(url).content.decode()
    assert f">#{later.pk}</a>" in html and f">#{runs.alpha_job.pk}</a>" not in html
    AgentRun.objects.filter(pk=runs.alpha.pk).update(name="alpha-renamed")
    assert 'data-run="alpha-renamed"' in user_client.get(url).content.decode()


def test_page_filters_by_site_and_ignores_unknown_values(runs, user_client):
    response = user_client.get(reverse("metrics:leaderboard"), {"site": "gitlab", "paradigm": "full_plan"})
    assert [row.name for row in response.context["board"].rows] == ["beta"]
    assert "restricted to tasks of site" in response.content.decode()
    response = user_client.get(reverse("metrics:leaderboard"), {"site": "mars", "sort": "-bogus"})
    assert response.status_code == 200
    assert response.context["filters"] == LeaderboardFilters()
    assert "(ignored)" in response.content.decode()
    # The charts draw what the table shows: the ignored values never reach them.
    assert "mars" not in response.context["plot_query"] and "bogus" not in response.context["plot_query"]
    chart = re.search(r'src="(/plots/sites\.svg\?[^"]*)"', response.content.decode()).group(1)
    assert user_client.get(html.unescape(chart)).status_code == 200


def test_run_names_are_escaped(user_client):
    run = AgentRunFactory(name="<script>alert(1)</script>", agent="<b>bold</b>", model="<i>model</i>")
    evaluate(trajectory(run, TaskFactory(), ["click [1]"]).run)
    html = user_client.get(reverse("metrics:leaderboard")).content.decode()
    assert "<script>alert(1)</script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert 'data-run="&lt;script&gt;alert(1)&lt;/script&gt;"' in html
    assert "<b>bold</b>" not in html and "<i>model</i>" not in html and "&lt;i&gt;model&lt;/i&gt;" in html


def test_pages_need_a_login(client):
    response = client.get(reverse("metrics:leaderboard"))
    assert response.status_code == 302 and reverse("login") in response["Location"]


def test_a_public_leaderboard_is_readable_without_an_account(settings, client, runs):
    settings.PUBLIC_LEADERBOARD = True
    page = client.get(reverse("metrics:leaderboard"))
    assert page.status_code == 200 and "alpha" in page.content.decode()
    assert client.get(reverse("metrics:export", args=["leaderboard", "csv"])).status_code == 200
    assert client.get(reverse("metrics:plot", args=["sites", "svg"])).status_code == 200
    run = client.get(reverse("metrics:export", args=["scores", "csv"]), {"run": runs.alpha.pk})
    assert run.status_code == 302 and reverse("login") in run["Location"]  # per-trajectory data stays private


def _confirm(backend: str, kind: str, count: int, wrong: int = 0) -> None:
    """`count` decisions of one judge that a reviewer confirmed, `wrong` of them overruled."""
    from judges.services import review_decision
    from tests.factories import JudgeDecisionFactory

    reviewer = UserFactory()
    for n in range(count):
        yes = n % 2 == 0
        decision = JudgeDecisionFactory(kind=kind, backend=backend, model="", score=0.9 if yes else 0.1,
                                        inputs_hash=f"{backend}-{kind}-{n}")
        human = (not yes) if n < wrong else yes
        review_decision(decision, human_score=1.0 if human else 0.0, reviewer=reviewer)


def test_metrics_of_a_judge_without_enough_confirmations_are_marked(runs):
    board = lb.leaderboard(LeaderboardFilters())
    marks = lb.judge_marks(board)
    assert set(marks) == {runs.alpha.pk, runs.beta.pk}
    assert set(marks[runs.alpha.pk]) == set(lb.JUDGED_METRICS)  # element accuracy and success need no judge
    assert marks[runs.alpha.pk]["step_success"] == (
        "Judge exact is not trusted yet on 'Agent step vs gold step' at tau 0.7: 0 human confirmations "
        "(fewer than 50); Cohen's kappa cannot be estimated yet.")

    _confirm("exact", "step_match", 60)
    _confirm("exact", "requirements", 60, wrong=12)
    marks = lb.judge_marks(lb.leaderboard(LeaderboardFilters()))[runs.alpha.pk]
    assert "step_success" not in marks and "recovery" not in marks
    assert "reaches below 0.8" in marks["partial_success"] and "60 human confirmations" not in marks["partial_success"]
    assert "0 human confirmations" in marks["grounded"]
    # Repetition compares what structured actions did, without a judge: no mark.
    assert "repetitiveness" not in marks


def test_the_page_marks_untrusted_numbers_and_explains_the_mark(runs, user_client):
    html = user_client.get(reverse("metrics:leaderboard")).content.decode()
    row = html.split('data-run="alpha"')[1].split("</tr>")[0]
    step_cell = row.split('data-metric="step_success">')[1].split("</td>")[0]
    note = re.search(r'<a class="rp-judge-mark" href="#(judge-note-\d+)" aria-describedby="\1">', step_cell).group(1)
    sentence = "Judge exact is not trusted yet on &#x27;Agent step vs gold step&#x27; at tau 0.7: 0 human confirmations"
    assert re.search(rf'<li id="{note}">{sentence}', html)
    assert html.count(sentence) == 1  # said once, whichever cells it marks
    assert "rp-judge-mark" not in row.split('data-metric="element_accuracy">')[1].split("</td>")[0]
    assert "marks a number whose judge is not trusted yet" in html
    _confirm("exact", "step_match", 60)
    html = user_client.get(reverse("metrics:leaderboard")).content.decode()  # the cached tables are not reused
    row = html.split('data-run="alpha"')[1].split("</tr>")[0]
    assert "rp-judge-mark" not in row.split('data-metric="step_success">')[1].split("</td>")[0]


def test_judge_notes_number_each_sentence_once_in_reading_order():
    steps, repeats = "Judge x is not trusted on steps.", "Judge x is not trusted on repetition."
    marks = {1: {"step_success": steps, "repetitiveness": repeats}, 2: {"step_success": steps}}
    notes = lb.judge_notes(marks, [2, 1, 3], ["step_success", "recovery", "repetitiveness"])
    assert notes.notes == [steps, repeats]
    assert notes.numbers == {2: {"step_success": 1}, 1: {"step_success": 1, "repetitiveness": 2}}


def test_the_page_shows_a_screenful_of_runs_ranked_over_all_of_them(runs, user_client, monkeypatch):
    from metrics import report_views

    monkeypatch.setattr(report_views, "RUNS_PER_PAGE", 1)
    url = reverse("metrics:leaderboard")
    first = user_client.get(url, {"sort": "-step_success"}).content.decode()
    assert 'data-run="beta"' in first and 'data-run="alpha"' not in first
    assert "runs 1-1 of 2" in first and "page=2" in first
    assert "page=" not in re.search(r'href="\?([^"]*)">Run</a>', first).group(1)  # a new order starts at the top
    second = user_client.get(url, {"sort": "-step_success", "page": 2}).content.decode()
    assert 'data-run="alpha"' in second and 'data-run="beta"' not in second
