"""The outcome judge on Online-Mind2Web results as published, beside the judges published with them."""

import base64
import html
import re

import pytest
from django.urls import reverse

from judges.local_llm import Reply, well_formed_reply
from judges.outcome_judging import judge_outcomes
from tests.factories import JudgeConfigFactory, UserFactory
from tests.trajectories.renders import png
from trajectories.models import Verdict

from .conftest import FAST_RETRIES, import_run

pytestmark = pytest.mark.django_db

QATAR = "005be9dd91c95669d6ddde9ae667125c"


@pytest.fixture
def config(llm_server):
    return JudgeConfigFactory(name="outcome", backend="openai", model="gpt-4o-mini", base_url=llm_server.base_url,
                              options=FAST_RETRIES)


def _user_text(request: dict) -> str:
    content = request["messages"][1]["content"]
    return content if isinstance(content, str) else content[0]["text"]


def test_a_result_with_its_screenshot_is_judged_from_its_actions_answer_and_image(om2w, tmp_path, capsys, config,
                                                                                  llm_server):
    folder = tmp_path / "run" / QATAR
    (folder / "trajectory").mkdir(parents=True)
    (folder / "result.json").write_bytes((om2w / "abp_run" / QATAR / "result.json").read_bytes())
    (folder / "trajectory" / "0_full_screenshot.png").write_bytes(png())
    run = import_run(tmp_path / "run", "abp", capsys)

    report = judge_outcomes(run, config)

    assert (report.judged, report.errors) == (1, [])
    key_points, screenshot, verdict = llm_server.requests
    task = "Find the weight of baggage allowance for economy class on Qatar Airways."
    assert _user_text(key_points) == f"Task: {task}"
    assert screenshot["messages"][1]["content"][1]["image_url"]["url"] == (
        f"data:image/png;base64,{base64.b64encode(png()).decode()}")
    prompt = _user_text(verdict)
    assert "Actions:\n1. Navigate to https://www.qatarairways.com/\n2. Click at (963, 72)\n" in prompt
    assert "Final answer: Based on the Qatar Airways baggage allowance page" in prompt
    assert "Screenshots: 1 attached, of steps 1, in that order." in prompt  # relevance 4 of the scripted reply


def test_a_published_judge_and_ours_side_by_side_on_the_run_and_trajectory_pages(om2w, capsys, config, llm_server,
                                                                               client):
    def disagrees_on_qatar(request):
        if '"success"' in request["messages"][0]["content"] and "Qatar" in _user_text(request):
            return Reply({"success": False, "reasoning": "The answer gives no weight for <Economy Lite>."})
        return well_formed_reply(request)

    llm_server.responder = disagrees_on_qatar
    run = import_run(om2w / "browser_use_cloud", "browser-use-cloud", capsys)
    report = judge_outcomes(run, config)

    assert (report.total, report.judged, report.passed) == (15, 15, 14)
    # No steps, no screenshots: one key-points and one verdict request per task.
    assert len(llm_server.requests) == 30
    ours = Verdict.objects.filter(run=run, source__name="Trajscope outcome judge")
    published = Verdict.objects.filter(run=run).exclude(source__name="Trajscope outcome judge")
    assert ours.count() == 15 and published.filter(source__kind="llm_judge").count() == 15

    client.force_login(UserFactory())
    run_page = html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", client.get(
        reverse("metrics:run-detail", args=[run.pk])).content.decode())))
    assert "Trajscope outcome judge (gpt-4o-mini) 0.933 (14 of 15)" in run_page
    qatar = ours.get(task__task_id=QATAR)
    assert qatar.success is False
    page = client.get(reverse("metrics:trajectory-detail", args=[qatar.trajectory_id])).content.decode()
    assert "no weight for &lt;Economy Lite&gt;" in page
    assert "No screenshots: judged on the task, the actions and the final answer alone." in page
    assert published.get(task__task_id=QATAR).source.name in page
