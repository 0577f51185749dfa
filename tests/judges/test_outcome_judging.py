"""The outcome judge against a local OpenAI-compatible server: what it asks, caches, costs and stores."""

import base64
import html
import re
import time
from decimal import Decimal

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from judges.local_llm import Reply, well_formed_reply
from judges.models import JudgeConfig, JudgeDecision, OutcomeJob
from judges.outcome_judging import judge_outcomes, run_outcome_job
from judges.services import JudgeConfigInUse, delete_judge_config, save_judge_config
from metrics.services.evaluation import create_evaluation
from tests.factories import (
    AgentRunFactory, JudgeConfigFactory, ScreenshotFactory, StepFactory, TaskFactory, TrajectoryFactory, UserFactory,
)
from trajectories.models import Verdict

from .conftest import FAST_RETRIES

pytestmark = pytest.mark.django_db

PRICES = {"gpt-4o-mini": {"input": 0.15, "output": 0.60}}
CART = b"\x89PNG\r\n cart with two items"
HOME = b"\x89PNG\r\n home page"
INTENT = "Add two bags of <b>coffee</b> to the cart"


def data_uri(content: bytes) -> str:
    return f"data:image/png;base64,{base64.b64encode(content).decode()}"


def images(request: dict) -> list[str]:
    content = request["messages"][1]["content"]
    return [part["image_url"]["url"] for part in content if part["type"] == "image_url"] if isinstance(
        content, list) else []


def text(request: dict) -> str:
    content = request["messages"][1]["content"]
    return content if isinstance(content, str) else next(p["text"] for p in content if p["type"] == "text")


def kind(request: dict) -> str:
    system = request["messages"][0]["content"]
    return next(name for key, name in (('"key_points"', "key points"), ('"relevance"', "screenshot"),
                                       ('"success"', "verdict")) if key in system)


def grader(request: dict) -> Reply:
    """The cart screenshot is relevant, the home page is not; the verdict is a success."""
    if kind(request) == "screenshot":
        relevant = images(request) == [data_uri(CART)]
        return Reply({"relevance": 5 if relevant else 2, "reasoning": "Cart shown." if relevant else "Home page."})
    if kind(request) == "key points":
        return Reply({"key_points": ["two bags of coffee", "in the cart"]})
    return well_formed_reply(request)


@pytest.fixture
def outcome_config(llm_server, settings):
    settings.JUDGE_PRICES = PRICES
    llm_server.responder = grader
    return JudgeConfigFactory(name="outcome", backend="openai", model="gpt-4o-mini", base_url=llm_server.base_url,
                              tested=True, options=FAST_RETRIES)


@pytest.fixture
def trajectory():
    run = AgentRunFactory(name="shopper")
    task = TaskFactory(intent=INTENT)
    trajectory = TrajectoryFactory(run=run, task=task, final_answer="Done: 2 bags in the cart.")
    home, cart = ScreenshotFactory(image__data=HOME), ScreenshotFactory(image__data=CART)
    StepFactory(trajectory=trajectory, index=1, action="click [12]", element_label="button 'Coffee'", screenshot=home)
    StepFactory(trajectory=trajectory, index=2, action="type [7] [2]", screenshot=cart)
    StepFactory(trajectory=trajectory, index=3, action="stop [Done]", screenshot=cart)  # the same image again
    return trajectory


def test_a_trajectory_is_judged_from_key_points_screenshots_and_its_actions(outcome_config, llm_server, trajectory):
    report = judge_outcomes(trajectory.run, outcome_config)

    assert [kind(r) for r in llm_server.requests] == ["key points", "screenshot", "screenshot", "verdict"]
    key_points, *shots, final = llm_server.requests
    assert text(key_points) == f"Task: {INTENT}"
    assert sorted(images(r)[0] for r in shots) == sorted([data_uri(HOME), data_uri(CART)])
    assert all("1. two bags of coffee\n2. in the cart" in text(r) for r in shots)
    assert images(final) == [data_uri(CART)]  # the home page scored 2, under the threshold 3
    prompt = text(final)
    assert INTENT in prompt and "1. two bags of coffee\n2. in the cart" in prompt
    assert "1. click [12] (button 'Coffee')\n2. type [7] [2]\n3. stop [Done]" in prompt
    assert "Final answer: Done: 2 bags in the cart." in prompt
    assert "Screenshots: 1 attached, of steps 2, in that order." in prompt

    verdict = Verdict.objects.select_related("source").get()
    assert (verdict.run, verdict.task, verdict.trajectory) == (trajectory.run, trajectory.task, trajectory)
    source = verdict.source
    assert (source.kind, source.name, source.model, source.threshold) == (
        "llm_judge", "Trajscope outcome judge", "gpt-4o-mini", 3)
    assert verdict.success is True and verdict.source_name == "judge outcome"
    assert verdict.explanation == (
        "Key points:\n1. two bags of coffee\n2. in the cart\n\n"
        "Screenshots, relevance to the key points from 1 to 5 (shown to the judge: 3 or above, at most 5):\n"
        "- step 1: 2 Home page.\n- step 2: 5 (shown) Cart shown.\n\n"
        "Verdict: success\nEvery key point is met."
    )
    # Four requests of 100 prompt and 20 completion tokens: 4 * (100 * 0.15 + 20 * 0.60) / 1M.
    assert (report.total, report.judged, report.passed, report.errors) == (1, 1, 1, [])
    assert (report.calls, report.cost) == (4, Decimal("0.000108"))
    assert set(JudgeDecision.objects.values_list("kind", "cost")) == {
        ("outcome_key_points", Decimal("0.000027")), ("outcome_screenshot", Decimal("0.000027")),
        ("outcome_verdict", Decimal("0.000027"))}


def test_judging_again_makes_no_request_and_keeps_one_verdict(outcome_config, llm_server, trajectory):
    judge_outcomes(trajectory.run, outcome_config)
    again = judge_outcomes(trajectory.run, outcome_config)
    assert len(llm_server.requests) == 4
    assert Verdict.objects.count() == 1 and again.judged == 1
    assert again.cost == Decimal("0.000108")  # what the cached decisions cost when made


def test_a_trajectory_without_screenshots_is_judged_on_text_alone(outcome_config, llm_server):
    trajectory = TrajectoryFactory(task=TaskFactory(intent="What is the price of the blue kettle?"),
                                   final_answer="$25")
    StepFactory(trajectory=trajectory, index=1, action="stop [$25]")
    judge_outcomes(trajectory.run, outcome_config)
    assert [kind(r) for r in llm_server.requests] == ["key points", "verdict"]
    final = llm_server.requests[-1]
    assert isinstance(final["messages"][1]["content"], str)
    assert "Screenshots: None: judge from the text alone." in text(final)
    explanation = Verdict.objects.get().explanation
    assert "No screenshots: judged on the task, the actions and the final answer alone." in explanation


def test_a_malformed_verdict_is_repaired_once_then_stored_as_an_error_not_a_verdict(outcome_config, llm_server,
                                                                                  trajectory):
    def no_json_verdict(request):
        return Reply('{"success": "probably"}') if kind(request) == "verdict" else grader(request)

    llm_server.responder = no_json_verdict
    report = judge_outcomes(trajectory.run, outcome_config)
    assert [kind(r) for r in llm_server.requests][-2:] == ["verdict", "verdict"]
    assert "could not be used: success must be true or false" in llm_server.requests[-1]["messages"][-1]["content"]
    assert not Verdict.objects.exists() and report.judged == 0
    error = "malformed answer after one repair request: success must be true or false, not 'probably'"
    assert report.errors == [{"task": trajectory.task.task_id, "error": f"verdict: {error}"}]
    failed = JudgeDecision.objects.get(kind="outcome_verdict")
    assert (failed.score, failed.error, failed.calls) == (None, error, 2)

    llm_server.responder = grader  # the next pass asks the failed question again, and only it
    judge_outcomes(trajectory.run, outcome_config)
    assert [kind(r) for r in llm_server.requests][5:] == ["verdict"]
    assert Verdict.objects.get().success is True


def test_a_failed_pass_keeps_the_earlier_verdict(outcome_config, llm_server, trajectory, settings):
    judge_outcomes(trajectory.run, outcome_config)
    outcome_config.options = {**FAST_RETRIES, "screenshot_threshold": 2, "max_retries": 0}
    outcome_config.save()
    llm_server.responder = lambda request: Reply(status=500) if kind(request) == "verdict" else grader(request)
    report = judge_outcomes(trajectory.run, outcome_config)
    assert report.errors[0]["error"] == "verdict: gave up after 1 requests: HTTP 500 (InternalServerError)"
    assert Verdict.objects.get().success is True


def test_the_rate_limit_spaces_the_outcome_requests(outcome_config, llm_server, trajectory):
    outcome_config.options = {**FAST_RETRIES, "requests_per_minute": 600, "burst": 1, "timeout": 5}
    outcome_config.save()
    started = time.monotonic()
    judge_outcomes(trajectory.run, outcome_config)
    assert time.monotonic() - started >= 0.3  # 4 requests, one every 0.1 s


def test_the_verdict_shows_on_the_trajectory_page_escaped(outcome_config, trajectory, client):
    judge_outcomes(trajectory.run, outcome_config)
    client.force_login(UserFactory())
    response = client.get(reverse("metrics:trajectory-detail", args=[trajectory.pk]))
    page = response.content.decode()
    assert "<b>coffee</b>" not in page
    plain = html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", page)))
    assert "LLM judge Trajscope outcome judge (gpt-4o-mini) : PASS from judge outcome" in plain
    assert "step 2: 5 (shown) Cart shown." in plain


@pytest.mark.parametrize(
    ("options", "backend", "message"),
    [
        ({}, "exact", "judge 'outcome' uses the exact backend; the outcome judge needs an OpenAI-compatible"),
        ({"screenshot_threshold": 6}, "openai", "options.screenshot_threshold must be 1 to 5, not 6"),
        ({"max_screenshots": -1}, "openai", "options.max_screenshots must be a whole number >= 0, not -1"),
    ],
)
def test_a_judge_unfit_for_outcomes_is_refused_before_any_job(outcome_config, trajectory, options, backend, message):
    outcome_config.backend, outcome_config.options = backend, options
    outcome_config.save()
    with pytest.raises(CommandError, match=re.escape(f"--judge: {message}")):
        call_command("judge_outcomes", "--run", "shopper", "--judge", "outcome")
    assert not OutcomeJob.objects.exists()


@pytest.mark.parametrize(
    ("backend", "options", "message"),
    [
        ("openai", {"screenshot_threshold": "3"}, "options.screenshot_threshold must be 1 to 5, not '3'"),
        ("openai", {"max_screenshots": 2.5}, "options.max_screenshots must be a whole number >= 0, not 2.5"),
        ("offline", {"judge_outcomes": True},
         "options.judge_outcomes: the outcome judge needs an OpenAI-compatible judge (backend openai)"),
    ],
)
def test_a_judge_config_with_bad_outcome_options_is_not_saved(backend, options, message):
    config = JudgeConfig(name="checked", backend=backend, model="gpt-4o-mini", options=options)
    with pytest.raises(ValueError, match=re.escape(message)):
        save_judge_config(config)
    assert not JudgeConfig.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_the_command_runs_a_job_and_reports_its_cost(outcome_config, trajectory, capsys):
    call_command("judge_outcomes", "--run", "shopper", "--judge", "outcome", "--wait")
    job = OutcomeJob.objects.get()
    assert (job.status, job.total, job.judged, job.passed, job.errors) == ("done", 1, 1, 1, [])
    assert (job.calls, job.cost) == (4, Decimal("0.000108"))
    assert job.started_at <= job.finished_at
    assert "1 judged, 1 successful, 0 without a verdict; 4 requests, $0.000108" in capsys.readouterr().out
    assert Verdict.objects.get().success is True


def test_the_command_names_an_unknown_run():
    with pytest.raises(CommandError, match="--run: run 'nobody' does not exist"):
        call_command("judge_outcomes", "--run", "nobody")


def test_an_evaluation_with_a_judge_asking_for_outcomes_judges_them_too(outcome_config, trajectory,
                                                                        django_capture_on_commit_callbacks):
    create_evaluation(runs=[trajectory.run], judge_config=outcome_config)
    assert not OutcomeJob.objects.exists()
    outcome_config.options = {**FAST_RETRIES, "judge_outcomes": True}
    outcome_config.save()
    with django_capture_on_commit_callbacks(execute=True):
        create_evaluation(runs=[trajectory.run], judge_config=outcome_config)
    job = OutcomeJob.objects.get()
    assert (job.run, job.status, job.judged) == (trajectory.run, "done", 1)
    assert Verdict.objects.get().source.name == "Trajscope outcome judge"


def test_a_job_that_cannot_run_fails_saying_why_and_runs_no_more(outcome_config, trajectory, llm_server):
    job = OutcomeJob.objects.create(run=trajectory.run, judge_config=outcome_config, total=1)
    outcome_config.options = {"screenshot_threshold": 0}
    outcome_config.save()
    assert run_outcome_job(job.pk).status == "failed"
    job.refresh_from_db()
    assert job.error == "ValueError: options.screenshot_threshold must be 1 to 5, not 0"
    assert job.finished_at is not None and job.judged == 0
    outcome_config.options = FAST_RETRIES
    outcome_config.save()
    assert run_outcome_job(job.pk).status == "failed"  # a second message finds it finished
    assert llm_server.requests == [] and not Verdict.objects.exists()


def test_a_judge_config_used_by_an_outcome_job_stays(outcome_config, trajectory):
    OutcomeJob.objects.create(run=trajectory.run, judge_config=outcome_config)
    with pytest.raises(JudgeConfigInUse, match="judge 'outcome' was used by 1 outcome job"):
        delete_judge_config(outcome_config)


def test_a_judge_that_reads_no_images_judges_on_the_text_alone(outcome_config, llm_server, trajectory):
    outcome_config.options = {**FAST_RETRIES, "screenshots": False}
    outcome_config.save()
    report = judge_outcomes(trajectory.run, outcome_config)
    assert [kind(r) for r in llm_server.requests] == ["key points", "verdict"]
    assert images(llm_server.requests[-1]) == [] and "Screenshots: None: judge from the text alone." in text(
        llm_server.requests[-1])
    assert (report.judged, report.errors) == (1, [])
    assert "No screenshots: judged on the task" in Verdict.objects.get().explanation
