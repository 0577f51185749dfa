"""One failed judge question never loses a trajectory: the metrics that need it are null with its
error, the others are stored, and a re-run asks only the failed question again."""

import pytest

from judges.local_llm import LocalLLMServer, Reply, well_formed_reply
from metrics import exports
from metrics.selectors import leaderboard
from metrics.models import TrajectoryScore
from metrics.selectors.jobs_and_scores import job_progress
from metrics.services import evaluation
from tests.factories import (
    AgentRunFactory,
    GoldStepFactory,
    GoldTrajectoryFactory,
    JudgeConfigFactory,
    StepFactory,
    TaskFactory,
    TrajectoryFactory,
)
from tests.judges.conftest import FAST_RETRIES

pytestmark = pytest.mark.django_db


class RequirementsDown:
    """Answers every question but the requirements', which fail with 500 while `down`."""

    def __init__(self):
        self.down = True

    def __call__(self, request: dict) -> Reply:
        if self.down and "Requirements:" in request["messages"][1]["content"]:
            return Reply(status=500)
        return well_formed_reply(request)


@pytest.fixture
def responder():
    return RequirementsDown()


@pytest.fixture
def llm(responder):
    with LocalLLMServer(responder) as server:
        yield server


@pytest.fixture
def run():
    run = AgentRunFactory(name="shopper")
    task = TaskFactory(intent="Which bags did I buy?", requirements=["Overnight Duffle", "Yoga bag"])
    gold = GoldTrajectoryFactory(task=task, status="approved")
    GoldStepFactory(gold=gold, index=1, text="Click on the 'Orders' link.")
    trajectory = TrajectoryFactory(run=run, task=task, final_answer="A duffle", step_count=2)
    StepFactory(trajectory=trajectory, index=1, action="click [4] where [4] is link 'My orders'",
                observation="[4] link 'My orders'")
    StepFactory(trajectory=trajectory, index=2, action="stop [A duffle]", observation="Order: Overnight Duffle")
    return run


def _evaluate(run, config, capture):
    with capture(execute=True):
        job = evaluation.create_evaluation(runs=[run], judge_config=config)
        evaluation.start_evaluation(job)
    job.refresh_from_db()
    return job


def test_a_failed_question_leaves_only_the_metrics_needing_it_null_and_a_rerun_asks_only_it(
        run, llm, responder, django_capture_on_commit_callbacks):
    config = JudgeConfigFactory(name="local", backend="openai", tested=True, model="m", base_url=llm.base_url,
                                options=FAST_RETRIES)
    job = _evaluate(run, config, django_capture_on_commit_callbacks)
    score = TrajectoryScore.objects.get(job=job)
    assert (job.status, job.done, job.partly_scored, job.failed_questions, job.failed) == ("done", 1, 1, 1, 0)
    assert (score.error, score.failed_questions) == ("", 1)
    assert score.partial_success is None
    reason = score.details["null_reasons"]["partial_success"]
    assert reason.startswith("the judge's question failed: requirement 'Overnight Duffle': gave up after 4 requests")
    assert score.step_success == 1.0 and score.grounded is True  # computed and stored
    assert "partial_success" not in score.details
    assert job_progress(job)["partly_scored"] == 1
    [row] = exports.score_rows({run.pk: job.pk})
    assert (row["failed_questions"], row["partial_success"]) == (1, None)

    asked_before = len(llm.requests)
    responder.down = False
    rerun = evaluation.rerun_evaluation(job)
    with django_capture_on_commit_callbacks(execute=True):
        evaluation.start_evaluation(rerun)
    rerun.refresh_from_db()
    again = TrajectoryScore.objects.get(job=rerun)
    assert [request["messages"][1]["content"].startswith("Task:") for request in llm.requests[asked_before:]] == [
        True]  # the requirements request alone
    assert (rerun.partly_scored, again.failed_questions, again.partial_success) == (0, 0, 1.0)
    assert "null_reasons" not in again.details or "partial_success" not in again.details["null_reasons"]


def test_the_trajectory_page_says_it_is_partly_scored(run, llm, client, django_capture_on_commit_callbacks,
                                                      admin_user):
    config = JudgeConfigFactory(name="local", backend="openai", tested=True, model="m", base_url=llm.base_url,
                                options=FAST_RETRIES)
    job = _evaluate(run, config, django_capture_on_commit_callbacks)
    client.force_login(admin_user)
    page = client.get(job.get_absolute_url()).content.decode()
    assert 'data-field="partly_scored">1</span> partly scored' in page
    trajectory = run.trajectories.get()
    page = client.get(f"/trajectories/{trajectory.pk}/").content.decode()
    assert "Partly scored (1 question failed)" in page


def test_the_leaderboard_its_export_and_api_count_the_partly_scored(run, llm, client, admin_user,
                                                                    django_capture_on_commit_callbacks):
    config = JudgeConfigFactory(name="local", backend="openai", tested=True, model="m", base_url=llm.base_url,
                                options=FAST_RETRIES)
    _evaluate(run, config, django_capture_on_commit_callbacks)
    [row] = leaderboard.leaderboard(leaderboard.LeaderboardFilters()).rows
    assert (row.scored, row.partly_scored) == (1, 1)
    client.force_login(admin_user)
    page = client.get("/leaderboard/").content.decode()
    assert '<td class="num" data-col="scored">1 <span class="rp-n rp-partly"' in page and "1 partly</span>" in page
    [exported] = exports.leaderboard_frame(leaderboard.leaderboard(leaderboard.LeaderboardFilters())).to_dict("records")
    assert (exported["scored"], exported["partly_scored"]) == (1, 1)
    [listed] = client.get("/api/leaderboard/").json()["results"]
    assert (listed["scored"], listed["partly_scored"], listed["outcomes"]["partly_scored"]) == (1, 1, 1)
