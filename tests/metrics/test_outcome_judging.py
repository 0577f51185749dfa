"""Starting the outcome judge from the run page and the API: the judge chosen, the requests and cost shown
before it starts, the job followed as an evaluation is, and who may start it (as who may evaluate)."""

import html
import re
from decimal import Decimal

import pytest
from django.urls import reverse

from judges.local_llm import LocalLLMServer
from judges.models import OutcomeJob
from tests.api.conftest import client_for, make_users
from tests.factories import (
    AgentRunFactory, JudgeConfigFactory, ScreenshotFactory, StepFactory, TaskFactory, TrajectoryFactory,
)
from tests.judges.conftest import FAST_RETRIES
from trajectories.models import Verdict

pytestmark = pytest.mark.django_db


@pytest.fixture
def llm():
    with LocalLLMServer() as server:
        yield server


@pytest.fixture
def users(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    return make_users()


@pytest.fixture
def config(llm, settings):
    settings.JUDGE_PRICES = {"gpt-4o-mini": {"input": 0.15, "output": 0.60}}
    return JudgeConfigFactory(name="outcome", backend="openai", tested=True, model="gpt-4o-mini", base_url=llm.base_url,
                              options=FAST_RETRIES)


@pytest.fixture
def run(users):
    """Two trajectories of one task text sharing a screenshot, one of another text without any, uploaded by
    the user without a role: 2 key points + 1 screenshot + 3 verdicts = 6 requests."""
    run = AgentRunFactory(name="shopper", uploaded_by=users["reader"])
    coffee = TaskFactory(task_id="1", intent="Add two bags of coffee to the cart")
    kettle = TaskFactory(task_id="2", intent="What is the price of the blue kettle?")
    cart = ScreenshotFactory()
    for task, answer, shot in ((coffee, "Done", cart), (kettle, "$25", None)):
        trajectory = TrajectoryFactory(run=run, task=task, final_answer=answer)
        StepFactory(trajectory=trajectory, index=1, action="click [1]", screenshot=shot)
    other = TrajectoryFactory(run=AgentRunFactory(name="other-shopper", uploaded_by=users["reader"]), task=coffee,
                              final_answer="Added")
    StepFactory(trajectory=other, index=1, action="click [1]", screenshot=cart)
    third = TrajectoryFactory(run=run, task=TaskFactory(task_id="3", intent=coffee.intent), final_answer="Added")
    StepFactory(trajectory=third, index=1, action="click [2]", screenshot=cart)
    return run


def text(response) -> str:
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", response.content.decode())))


def page_client(client, user):
    client.force_login(user)
    return client


def test_the_run_page_offers_the_outcome_judge_to_who_may_evaluate(client, users, run, config):
    page = page_client(client, users["reviewer"]).get(reverse("metrics:run-detail", args=[run.pk]))
    body = page.content.decode()
    assert f'action="{reverse("metrics:judge-outcomes", args=[run.pk])}"' in body
    assert '<option value="outcome">outcome</option>' in body
    assert "Estimate requests and cost…" in body
    client.force_login(users["annotator"])  # neither a reviewer nor the uploader, and nothing judged yet
    body = client.get(reverse("metrics:run-detail", args=[run.pk])).content.decode()
    assert 'id="outcome-judge"' not in body


def test_without_an_openai_judge_the_run_page_says_why(client, users, run):
    JudgeConfigFactory(name="offline", backend="offline")
    body = text(page_client(client, users["reviewer"]).get(reverse("metrics:run-detail", args=[run.pk])))
    assert ("Cannot be started here: no judge configuration can run the outcome judge: it needs an "
            "OpenAI-compatible one (backend openai), which an admin adds in /admin/ (Judge configs) or with "
            "POST /api/judge-configs/.") in body


def test_the_estimate_page_shows_requests_and_cost_before_anything_is_asked(client, users, run, config, llm):
    page = page_client(client, users["reviewer"]).get(reverse("metrics:judge-outcomes", args=[run.pk]),
                                                      {"judge": "outcome"})
    assert page.status_code == 200 and llm.requests == []
    body = page.content.decode()
    cells = dict(re.findall(r'data-estimate="(\w+)">(.*?)</td>', body))
    # Key points: two texts; screenshot: the cart once for the coffee text; verdicts: three trajectories.
    assert (cells["trajectories"], cells["key_points"], cells["screenshots"], cells["verdicts"]) == ("3", "2", "1",
                                                                                                       "3")
    assert cells["requests"] == "<strong>6</strong>" and cells["images"] == "3"  # the screenshot's, two verdicts'
    prompt, answer = map(int, re.fullmatch(r"(\d+) prompt, (\d+) answer", cells["tokens"]).groups())
    assert answer == 2 * 150 + 100 + 3 * 200  # key points, screenshot, verdicts
    assert cells["cost"] == f"${(prompt * Decimal('0.15') + answer * Decimal('0.60')) / 10 ** 6:.6f}"
    plain = text(page)
    assert "An estimate: Requests are counted from the decisions stored now" in plain
    assert "Priced at $0.15 per million prompt tokens" in plain
    assert 'name="judge" value="outcome"' in body and "Start outcome judging" in body


def test_starting_from_the_page_runs_the_job_and_shows_its_progress(client, users, run, config, llm,
                                                                    django_capture_on_commit_callbacks):
    client = page_client(client, users["reader"])  # the run's uploader, without a role
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(reverse("metrics:judge-outcomes", args=[run.pk]), {"judge": "outcome"})
    job = OutcomeJob.objects.get()
    assert response.status_code == 302 and response["Location"] == reverse("metrics:outcome-job", args=[job.pk])
    assert (job.created_by, job.status, job.judged, job.passed) == (users["reader"], "done", 3, 3)
    assert len(llm.requests) == 6  # as estimated
    page = client.get(response["Location"])
    body = page.content.decode()
    assert f'data-url="{reverse("api-outcome-job", args=[job.pk])}" data-status="done"' in body
    assert re.search(r'<progress class="progress" max="100" value="100(\.0)?">', body)
    plain = text(page)
    assert "Done 3 judged, 0 without a verdict, of 3" in plain
    assert "3 of 3 judged trajectories successful · 6 requests behind these verdicts" in plain
    assert Verdict.objects.filter(run=run, source__name="Trajscope outcome judge").count() == 3
    listed = text(client.get(reverse("metrics:run-detail", args=[run.pk])))
    assert f"#{job.pk} Done · judge outcome · 3 judged (3 successful) of 3 · 6 requests" in listed


def test_only_who_may_evaluate_the_run_may_estimate_or_start(client, users, run, config):
    for name in ("annotator",):  # neither a reviewer nor the uploader
        client.force_login(users[name])
        assert client.get(reverse("metrics:judge-outcomes", args=[run.pk]), {"judge": "outcome"}).status_code == 403
        assert client.post(reverse("metrics:judge-outcomes", args=[run.pk]), {"judge": "outcome"}).status_code == 403
    assert not OutcomeJob.objects.exists()
    for name in ("reader", "reviewer", "admin"):  # the uploader, a reviewer, an admin
        client.force_login(users[name])
        assert client.get(reverse("metrics:judge-outcomes", args=[run.pk]), {"judge": "outcome"}).status_code == 200


def test_a_judge_that_cannot_judge_outcomes_is_not_offered(client, users, run, config):
    JudgeConfigFactory(name="offline", backend="offline")
    page = page_client(client, users["reviewer"]).get(reverse("metrics:judge-outcomes", args=[run.pk]),
                                                      {"judge": "offline"})
    assert page.status_code == 400 and "Select a valid choice" in text(page)
    assert '<option value="offline"' not in page.content.decode()


def test_a_second_start_while_the_first_is_unfinished_is_refused_on_the_page(client, users, run, config):
    first = OutcomeJob.objects.create(run=run, judge_config=config, total=3)
    page = page_client(client, users["reviewer"]).post(reverse("metrics:judge-outcomes", args=[run.pk]),
                                                       {"judge": "outcome"})
    assert page.status_code == 400
    assert (f"Outcome judging not started: outcome judging #{first.pk} of run shopper with judge outcome is still "
            "pending: follow it rather than start another.") in text(page)


def test_the_page_keeps_to_the_job_limit(client, users, run, config, settings):
    settings.JOB_LIMITS_PER_ACCOUNT = {"outcome judging": 1}
    OutcomeJob.objects.create(run=AgentRunFactory(), judge_config=config, created_by=users["reviewer"])
    page = page_client(client, users["reviewer"]).post(reverse("metrics:judge-outcomes", args=[run.pk]),
                                                       {"judge": "outcome"})
    assert page.status_code == 429 and "you already have 1 outcome judgings waiting or running" in text(page)
    assert page["Retry-After"] == "30"


# --- the API ---------------------------------------------------------------------------------------------


def judge_outcomes(user, run, **body):
    return client_for(user).post(reverse("api-judge-outcomes", args=[run.pk]), body, format="json")


def test_the_api_estimates_with_dry_run(users, run, config, llm):
    answer = judge_outcomes(users["reviewer"], run, judge="outcome", dry_run=True)
    assert answer.status_code == 200 and llm.requests == []
    body = answer.json()
    assert (body["run"], body["judge"], body["model"], body["trajectories"]) == ("shopper", "outcome", "gpt-4o-mini",
                                                                                 3)
    assert body["requests"] == {"key_points": 2, "screenshots": 1, "verdicts": 3, "total": 6}
    assert body["images"] == 3 and body["completion_tokens"] == 2 * 150 + 100 + 3 * 200
    assert body["cost"] == pytest.approx((body["prompt_tokens"] * 0.15 + body["completion_tokens"] * 0.60) / 10 ** 6,
                                         abs=1e-6)
    assert body["unreadable"] == []
    assert body["basis"].startswith("Requests are counted from the decisions stored now")
    assert not OutcomeJob.objects.exists()


def test_the_api_starts_the_job_and_follows_it(users, run, config, llm,
                                               django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        answer = judge_outcomes(users["reader"], run, judge="outcome")
    assert answer.status_code == 201
    job = OutcomeJob.objects.get()
    assert answer.json()["id"] == job.pk and answer.json()["run"] == "shopper"
    followed = client_for(users["annotator"]).get(reverse("api-outcome-job", args=[job.pk])).json()
    assert {key: followed[key] for key in ("status", "total", "done", "failed", "passed", "remaining", "percent",
                                           "calls", "errors")} == {
        "status": "done", "total": 3, "done": 3, "failed": 0, "passed": 3, "remaining": 0, "percent": 100.0,
        "calls": 6, "errors": []}
    assert followed["judge"] == "outcome" and followed["finished_at"] is not None
    assert judge_outcomes(users["reader"], run, judge="outcome", dry_run=True).json()["requests"]["total"] == 0


def test_the_api_lets_only_who_may_evaluate_the_run_in(users, run, config):
    refused = judge_outcomes(users["annotator"], run, judge="outcome", dry_run=True)
    assert refused.status_code == 403
    assert refused.json()["detail"] == "only reviewers, admins and the run's uploader may judge its outcomes"
    assert client_for().post(reverse("api-judge-outcomes", args=[run.pk]), {}, format="json").status_code == 401
    for name in ("reader", "reviewer", "admin"):
        assert judge_outcomes(users[name], run, judge="outcome", dry_run=True).status_code == 200


@pytest.mark.parametrize(("judge", "message"), [
    ("", "name a judge configuration of the openai backend: outcome"),
    ("offline", "judge 'offline' uses the offline backend; the outcome judge needs an OpenAI-compatible one "
                "(backend openai)"),
    ("nobody", "no judge named 'nobody'; known: "),
])
def test_the_api_says_which_judge_can_judge_outcomes(users, run, config, judge, message):
    JudgeConfigFactory(name="offline", backend="offline")
    refused = judge_outcomes(users["reviewer"], run, judge=judge, dry_run=True)
    assert refused.status_code == 400 and refused.json()["errors"]["judge"].startswith(message)


def test_the_api_says_why_no_judge_can_judge_outcomes(users, run):
    refused = judge_outcomes(users["reviewer"], run)
    assert refused.status_code == 400
    assert refused.json()["errors"]["judge"] == (
        "no judge configuration can run the outcome judge: it needs an OpenAI-compatible one (backend openai), "
        "which an admin adds in /admin/ (Judge configs) or with POST /api/judge-configs/")


def test_the_api_refuses_a_second_unfinished_job_and_keeps_to_the_limit(users, run, config, settings):
    first = OutcomeJob.objects.create(run=run, judge_config=config, total=3)
    refused = judge_outcomes(users["reviewer"], run, judge="outcome")
    assert refused.status_code == 400 and f"outcome judging #{first.pk} of run shopper" in (
        refused.json()["errors"]["judge"])
    first.delete()
    settings.JOB_LIMITS_PER_ACCOUNT = {"outcome judging": 1}
    OutcomeJob.objects.create(run=AgentRunFactory(), judge_config=config, created_by=users["reviewer"])
    assert judge_outcomes(users["reviewer"], run, judge="outcome").status_code == 429
