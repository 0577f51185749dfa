"""Testing a judge's endpoint: one small question of each kind, a report per question, and no job
on an LLM judge whose endpoint has not answered its last test."""

import pytest
from django.core.management import CommandError, call_command

from judges.endpoint_checks import TEST_FAILED, UNTESTED, JudgeNotChoosable, run_endpoint_test
from judges.local_llm import LocalLLMServer, Reply, well_formed_reply
from judges.outcome_judging import create_outcome_job
from judges.outcome_questions import KEY_POINTS, SCREENSHOT, VERDICT
from judges.services import save_judge_config
from metrics.services import evaluation
from tests.api.conftest import client_for, make_users
from tests.factories import AgentRunFactory, JudgeConfigFactory, TrajectoryFactory

from .conftest import FAST_RETRIES

pytestmark = pytest.mark.django_db

KINDS = ["step_match", "trajectory_match", "repetition", "requirements", "grounded", "relevant", "fuzzy_answer",
         "element_at_point", KEY_POINTS, SCREENSHOT, VERDICT]


def _unsure_verdicts(request: dict) -> Reply:
    if '"success"' in request["messages"][0]["content"]:
        return Reply({"success": "probably", "reasoning": "?"})
    return well_formed_reply(request)


@pytest.fixture
def broken_llm():
    with LocalLLMServer(_unsure_verdicts) as server:
        yield server


def _config(server, **options):
    return JudgeConfigFactory(name="local", backend="openai", model="m", base_url=server.base_url,
                              options={**FAST_RETRIES, **options})


def test_every_kind_of_question_is_asked_once_and_reported(llm_server, settings):
    settings.JUDGE_PRICES = {"m": {"input": 1.0, "output": 2.0}}
    config = _config(llm_server)
    report = run_endpoint_test(config)
    assert report["ok"] is True and report["error"] == ""
    assert [row["question"] for row in report["questions"]] == KINDS
    assert all(row["parsed"] and row["structured_output"] == "json_schema" and row["repairs"] == 0
               for row in report["questions"])
    step = report["questions"][0]
    assert (step["prompt_tokens"], step["completion_tokens"], step["cost"]) == (100, 20, "0.000140")
    assert step["latency_ms"] >= 0 and step["calls"] == 1
    # Both aspects of groundedness share one request; every other kind is a request of its own.
    assert len(llm_server.requests) == len(KINDS) - 1
    config.refresh_from_db()
    assert config.last_test == report


def test_a_judge_that_reads_no_images_is_not_asked_about_them(llm_server):
    report = run_endpoint_test(_config(llm_server, screenshots=False))
    skipped = [row["question"] for row in report["questions"] if not row["asked"]]
    assert skipped == ["element_at_point", SCREENSHOT] and report["ok"] is True


def test_jobs_refuse_to_start_on_a_judge_whose_last_test_failed(broken_llm):
    config = _config(broken_llm)
    report = run_endpoint_test(config)
    assert report["ok"] is False
    verdict = report["questions"][-1]
    assert (verdict["parsed"], verdict["repairs"], verdict["structured_output"]) == (False, 1, "json_schema")
    assert report["error"] == (f"{VERDICT}: malformed answer after one repair request: success must be "
                               "true or false, not 'probably'")
    run = AgentRunFactory(name="shopper")
    TrajectoryFactory(run=run)
    with pytest.raises(JudgeNotChoosable, match="judge 'local' failed its last endpoint test .*success must be true") \
            as refused:
        evaluation.create_evaluation(runs=[run], judge_config=config)
    assert refused.value.code == TEST_FAILED
    with pytest.raises(JudgeNotChoosable, match="manage.py test_judge local"):
        create_outcome_job(run, config)
    # Pointing it elsewhere forgets the test: it says nothing of the new endpoint, which is tested anew.
    config.base_url = "http://127.0.0.1:9/v1"
    save_judge_config(config)
    assert config.last_test == {}
    with pytest.raises(JudgeNotChoosable, match="judge 'local' has never answered an endpoint test") as refused:
        evaluation.create_evaluation(runs=[run], judge_config=config)
    assert refused.value.code == UNTESTED


def test_the_command_prints_each_question_and_fails_with_the_endpoint(broken_llm, llm_server, capsys):
    _config(llm_server)
    call_command("test_judge", "local")
    out = capsys.readouterr().out
    assert "- step_match           parsed   mode json_schema" in out and "every question parsed" in out
    JudgeConfigFactory(name="broken", backend="openai", model="m", base_url=broken_llm.base_url,
                       options=FAST_RETRIES)
    with pytest.raises(CommandError, match="the endpoint test failed: outcome_verdict: malformed answer"):
        call_command("test_judge", "broken")
    with pytest.raises(CommandError, match="no judge named 'nope'"):
        call_command("test_judge", "nope")


def test_admins_test_an_endpoint_through_the_api_and_the_page(llm_server, client, settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    users = make_users()
    config = _config(llm_server)
    assert client_for(users["reviewer"]).post(f"/api/judge-configs/{config.pk}/test/").status_code == 403
    response = client_for(users["admin"]).post(f"/api/judge-configs/{config.pk}/test/")
    assert response.status_code == 200 and response.json()["ok"] is True
    assert client_for(users["reader"]).get(f"/api/judge-configs/{config.pk}/").json()["last_test"]["ok"] is True

    client.force_login(users["reviewer"])
    page = client.get("/judges/local/").content.decode()
    assert "every question asked parsed" in page and "Test this endpoint</button>" not in page
    assert client.post("/judges/local/test/").status_code == 403
    client.force_login(users["admin"])
    assert client.post("/judges/local/test/").status_code == 302
    page = client.get("/judges/local/").content.decode()
    assert "Test this endpoint</button>" in page and "<td>outcome_verdict</td>" in page


def test_a_judge_without_a_model_is_asked_what_its_backend_answers():
    report = run_endpoint_test(JudgeConfigFactory(name="exact", backend="exact"))
    assert report["ok"] is True and report["backend"] == "exact"
    not_asked = {row["question"]: row["error"] for row in report["questions"] if not row["asked"]}
    assert not_asked == {"element_at_point": "not asked: the judge reads no images",
                         KEY_POINTS: "not asked: only an OpenAI-compatible judge runs the outcome judge",
                         SCREENSHOT: "not asked: the judge reads no images",
                         VERDICT: "not asked: only an OpenAI-compatible judge runs the outcome judge"}
