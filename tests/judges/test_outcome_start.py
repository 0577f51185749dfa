"""The outcome judge's estimate and start, end to end against the local OpenAI-compatible server, on
Online-Mind2Web results as published (three of the ABP run's task folders, screenshots added: the
published folders kept none) and browser-use's results on the same tasks."""

import shutil
from decimal import Decimal

import pytest
from infrastructure.jobs import TooManyJobs
from judges.local_llm import Reply, well_formed_reply
from judges.models import OutcomeJob
from judges.outcome_judging import estimate_outcome_job, judge_outcomes, start_outcome_job
from tests.factories import AgentRunFactory, JudgeConfigFactory, UserFactory
from tests.trajectories.renders import png
from trajectories.models import Screenshot

from .conftest import FAST_RETRIES, import_run

pytestmark = pytest.mark.django_db

QATAR, JOBS, VISA = "005be9dd91c95669d6ddde9ae667125c", "0059adc6b12a3822305deb68929b2de8", \
    "0170ca95038b05fa58d463fe627ac605"
RED, BLUE = png((200, 30, 30)), png((30, 30, 200))
PRICES = {"gpt-4o-mini": {"input": 0.15, "output": 0.60, "image_tokens": {"base": 2833, "tile": 5667}}}


@pytest.fixture
def config(llm_server, settings):
    settings.JUDGE_PRICES = PRICES
    return JudgeConfigFactory(name="outcome", backend="openai", model="gpt-4o-mini", base_url=llm_server.base_url,
                              tested=True, options=FAST_RETRIES)


@pytest.fixture
def abp(om2w, tmp_path, capsys):
    """Qatar with a red then a blue screenshot, the jobs search with the red one, the visa task with none."""
    shots = {QATAR: [RED, BLUE], JOBS: [RED], VISA: []}
    for task, images in shots.items():
        folder = tmp_path / "abp" / task
        (folder / "trajectory").mkdir(parents=True)
        shutil.copy(om2w / "abp_run" / task / "result.json", folder / "result.json")
        for number, image in enumerate(images):
            (folder / "trajectory" / f"{number}_full_screenshot.png").write_bytes(image)
    return import_run(tmp_path / "abp", "abp", capsys)


def counts(estimate) -> tuple:
    requests = estimate.requests
    return requests.key_points, requests.screenshots, requests.verdicts, requests.requests, requests.images


def test_the_estimate_counts_the_requests_the_pass_then_makes(abp, config, llm_server):
    estimate = estimate_outcome_job(abp, config)
    # Key points: three task texts. Screenshots: Qatar's red and blue, and the red one again for the jobs
    # search (other key points). Verdicts: three. Images: the three screenshot requests, and the verdicts'
    # at most max_screenshots (5) each while not scored: Qatar 2, jobs 1, visa 0.
    assert (estimate.trajectories, counts(estimate)) == (3, (3, 3, 3, 9, 6))
    assert estimate.unreadable == []

    report = judge_outcomes(abp, config)

    assert report.judged == 3 and len(llm_server.requests) == 9
    again = estimate_outcome_job(abp, config)
    assert counts(again) == (0, 0, 0, 0, 0) and again.cost == Decimal("0.000000")


def test_a_second_run_of_the_same_tasks_asks_only_its_own_verdicts(abp, config, llm_server, om2w, tmp_path, capsys):
    judge_outcomes(abp, config)
    for task in (QATAR, JOBS, VISA):
        shutil.copytree(om2w / "browser_use_cloud" / task, tmp_path / "browser-use" / task)
    browser_use = import_run(tmp_path / "browser-use", "browser-use", capsys)
    asked = len(llm_server.requests)

    estimate = estimate_outcome_job(browser_use, config)

    # The same three task texts: their key points are decided. No steps, no screenshots: three verdicts.
    assert counts(estimate) == (0, 0, 3, 3, 0)
    judge_outcomes(browser_use, config)
    assert len(llm_server.requests) - asked == 3


def test_the_cost_is_the_estimated_tokens_at_the_price_table_with_its_image_rule(abp, config):
    estimate = estimate_outcome_job(abp, config)
    tokens = estimate.requests
    # Six 4 x 3 images of one tile each at gpt-4o-mini's 2833 + 5667 tokens: 51,000 of the prompt tokens.
    assert tokens.prompt_tokens > 6 * (2833 + 5667)
    # Answers: 3 key points x 150 + 3 screenshots x 100 + 3 verdicts x 200.
    assert tokens.completion_tokens == 1350
    assert estimate.cost == ((Decimal(tokens.prompt_tokens) * Decimal("0.15") + 1350 * Decimal("0.60")) / 10 ** 6
                             ).quantize(Decimal("0.000001"))
    assert "Priced at $0.15 per million prompt tokens and $0.6 per million answer tokens" in estimate.basis
    assert "2833 tokens plus 5667 per 512-pixel tile" in estimate.basis


def test_a_model_without_a_price_has_no_cost_and_says_why(abp, config, settings):
    settings.JUDGE_PRICES = {}
    estimate = estimate_outcome_job(abp, config)
    assert estimate.cost is None
    assert "gpt-4o-mini has no price in the price table (JUDGE_PRICES): its requests are recorded at no cost" in (
        estimate.basis)
    assert "85 tokens plus 170 per 512-pixel tile" in estimate.basis


def test_a_trajectory_whose_screenshot_cannot_be_read_is_named_and_not_counted(abp, config, llm_server):
    blue = Screenshot.objects.get(sha256__in=abp.trajectories.values("steps__screenshot__sha256"),
                                  steps__index=2)
    blue.image.storage.delete(blue.image.name)

    estimate = estimate_outcome_job(abp, config)

    # Qatar is left out: key points 2, the jobs search's red screenshot, verdicts 2; images 1 + 1.
    assert counts(estimate) == (2, 1, 2, 5, 2)
    [unreadable] = estimate.unreadable
    assert unreadable["task"] == QATAR and unreadable["error"].startswith("screenshot of step 2 could not be read")
    report = judge_outcomes(abp, config)
    assert len(llm_server.requests) == 5 and [item["task"] for item in report.errors] == [QATAR]


def test_a_failed_answer_is_counted_again(abp, config, llm_server):
    def verdicts_fail(request):
        return Reply(status=400) if '"success"' in request["messages"][0]["content"] else well_formed_reply(request)

    llm_server.responder = verdicts_fail
    judge_outcomes(abp, config)
    assert counts(estimate_outcome_job(abp, config)) == (0, 0, 3, 3, 3)


def test_only_an_openai_judge_can_be_estimated(abp):
    offline = JudgeConfigFactory(name="offline", backend="offline")
    with pytest.raises(ValueError, match="uses the offline backend; the outcome judge needs an OpenAI-compatible"):
        estimate_outcome_job(abp, offline)


def test_start_refuses_a_second_job_of_the_same_run_and_judge_while_the_first_is_unfinished(abp, config):
    reviewer = UserFactory()
    first = OutcomeJob.objects.create(run=abp, judge_config=config, total=3)
    with pytest.raises(ValueError, match=f"outcome judging #{first.pk} of run abp with judge outcome is still "
                                         "pending: follow it rather than start another"):
        start_outcome_job(abp, config, user=reviewer)
    first.status = "done"
    first.save()
    job = start_outcome_job(abp, config, user=reviewer)
    assert (job.run, job.judge_config, job.total, job.created_by) == (abp, config, 3, reviewer)


def test_start_refuses_a_run_without_trajectories(config):
    with pytest.raises(ValueError, match="run empty holds no trajectories: there is nothing to judge"):
        start_outcome_job(AgentRunFactory(name="empty"), config, user=UserFactory())


def test_start_keeps_to_the_accounts_job_limit(abp, config, settings):
    settings.JOB_LIMITS_PER_ACCOUNT = {"outcome judging": 1}
    user = UserFactory()
    other = AgentRunFactory(name="other")
    OutcomeJob.objects.create(run=other, judge_config=config, created_by=user)
    with pytest.raises(TooManyJobs, match="you already have 1 outcome judgings waiting or running"):
        start_outcome_job(abp, config, user=user)
