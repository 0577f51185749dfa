"""The whole way in Debian's Chromium: upload the sample run, evaluate it, find it on the leaderboard,
compare it with a second run, read the two trajectories side by side and download the scores CSV.

The screenshots of the README's user guide are taken here; they replace docs/screenshots/ only
with UPDATE_SCREENSHOTS=1, so that an ordinary test run leaves the working tree as it was.
"""

import json
import os
from pathlib import Path

import pandas as pd
import pytest
from django.conf import settings
from django.contrib.auth.models import Group
from django.test import Client
from django.urls import reverse

from accounts.roles import REVIEWER
from annotation.models import GoldTrajectory
from annotation.services.gold_import import import_gold_file
from judges.services import default_judge_config
from metrics import exports
from metrics.models import EvaluationJob, TrajectoryScore
from metrics.services import evaluation
from tests.browser_helpers import submit_import
from tests.factories import UserFactory
from trajectories.models import AgentRun
from trajectories.services.ingest import import_paths
from trajectories.services.runs import get_or_create_run
from trajectories.services.tasks import import_task_file

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SCREENSHOTS = Path(settings.BASE_DIR) / "docs" / "screenshots"
DEMO_GOLD = Path(settings.BASE_DIR) / "fixtures" / "demo" / "gold.json"


def _step(index, action, url="http://localhost:7780/admin/admin/dashboard/"):
    return {"index": index, "action": action, "url": url, "planned_action": action.split(" where ")[0],
            "observation": "Tab 0 (current): Dashboard / Magento Admin"}


def _baseline_file(folder: Path) -> Path:
    """A second agent's run of the same three tasks, as trajectory/v1 JSONL."""
    reports = "click [723] where [723] is [723] link '\\ue60a REPORTS'"
    bestsellers = "click [801] where [801] is [801] link 'Bestsellers'"
    lines = [
        {"schema": "trajectory/v1", "task": {"task_id": "0"}, "final_answer": None, "outcome": {"status": "no_stop"},
         "steps": [_step(1, "scroll [down]"), _step(2, "scroll [down]"), _step(3, reports)]},
        {"schema": "trajectory/v1", "task": {"task_id": "3"}, "final_answer": "Sprite Yoga Strap 6 foot",
         "outcome": {"status": "answered"},
         "steps": [_step(1, reports), _step(2, bestsellers), _step(3, "stop [Sprite Yoga Strap 6 foot]")]},
        {"schema": "trajectory/v1", "task": {"task_id": "6"}, "final_answer": None,
         "outcome": {"status": "early_stop", "reason": "repeated_action"},
         "steps": [_step(1, reports), _step(2, reports), _step(3, reports)]},
    ]
    path = folder / "baseline.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def platform(shared_data, tmp_path):
    """The WebArena tasks, gold for the sample tasks, and a second run already evaluated."""
    import_task_file(shared_data / "webarena" / "test.raw.json")
    import_gold_file(DEMO_GOLD, annotator="gold-annotator", create_annotator=True)
    baseline = get_or_create_run("baseline-agent", agent="scripted", model="none")
    report = import_paths([_baseline_file(tmp_path)], baseline)
    assert report.ok, report.to_dict()
    job = evaluation.create_evaluation(runs=[baseline], judge_config=default_judge_config())
    evaluation.start_evaluation(job)  # outside a transaction: runs now, in-process
    job.refresh_from_db()
    assert job.status == EvaluationJob.Status.DONE
    return baseline


@pytest.fixture
def researcher_page(page, live_server):
    """A reviewer (who may also annotate) logged in."""
    user = UserFactory(username="researcher")
    user.groups.add(Group.objects.get_or_create(name=REVIEWER)[0])
    client = Client()
    client.force_login(user)
    page.context.add_cookies([{"name": "sessionid", "value": client.cookies["sessionid"].value,
                               "url": live_server.url}])
    return page


@pytest.fixture
def shot(tmp_path):
    folder = SCREENSHOTS if os.environ.get("UPDATE_SCREENSHOTS") == "1" else tmp_path / "screenshots"

    def take(page, name: str) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(folder / f"{name}.png"), full_page=True)
        assert (folder / f"{name}.png").stat().st_size > 10_000, name  # a rendered page, not a blank one

    return take


def test_upload_evaluate_leaderboard_compare_and_download(researcher_page, live_server, platform, shared_data,
                                                          tmp_path, shot):
    page = researcher_page
    samples = sorted((shared_data / "trajectory-samples").glob("*.html"))

    # 1. upload the sample run
    page.goto(live_server.url + reverse("trajectories:upload"))
    page.fill("#id_run", "sample-agent")
    page.fill("#id_agent", "WebArena PromptAgent")
    page.fill("#id_model", "gpt-4-turbo / llama3-8b")
    page.set_input_files("#id_files", [str(path) for path in samples])
    shot(page, "upload")
    submit_import(page)
    page.wait_for_selector("#import-job[data-status='done']")
    run = AgentRun.objects.get(name="sample-agent")
    assert run.trajectories.count() == 3

    # 2. start an evaluation from the run page and watch it finish
    page.get_by_role("link", name="Go to the run").click()
    page.get_by_role("button", name="Start evaluation").click()
    page.wait_for_selector("#progress[data-status='done']")
    job = EvaluationJob.objects.get(runs=run)
    assert (job.status, job.done, job.failed) == ("done", 3, 0)
    assert page.locator("[data-field='done']").inner_text() == "3"
    shot(page, "evaluation")

    # 3. the run is on the leaderboard, with its numbers
    page.get_by_role("link", name="Leaderboard").first.click()
    row = page.locator("tr[data-run='sample-agent']")
    assert row.count() == 1
    step_success = TrajectoryScore.objects.filter(job=job).values_list("step_success", flat=True)
    mean = sum(step_success) / len(step_success)
    assert row.locator("td[data-metric='step_success'] .rp-mean").inner_text() == f"{mean:.3f}"
    assert page.locator("tr[data-run='baseline-agent']").count() == 1
    page.set_viewport_size({"width": 1600, "height": 900})
    page.wait_for_function("() => [...document.images].every(image => image.complete && image.naturalWidth > 0)")
    shot(page, "leaderboard")
    page.set_viewport_size({"width": 1280, "height": 900})

    # 4. compare it with the second run, and open the task where they differ most
    page.get_by_role("link", name="Compare two runs").click()
    page.select_option("#id_baseline", label="baseline-agent")
    page.select_option("#id_candidate", label="sample-agent")
    page.get_by_role("button", name="Compare").click()
    assert page.locator("#shared-tasks").inner_text() == "3"
    assert page.locator("#comparison tr[data-metric='step_success']").count() == 1
    page.wait_for_function("() => [...document.images].every(image => image.complete && image.naturalWidth > 0)")
    shot(page, "compare")
    compare_url = page.url
    page.locator("#differing-tasks").get_by_role("link", name="side by side").first.click()
    assert page.locator("#aligned tr.rp-row-gold").count() == 6  # the demo gold has six steps per task
    shot(page, "side-by-side")

    # 5. download the scores CSV of both runs and check it against the stored scores
    page.goto(compare_url)
    with page.expect_download() as download:
        page.click("#download-scores-csv")
    saved = tmp_path / download.value.suggested_filename
    download.value.save_as(saved)
    assert saved.name == "scores-baseline-agent-sample-agent.csv"
    table = pd.read_csv(saved, dtype={"task_id": str})
    assert list(table.columns) == [column.name for column in exports.SCORE_COLUMNS]
    assert sorted(zip(table["run"], table["task_id"])) == [
        ("baseline-agent", "0"), ("baseline-agent", "3"), ("baseline-agent", "6"),
        ("sample-agent", "0"), ("sample-agent", "3"), ("sample-agent", "6"),
    ]
    for score in TrajectoryScore.objects.filter(job__in=[job, platform.evaluation_jobs.get()]).select_related(
        "trajectory__run", "trajectory__task"
    ):
        line = table[(table["run"] == score.trajectory.run.name) & (table["task_id"] == score.trajectory.task.task_id)]
        [values] = line.to_dict("records")
        assert values["step_success"] == pytest.approx(score.step_success)
        assert values["agent_steps"] == score.agent_steps and values["gold_steps"] == score.gold_steps
        assert values["outcome_status"] == score.outcome_status
        assert values["evaluation"] == score.job_id and values["gold_annotator"] == "gold-annotator"

    # 6. the gold steps the trajectories were aligned to, in the annotation editor
    gold = GoldTrajectory.objects.get(task__task_id="3")
    page.goto(live_server.url + reverse("annotation:gold", args=[gold.pk]))
    assert "Click on the 'Bestsellers' link under the Products section." in page.content()
    shot(page, "annotate")
