"""Blind review holds wherever gold text shows: judge decisions, the trajectory page, the side-by-side
comparison and the decision exports follow the rule of the gold itself (reviewers, the gold's own
annotator, and whoever `visible_gold` lets read it)."""

import pytest
from django.core.exceptions import PermissionDenied
from django.test import Client
from django.urls import reverse

from annotation.selectors import agreement_report
from judges.models import JudgeDecision
from metrics.models import EvaluationJob
from metrics.services import evaluation
from metrics.tasks import run_evaluation
from tests.api.conftest import client_for, make_platform, make_users, member
from tests.factories import GoldStepFactory, GoldTrajectoryFactory

SECRET = "Open the SECRET admin menu"


@pytest.fixture
def users(db):
    return make_users()


@pytest.fixture
def scene(users, django_capture_on_commit_callbacks):
    """Approved gold on three tasks (alice); on task 101 a second, only submitted gold (bea) that a
    reviewer evaluated both runs against and compared on the agreement page."""
    with django_capture_on_commit_callbacks(execute=True):
        platform = make_platform(users)
    bea = member("annotator", "bea")
    hidden = GoldTrajectoryFactory(task=platform["tasks"][0], annotator=bea, status="submitted")
    for index, text in enumerate([SECRET, "click [2]", "click [3]"], start=1):
        GoldStepFactory(gold=hidden, index=index, text=text)
    reviewer, judge = users["reviewer"], platform["judge"]
    jobs = {
        "each": evaluation.create_evaluation(runs=[platform["runs"]["agent-a"]], judge_config=judge,
                                             gold_policy="each", user=reviewer),
        "bea": evaluation.create_evaluation(runs=[platform["runs"]["agent-b"]], judge_config=judge,
                                            gold_policy="annotator", gold_annotator=bea, user=reviewer),
    }
    for job in jobs.values():
        run_evaluation(job.pk)
        assert EvaluationJob.objects.get(pk=job.pk).status == "done"
    agreement_report(judge_config=judge)
    secret_decisions = [d for d in JudgeDecision.objects.all() if SECRET in str(d.inputs)]
    assert len(secret_decisions) >= 3  # scored against bea's gold by both jobs, and compared with alice's
    return {**platform, "bea": bea, "hidden": hidden, "secret_jobs": jobs, "secret_decisions": secret_decisions,
            "outsider": member("annotator", "cara")}


def _readers(users, scene) -> dict:
    """Who may not read bea's submitted gold: an account without a role, an annotator who has not done the task."""
    return {"no role": users["reader"], "other annotator": scene["outsider"]}


def test_judge_decisions_api_hides_decisions_holding_gold_the_user_may_not_read(users, scene):
    for who, user in _readers(users, scene).items():
        api = client_for(user)
        listed = api.get("/api/judge-decisions/?page_size=500").json()
        assert SECRET not in str(listed["results"]), who
        for decision in scene["secret_decisions"]:
            assert api.get(f"/api/judge-decisions/{decision.pk}/").status_code == 404, who
    reviewer_list = client_for(users["reviewer"]).get("/api/judge-decisions/?page_size=500").json()
    assert {d.pk for d in scene["secret_decisions"]} <= {row["id"] for row in reviewer_list["results"]}


def test_the_gold_owner_reads_the_decisions_scored_against_her_gold(users, scene):
    listed = client_for(scene["bea"]).get("/api/judge-decisions/?page_size=500").json()["results"]
    assert SECRET in str(listed)
    scored = {d.pk for d in scene["secret_decisions"] if d.scores.exists()}
    assert scored and scored <= {row["id"] for row in listed}


def test_decisions_without_gold_text_stay_open_to_every_account(users, scene):
    listed = client_for(users["reader"]).get("/api/judge-decisions/?kind=groundedness&page_size=500").json()
    assert listed["count"] == JudgeDecision.objects.filter(kind="groundedness").count() > 0


def test_anonymous_reads_no_decision(scene):
    assert client_for(None).get("/api/judge-decisions/").status_code in (401, 403)


def test_decision_exports_leave_out_gold_the_user_may_not_read(users, scene):
    job = scene["secret_jobs"]["each"]
    for who, user in _readers(users, scene).items():
        api = client_for(user)
        exported = api.get(f"/api/exports/decisions.csv?run=agent-a&job={job.pk}")
        text = exported.getvalue().decode()
        assert exported.status_code == 200 and SECRET not in text, who
        assert ",groundedness," in text, who  # decisions that quote no gold are exported to everyone
        if who == "no role":
            assert ",step_match,1,1,click [1]," in text  # alice's approved gold is still there
        web = Client()
        web.force_login(user)
        page = web.get(reverse("metrics:export", args=["decisions", "csv"]),
                       {"run": scene["runs"]["agent-a"].pk, "job": job.pk})
        assert page.status_code == 200 and SECRET not in page.getvalue().decode(), who
    reviewer = client_for(users["reviewer"]).get(f"/api/exports/decisions.csv?run=agent-a&job={job.pk}")
    assert SECRET in reviewer.getvalue().decode()


def test_trajectory_page_shows_gold_text_only_to_who_may_read_the_gold(users, scene):
    job = scene["secret_jobs"]["bea"]
    trajectory = job.scores.get(trajectory__task=scene["tasks"][0]).trajectory
    url = reverse("metrics:trajectory-detail", args=[trajectory.pk]) + f"?job={job.pk}"
    for who, user in _readers(users, scene).items():
        web = Client()
        web.force_login(user)
        page = web.get(url).content.decode()
        assert SECRET not in page, who
        assert "Step Success" in page and "gold text is hidden" in page, who
    for who in ("reviewer",):
        web = Client()
        web.force_login(users[who])
        assert SECRET in web.get(url).content.decode()
    web = Client()
    web.force_login(scene["bea"])
    assert SECRET in web.get(url).content.decode()


def test_side_by_side_hides_gold_text_the_user_may_not_read(users, scene):
    task = scene["tasks"][0]
    query = "?baseline=agent-a&candidate=agent-b"
    for who, user in _readers(users, scene).items():
        body = client_for(user).get(f"/api/comparisons/tasks/{task.pk}/{query}").json()
        assert SECRET not in str(body), who
        assert body["gold_hidden"] is True and body["rows"], who
        web = Client()
        web.force_login(user)
        runs = scene["runs"]
        page = web.get(reverse("metrics:compare-task", args=[runs["agent-a"].pk, runs["agent-b"].pk, task.pk]))
        assert page.status_code == 200 and SECRET not in page.getvalue().decode(), who
        assert "gold text is hidden" in page.content.decode(), who
    body = client_for(users["reviewer"]).get(f"/api/comparisons/tasks/{task.pk}/{query}").json()
    assert SECRET in str(body) and body["gold_hidden"] is False


@pytest.mark.parametrize("policy", [{"gold_policy": "each"}, {"gold_policy": "annotator", "gold_annotator": "bea"}])
def test_only_reviewers_evaluate_against_gold_other_than_the_reference(users, scene, policy):
    run = scene["runs"]["agent-a"]  # uploaded by the account without a role
    before = EvaluationJob.objects.count()
    refused = client_for(users["reader"]).post("/api/evaluations/", {"runs": ["agent-a"], **policy}, format="json")
    assert refused.status_code == 403 and "reviewer" in refused.json()["detail"]
    web = Client()
    web.force_login(users["reader"])
    web.post(reverse("metrics:start", args=[run.pk]), {**policy, "tau": 0.7, "window": 1})
    assert EvaluationJob.objects.count() == before
    with pytest.raises(PermissionDenied):
        evaluation.create_evaluation(runs=[run], judge_config=scene["judge"], user=users["reader"],
                                     gold_policy=policy["gold_policy"],
                                     gold_annotator=scene["bea"] if "gold_annotator" in policy else None)
    allowed = client_for(users["reviewer"]).post("/api/evaluations/", {"runs": ["agent-a"], **policy}, format="json")
    assert allowed.status_code == 201, allowed.json()


def test_the_reference_gold_stays_open_to_a_runs_uploader(users, scene):
    response = client_for(users["reader"]).post("/api/evaluations/", {"runs": ["agent-a"]}, format="json")
    assert response.status_code == 201, response.json()
    web = Client()
    web.force_login(users["reader"])
    page = web.get(reverse("metrics:run-detail", args=[scene["runs"]["agent-a"].pk])).content.decode()
    assert 'value="reference"' in page and 'value="each"' not in page


def test_only_reviewers_rerun_or_cancel_an_evaluation_against_other_gold(users, scene):
    job = scene["secret_jobs"]["each"]  # of agent-a, the no-role account's own run
    refused = client_for(users["reader"]).post(f"/api/evaluations/{job.pk}/rerun/")
    assert refused.status_code == 403
    web = Client()
    web.force_login(users["reader"])
    assert web.post(reverse("metrics:cancel", args=[job.pk])).status_code == 403
    assert client_for(users["reviewer"]).post(f"/api/evaluations/{job.pk}/rerun/").status_code == 200
