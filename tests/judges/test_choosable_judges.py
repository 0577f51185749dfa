"""An LLM judge is chosen only once it has a key and endpoint and its endpoint answered its last test:
the forms show the others disabled with why and where to test them, the API and the services refuse
them with the same reason; judges without a model endpoint are always offered."""

import html
import re

import pytest
from django.urls import reverse

from judges.endpoint_checks import NOT_CONFIGURED, TEST_FAILED, UNTESTED, JudgeNotChoosable, why_not_choosable
from judges.outcome_judging import create_outcome_job
from metrics.forms import EvaluationForm, OutcomeJudgeForm
from metrics.models import EvaluationJob
from metrics.services import evaluation
from tests.api.conftest import client_for, make_users
from tests.factories import AgentRunFactory, JudgeConfigFactory, StepFactory, TrajectoryFactory

pytestmark = pytest.mark.django_db

FAILED_TEST = {"ok": False, "tested_at": "2026-01-05T10:00:00+00:00", "error": "step_match: gave up after 4 requests"}


@pytest.fixture
def users(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    return make_users()


@pytest.fixture
def run(users):
    run = AgentRunFactory(name="shopper", uploaded_by=users["reader"])
    StepFactory(trajectory=TrajectoryFactory(run=run), index=1, action="click [1]")
    return run


@pytest.fixture
def judges(settings, monkeypatch):
    """One LLM judge of each state, and the offline judge."""
    settings.OPENAI_API_KEY = ""
    monkeypatch.delenv("LOCAL_KEY", raising=False)
    own = {"backend": "openai", "model": "m", "base_url": "http://127.0.0.1:8001/v1"}
    return {
        "ready": JudgeConfigFactory(name="ready", tested=True, **own),
        "untested": JudgeConfigFactory(name="untested", **own),
        "failed": JudgeConfigFactory(name="failed", last_test=FAILED_TEST, **own),
        "keyless": JudgeConfigFactory(name="keyless", tested=True, api_key_env="LOCAL_KEY", **own),
        "no-endpoint": JudgeConfigFactory(name="no-endpoint", backend="openai", model="m", tested=True),
        "offline": JudgeConfigFactory(name="offline", backend="offline"),
    }


def text(response) -> str:
    words = html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", response.content.decode())))
    return re.sub(r" ([:,.])", r"\1", words)


def test_each_reason_has_its_code_and_message(judges):
    assert why_not_choosable(judges["ready"]) is None
    assert why_not_choosable(judges["offline"]) is None
    reasons = {name: why_not_choosable(judges[name]) for name in ("untested", "failed", "keyless", "no-endpoint")}
    assert {name: refusal.code for name, refusal in reasons.items()} == {
        "untested": UNTESTED, "failed": TEST_FAILED, "keyless": NOT_CONFIGURED, "no-endpoint": NOT_CONFIGURED}
    assert str(reasons["untested"]) == (
        "judge 'untested' has never answered an endpoint test: test it on its page (/judges/untested/), with "
        "POST /api/judge-configs/<id>/test/ or manage.py test_judge untested")
    assert str(reasons["failed"]).startswith("judge 'failed' failed its last endpoint test (2026-01-05T10:00:00): "
                                             "step_match: gave up after 4 requests. Once the endpoint is fixed, test")
    assert str(reasons["keyless"]) == "judge 'keyless' has no API key: the environment variable LOCAL_KEY is not set"
    assert str(reasons["no-endpoint"]) == ("judge 'no-endpoint' has no endpoint of its own and OPENAI_API_KEY is "
                                           "not set for https://api.openai.com/v1")


def test_a_set_key_makes_the_judge_choosable(judges, monkeypatch, settings):
    monkeypatch.setenv("LOCAL_KEY", "sk-local")
    settings.OPENAI_API_KEY = "sk-test"
    assert why_not_choosable(judges["keyless"]) is None
    assert why_not_choosable(judges["no-endpoint"]) is None


def test_the_services_refuse_a_judge_not_choosable(judges, run):
    for name in ("untested", "keyless"):
        with pytest.raises(JudgeNotChoosable, match=f"judge '{name}' has"):
            evaluation.create_evaluation(runs=[run], judge_config=judges[name])
        with pytest.raises(JudgeNotChoosable, match=f"judge '{name}' has"):
            create_outcome_job(run, judges[name])
    assert not EvaluationJob.objects.exists()


def test_the_evaluation_form_offers_only_choosable_judges(judges, users):
    form = EvaluationForm(user=users["reviewer"])
    rendered = str(form["judge"])
    for name in ("ready", "offline", "exact"):
        assert re.search(rf'<option value="{name}">{name}</option>', rendered)
    for name in ("untested", "failed", "keyless", "no-endpoint"):
        assert f'<option value="{name}" disabled>{name} (not available yet: see below)</option>' in rendered
    assert [config.name for config, _ in form.judges_not_offered] == [
        "failed", "keyless", "no-endpoint", "untested", "openai"]  # `openai`: the backend's own name, no row
    forged = EvaluationForm({"judge": "untested", "gold_policy": "reference", "tau": "0.7", "window": 1},
                            user=users["reviewer"])
    assert not forged.is_valid()
    assert forged.errors["judge"] == [str(why_not_choosable(judges["untested"]))]


def test_the_run_page_shows_why_and_links_each_judge_to_its_page(client, judges, users, run):
    client.force_login(users["reviewer"])
    page = client.get(reverse("metrics:run-detail", args=[run.pk]))
    body = page.content.decode()
    assert f'<a href="{reverse("judges:config", args=["untested"])}">untested</a>' in body
    shown = text(page)
    assert "Not available yet (an LLM judge is chosen once its endpoint answered a test):" in shown
    assert "untested: judge 'untested' has never answered an endpoint test" in shown
    assert "keyless: judge 'keyless' has no API key" in shown
    refused = client.post(reverse("metrics:start", args=[run.pk]),
                          {"judge": "untested", "gold_policy": "reference", "tau": "0.7", "window": 1})
    assert refused.status_code == 400
    assert "judge 'untested' has never answered an endpoint test" in text(refused)
    assert not EvaluationJob.objects.exists()


def test_the_outcome_form_offers_only_choosable_judges(judges):
    form = OutcomeJudgeForm()
    rendered = str(form["judge"])
    assert '<option value="ready">ready</option>' in rendered
    assert '<option value="untested" disabled>untested (not available yet: see below)</option>' in rendered
    forged = OutcomeJudgeForm({"judge": "failed"})
    assert not forged.is_valid()
    assert forged.errors["judge"][0].startswith("judge 'failed' failed its last endpoint test")


@pytest.mark.parametrize(("name", "code"), [("untested", UNTESTED), ("failed", TEST_FAILED),
                                            ("keyless", NOT_CONFIGURED)])
def test_the_api_refuses_with_the_reason_and_its_code(judges, users, run, name, code):
    api = client_for(users["reviewer"])
    for path, body in ((reverse("api-judge-outcomes", args=[run.pk]), {"judge": name}),
                       ("/api/evaluations/", {"runs": ["shopper"], "judge": name})):
        answer = api.post(path, body, format="json")
        assert answer.status_code == 400, path
        assert answer.json() == {"detail": str(why_not_choosable(judges[name])), "code": code}
    assert not EvaluationJob.objects.exists()


def test_the_offline_judge_is_always_offered_and_starts(judges, users, run):
    answer = client_for(users["reviewer"]).post("/api/evaluations/", {"runs": ["shopper"], "judge": "offline"},
                                                format="json")
    assert answer.status_code == 201


def test_a_rerun_is_refused_once_the_judge_is_no_longer_choosable(client, judges, users, run):
    ready = judges["ready"]
    job = evaluation.create_evaluation(runs=[run], judge_config=ready)  # not sent: it stays pending
    ready.last_test = FAILED_TEST
    ready.save(update_fields=["last_test"])
    answer = client_for(users["reviewer"]).post(reverse("api-evaluation-rerun", args=[job.pk]), format="json")
    assert (answer.status_code, answer.json()["code"]) == (400, TEST_FAILED)
    client.force_login(users["reviewer"])
    page = client.post(reverse("metrics:rerun", args=[job.pk]), follow=True)
    assert "Evaluation not run again: judge 'ready' failed its last endpoint test" in text(page)
    assert EvaluationJob.objects.get().status == EvaluationJob.Status.PENDING
