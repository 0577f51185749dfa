import pytest
from django.contrib.auth.models import Group
from rest_framework.test import APIClient

from judges.models import JudgeConfig
from metrics.models import EvaluationJob
from tests.factories import JudgeConfigFactory, UserFactory

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def reviewer():
    user = UserFactory(username="rita")
    user.groups.add(Group.objects.get(name="reviewer"))
    return user


@pytest.fixture
def api(reviewer):
    client = APIClient()
    client.force_authenticate(reviewer)
    return client


def test_start_follow_and_read_scores(api, run):
    JudgeConfigFactory(name="exact", backend="exact")
    response = api.post("/api/evaluations/", {"runs": ["agent-a"], "judge": "exact",
                                              "parameters": {"tau": 0.9}}, format="json")
    assert response.status_code == 201, response.json()
    job_id = response.json()["id"]
    progress = api.get(f"/api/evaluations/{job_id}/").json()
    assert progress["status"] == "done"
    assert (progress["total"], progress["done"], progress["failed"], progress["percent"]) == (1, 1, 0, 100.0)
    scores = api.get(f"/api/evaluations/{job_id}/scores/").json()["results"]
    assert scores[0]["step_success"] == 1.0 and scores[0]["run"] == "agent-a" and scores[0]["decision_ids"]
    assert api.post(f"/api/evaluations/{job_id}/cancel/").status_code == 400
    rerun = api.post(f"/api/evaluations/{job_id}/rerun/").json()
    assert (rerun["status"], rerun["replaces"]) == ("done", job_id) and rerun["id"] != job_id
    assert api.get(f"/api/evaluations/{job_id}/").json()["status"] == "done"  # kept as history


@pytest.mark.parametrize("backend", ["exact", "offline"])
def test_a_backend_name_is_a_judge_on_a_fresh_database(api, run, backend):
    response = api.post("/api/evaluations/", {"runs": ["agent-a"], "judge": backend}, format="json")
    assert response.status_code == 201, response.json()
    assert JudgeConfig.objects.get().backend == backend


def test_an_unknown_judge_lists_the_known_ones(api, run):
    response = api.post("/api/evaluations/", {"runs": ["agent-a"], "judge": "gpt5"}, format="json")
    assert response.status_code == 400
    assert response.json()["errors"]["judge"] == "no judge named 'gpt5'; known: exact, offline, openai"


def test_default_judge_is_used_when_none_is_named(api, run):
    response = api.post("/api/evaluations/", {"runs": ["agent-a"]}, format="json")
    assert response.status_code == 201
    assert response.json()["status"] == "done"


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"runs": ["nope"]}, "runs"),
        ({"runs": []}, "runs"),
        ({"runs": ["agent-a"], "gold_policy": "annotator"}, "gold_annotator"),
        ({"runs": ["agent-a"], "parameters": {"window": 0}}, "parameters"),
    ],
)
def test_bad_requests_name_the_field(api, run, body, field):
    response = api.post("/api/evaluations/", body, format="json")
    assert response.status_code == 400
    assert field in response.json()["errors"]


@pytest.mark.parametrize("policy", ["reference", "best", "annotator=ann2"])
def test_contradictory_gold_parameters_are_refused(api, run, policy):
    UserFactory(username="ann1")
    UserFactory(username="ann2")
    response = api.post("/api/evaluations/", {"runs": ["agent-a"], "gold_policy": policy, "gold_annotator": "ann1"},
                        format="json")
    assert response.status_code == 400
    assert "gold_annotator" in response.json()["errors"]
    assert not EvaluationJob.objects.exists()


def test_only_reviewers_or_the_uploader_may_evaluate(run):
    client = APIClient()
    client.force_authenticate(UserFactory(username="stranger"))
    assert client.post("/api/evaluations/", {"runs": ["agent-a"]}, format="json").status_code == 403
    run.uploaded_by = UserFactory(username="owner")
    run.save()
    client.force_authenticate(run.uploaded_by)
    assert client.post("/api/evaluations/", {"runs": ["agent-a"]}, format="json").status_code == 201


def test_anonymous_requests_are_refused(run):
    assert APIClient().get("/api/evaluations/").status_code in (401, 403)
