import pytest
from django.contrib.auth.models import Group

from metrics.models import EvaluationJob
from tests.factories import JudgeConfigFactory, UserFactory

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def reviewer(client):
    user = UserFactory(username="rita")
    user.groups.add(Group.objects.get(name="reviewer"))
    client.force_login(user)
    return user


def test_start_from_the_run_page_and_follow_the_job(client, reviewer, run):
    JudgeConfigFactory(name="exact", backend="exact")
    response = client.post(f"/runs/{run.pk}/evaluate/", {"judge": "exact", "gold_policy": "approved",
                                                          "tau": "0.7", "window": "1"})
    job = EvaluationJob.objects.get()
    assert response.status_code == 302 and response.url == f"/evaluations/{job.pk}/"
    page = client.get(response.url)
    assert page.status_code == 200
    content = page.content.decode()
    assert "Done" in content and "agent-a" in content and "1.000" in content
    assert client.get("/evaluations/").status_code == 200


def test_the_run_page_offers_the_backends_and_starts_one_on_a_fresh_database(client, reviewer, run):
    page = client.get(f"/runs/{run.pk}/").content.decode()
    assert '<option value="offline">offline</option>' in page and '<option value="exact">exact</option>' in page
    response = client.post(f"/runs/{run.pk}/evaluate/", {"judge": "offline", "gold_policy": "approved",
                                                          "tau": "0.7", "window": "1"})
    assert response.status_code == 302
    assert EvaluationJob.objects.get().judge_config.backend == "offline"


def test_invalid_form_starts_nothing_and_shows_the_run_page_again_with_labels_and_choices(client, reviewer, run):
    response = client.post(f"/runs/{run.pk}/evaluate/", {"gold_policy": "annotator", "tau": "3", "window": "4"})
    assert response.status_code == 400
    assert not EvaluationJob.objects.exists()
    content = response.content.decode()
    # each error once, at its field, and what was typed kept
    assert content.count("Choose the annotator whose gold to use.") == 1
    assert content.count("τ must be from 0 to 1; 3 is outside that range") == 1
    assert "gold_annotator:" not in content and "tau:" not in content
    assert '<option value="annotator" selected>' in content  # the choices made are kept
    assert 'name="window" value="4"' in content and 'name="tau" value="3"' in content


def test_a_run_without_trajectories_cannot_be_evaluated(client, reviewer):
    from trajectories.services.runs import get_or_create_run

    empty = get_or_create_run("empty-run")
    assert f"/runs/{empty.pk}/evaluate/" not in client.get(f"/runs/{empty.pk}/").content.decode()
    response = client.post(f"/runs/{empty.pk}/evaluate/", {"gold_policy": "approved", "tau": "0.7", "window": "1"},
                           follow=True)
    assert "holds no trajectories: there is nothing to evaluate" in response.content.decode()
    assert not EvaluationJob.objects.exists()


def test_summary_headers_are_metric_names(client, reviewer, run):
    from metrics.services.evaluation import create_evaluation, start_evaluation

    job = create_evaluation(runs=[run], judge_config=JudgeConfigFactory(name="exact", backend="exact"))
    start_evaluation(job)
    content = client.get(f"/evaluations/{job.pk}/").content.decode()
    assert "<th>Step success</th>" in content and "<th>Element accuracy</th>" in content
    assert "stepsuccess" not in content and "elementaccuracy" not in content


def test_strangers_may_not_start_or_cancel(client, run):
    client.force_login(UserFactory(username="stranger"))
    assert client.post(f"/runs/{run.pk}/evaluate/", {"tau": "0.7", "window": "1"}).status_code == 403


def test_cancel_and_rerun_buttons(client, reviewer, run):
    from metrics.services.evaluation import create_evaluation

    job = create_evaluation(runs=[run], judge_config=JudgeConfigFactory(name="exact", backend="exact"))
    assert client.post(f"/evaluations/{job.pk}/cancel/").status_code == 302
    job.refresh_from_db()
    assert job.status == "cancelled"
    response = client.post(f"/evaluations/{job.pk}/rerun/")
    rerun = EvaluationJob.objects.get(replaces=job)
    assert response.url == f"/evaluations/{rerun.pk}/"
    assert rerun.status == "done" and rerun.scores.count() == 1
    job.refresh_from_db()
    assert job.status == "cancelled"


def test_run_page_offers_evaluation_and_lists_jobs(client, reviewer, run):
    from metrics.services.evaluation import create_evaluation, start_evaluation

    page = client.get(f"/runs/{run.pk}/").content.decode()
    assert "Not evaluated yet" in page and f"/runs/{run.pk}/evaluate/" in page
    job = create_evaluation(runs=[run], judge_config=JudgeConfigFactory(name="exact", backend="exact"))
    start_evaluation(job)
    page = client.get(f"/runs/{run.pk}/").content.decode()
    assert f"/evaluations/{job.pk}/" in page


def test_trajectory_page_traces_every_score_to_its_decisions(client, reviewer, run):
    from metrics.services.evaluation import create_evaluation, start_evaluation

    job = create_evaluation(runs=[run], judge_config=JudgeConfigFactory(name="exact", backend="exact"))
    start_evaluation(job)
    score = job.scores.get()
    page = client.get(f"/trajectories/{score.trajectory_id}/").content.decode()
    assert f"Evaluation <a href=\"/evaluations/{job.pk}/\">#{job.pk}</a>" in page
    assert "1 of 1 gold steps matched by 1 agent steps" in page
    assert "on the gold path: gold step 1" in page
    for decision in score.decisions.all():
        assert f'id="decision-{decision.pk}"' in page
    assert "<script>alert(1)</script>" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page


def test_re_evaluation_keeps_history_and_gold_changes_are_announced(client, reviewer, run):
    from annotation.models import GoldStep
    from metrics.services.evaluation import create_evaluation, start_evaluation

    first = create_evaluation(runs=[run], judge_config=JudgeConfigFactory(name="exact", backend="exact"))
    start_evaluation(first)
    first.refresh_from_db()
    assert 'id="gold-changed"' not in client.get("/leaderboard/").content.decode()
    assert "Gold changed since" not in client.get(f"/runs/{run.pk}/").content.decode()

    gold = first.scores.get().gold
    GoldStep.objects.filter(gold=gold).update(text="click [9]")
    gold.version += 1
    gold.save()
    run_page = client.get(f"/runs/{run.pk}/").content.decode()
    assert f"Gold changed since evaluation <a href=\"/evaluations/{first.pk}/\">#{first.pk}</a>: 1 score used" in run_page
    assert f'action="/evaluations/{first.pk}/rerun/"' in run_page
    board = client.get("/leaderboard/").content.decode()
    assert 'id="gold-changed"' in board and f'href="/runs/{run.pk}/">agent-a</a> (1 score)' in board

    response = client.post(f"/evaluations/{first.pk}/rerun/")
    second = EvaluationJob.objects.get(replaces=first)
    assert response.url == f"/evaluations/{second.pk}/"
    first_after = EvaluationJob.objects.get(pk=first.pk)
    assert (first_after.started_at, first_after.finished_at) == (first.started_at, first.finished_at)
    assert first_after.scores.get().step_success == 1.0 and second.scores.get().step_success == 0.0

    run_page = client.get(f"/runs/{run.pk}/").content.decode()
    assert f'data-job="{first.pk}"' in run_page and f'data-job="{second.pk}"' in run_page
    assert f're-run of <a href="/evaluations/{first.pk}/">#{first.pk}</a>' in run_page
    assert "Step success 1.000 → 0.000" in run_page and "replaced by a re-run" in run_page
    assert "Gold changed since" not in run_page
    assert 'id="gold-changed"' not in client.get("/leaderboard/").content.decode()
    job_page = client.get(f"/evaluations/{first.pk}/").content.decode()
    assert f'Re-run as <a href="/evaluations/{second.pk}/">evaluation #{second.pk}</a>' in job_page
    assert f"A re-run of <a href=\"/evaluations/{first.pk}/\">evaluation #{first.pk}</a>" in \
        client.get(f"/evaluations/{second.pk}/").content.decode()
