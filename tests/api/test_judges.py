import pytest

from judges.models import JudgeConfig, JudgeDecision
from tests.api.conftest import client_for
from tests.factories import EvaluationJobFactory, JudgeConfigFactory, JudgeDecisionFactory

pytestmark = pytest.mark.django_db

LLM = {"name": "gpt-mini", "backend": "openai", "model": "gpt-4o-mini", "base_url": "http://127.0.0.1:9/v1",
       "api_key_env": "MY_KEY", "options": {"timeout": 20}}


def test_everyone_reads_judge_configs_only_admins_write(users):
    JudgeConfigFactory(name="offline")
    for role in ("reader", "annotator", "reviewer"):
        client = client_for(users[role])
        assert [c["name"] for c in client.get("/api/judge-configs/").json()["results"]] == ["offline"]
        refused = client.post("/api/judge-configs/", LLM, format="json")
        assert refused.status_code == 403 and refused.json()["code"] == "permission_denied"
    admin = client_for(users["admin"])
    created = admin.post("/api/judge-configs/", LLM, format="json")
    assert created.status_code == 201, created.json()
    config_id = created.json()["id"]
    changed = admin.patch(f"/api/judge-configs/{config_id}/", {"temperature": 0.5}, format="json")
    assert changed.json()["temperature"] == 0.5
    assert client_for(users["reviewer"]).delete(f"/api/judge-configs/{config_id}/").status_code == 403
    assert admin.delete(f"/api/judge-configs/{config_id}/").status_code == 204
    assert not JudgeConfig.objects.filter(name="gpt-mini").exists()


def test_a_new_default_replaces_the_old_one(users):
    old = JudgeConfigFactory(name="offline", is_default=True)
    admin = client_for(users["admin"])
    response = admin.post("/api/judge-configs/", {"name": "exact", "backend": "exact", "is_default": True},
                          format="json")
    assert response.status_code == 201, response.json()
    old.refresh_from_db()
    assert not old.is_default and JudgeConfig.objects.get(name="exact").is_default


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"backend": "magic"}, "backend"),
        ({"model": ""}, "non_field_errors"),  # the openai backend needs a model
        ({"options": ["timeout"]}, "options"),
        ({"options": {"timeout": []}}, "non_field_errors"),
        ({"options": {"screenshot_threshold": 9}}, "non_field_errors"),  # the outcome judge's 1-5
        ({"backend": "offline", "options": {"judge_outcomes": True}}, "non_field_errors"),
        ({"name": "not a slug"}, "name"),
        ({"temperature": 3}, "temperature"),
    ],
)
def test_bad_configs_are_refused_naming_the_field(users, change, field):
    response = client_for(users["admin"]).post("/api/judge-configs/", {**LLM, **change}, format="json")
    assert response.status_code == 400 and field in response.json()["errors"], response.json()
    assert not JudgeConfig.objects.exists()


def test_a_config_used_by_evaluations_is_kept(users):
    job = EvaluationJobFactory(judge_config=JudgeConfigFactory(name="offline"))
    response = client_for(users["admin"]).delete(f"/api/judge-configs/{job.judge_config.pk}/")
    assert response.status_code == 409 and response.json()["code"] == "conflict"
    assert "used by 1 evaluation job" in response.json()["detail"]


def test_decisions_filter_by_job_and_review(api, platform):
    job = platform["jobs"]["agent-a"]
    listed = api.get(f"/api/judge-decisions/?job={job.pk}&kind=trajectory_match").json()
    assert listed["count"] == 3  # one step-matching question per trajectory with gold
    assert api.get("/api/judge-decisions/?reviewed=true").json()["count"] == 0
    trajectory = job.scores.get(trajectory__task__task_id="101").trajectory_id
    kinds = {row["kind"] for row in api.get(f"/api/judge-decisions/?trajectory={trajectory}").json()["results"]}
    assert {"trajectory_match", "groundedness"} <= kinds


def test_reviewers_confirm_or_overrule_a_decision(users):
    decision = JudgeDecisionFactory(kind="repetition", score=0.9,
                                    inputs={"previous": {"text": "a"}, "step": {"text": "a"}})
    url = f"/api/judge-decisions/{decision.pk}/verdict/"
    refused = client_for(users["annotator"]).post(url, {"verdict": "overrule"}, format="json")
    assert refused.status_code == 403 and refused.json()["detail"] == "auditing the judge needs the reviewer role"
    response = client_for(users["reviewer"]).post(url, {"verdict": "overrule", "note": "not a repeat"}, format="json")
    assert response.status_code == 200, response.json()
    body = response.json()
    assert (body["human_score"], body["effective_score"], body["reviewed_by"]) == (0.0, 0.0, "rita")
    assert JudgeDecision.objects.get(pk=decision.pk).human_note == "not a repeat"


def test_a_cell_of_a_step_matching_decision_needs_its_steps(users, platform):
    decision = JudgeDecision.objects.filter(kind="trajectory_match").first()
    client = client_for(users["reviewer"])
    url = f"/api/judge-decisions/{decision.pk}/verdict/"
    missing = client.post(url, {"verdict": "confirm"}, format="json")
    assert missing.status_code == 400 and "name a gold step and an agent step" in missing.json()["errors"]["verdict"]
    confirmed = client.post(url, {"verdict": "confirm", "gold_step": 1, "agent_step": 1}, format="json")
    assert confirmed.status_code == 200 and confirmed.json()["kind"] == "step_match"
