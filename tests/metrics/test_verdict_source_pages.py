"""The run and trajectory pages (and their API) show verdicts of named sources, tokens, cost and
time, and say what a trajectory does not record instead of showing empty panes."""

import html
import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from rest_framework.test import APIClient

from accounts.services import create_api_token
from metrics.selectors.leaderboard import LeaderboardFilters, leaderboard
from metrics.selectors.verdicts_per_task import one_run
from tests.factories import AgentRunFactory, UserFactory
from tests.trajectories.verdict_samples import write_verdict_run
from trajectories.models import AgentRun, Trajectory
from trajectories.services.ingest import import_paths

pytestmark = pytest.mark.django_db


def text(response) -> str:
    assert response.status_code == 200
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", response.content.decode())))


@pytest.fixture
def run(tmp_path):
    run = AgentRunFactory(name="genericagent")
    assert import_paths([write_verdict_run(tmp_path / "run")], run).ok
    return run


@pytest.fixture
def api():
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {create_api_token(UserFactory())[1]}")
    return client


def _trajectory(run, task_id) -> Trajectory:
    return Trajectory.objects.get(run=run, task__task_id=task_id)


def test_the_trajectory_page_names_each_source_and_escapes_what_it_said(client, run):
    client.force_login(UserFactory())
    response = client.get(reverse("metrics:trajectory-detail", args=[_trajectory(run, "click-checkboxes").pk]))
    body = response.content.decode()
    page = text(response)
    assert "Human expert graders: FAIL" in page
    assert "LLM judge WebJudge (o4-mini) : PASS score 4 (success at 3 or above)" in page
    assert re.search(r"Agent self-report ?: not executable", page)  # the kind, not the name again
    assert "<img src=x" not in body and "&lt;img src=x onerror=alert(1)&gt; The box was ticked." in body
    assert "<script>alert(1)</script>" not in body and "&lt;b&gt;Submitted&lt;/b&gt;" in body
    assert "No agent steps: the file records the outcome only (final answer and verdicts)." in page
    assert "900 tokens in · $0.5000 · 12.0 s" in page
    assert 'id="steps-without"' not in body  # nothing to say about steps it does not have


def test_steps_without_screenshots_or_tree_say_so_once(client, run):
    client.force_login(UserFactory())
    response = client.get(reverse("metrics:trajectory-detail", args=[_trajectory(run, "click-dialog").pk]))
    body, page = response.content.decode(), text(response)
    assert page.count("The file records no screenshots and no accessibility tree or page HTML for these steps.") == 1
    assert "tj-tree" not in body and "tj-shot" not in body
    assert "harness verdict by BrowserGym reward from run/click-dialog.json" in page
    assert re.search(r"Agent self-report ?: PASS", page)
    assert "1200 tokens in · 80 out · $0.0021 · 3.5 s" in page
    assert "2500 tokens in · 100 out · $0.0040 · 5.0 s" in page


def test_the_run_page_gives_each_source_its_rate_and_the_totals(client, run):
    client.force_login(UserFactory())
    page = text(client.get(reverse("metrics:run-detail", args=[run.pk])))
    assert "harness 1.000 (1 of 1)" in page
    assert "agent self-report 0.500 (1 of 2)" in page  # a task not executable counts as not successful
    assert "expert graders 0.000 (0 of 1)" in page
    assert "WebJudge (o4-mini) 1.000 (1 of 1)" in page
    assert "3400 tokens in (over 2 trajectories) · 100 tokens out (over 1 trajectory) · $0.5040 (over 2 trajectories)" \
           " · 17.0 s (over 2 trajectories)" in page


def test_a_run_of_outcomes_only_is_results_only(client, tmp_path, api):
    run = AgentRunFactory(name="outcomes")
    write_verdict_run(tmp_path / "run")
    (tmp_path / "run" / "click-dialog.json").unlink()
    import_paths([tmp_path / "run"], run)

    assert one_run(run).results_only
    row = next(row for row in leaderboard(LeaderboardFilters()).rows if row.run_id == run.pk)
    assert row.results_only
    assert api.get(reverse("api-run-detail", args=[run.pk])).json()["results_only"] is True
    client.force_login(UserFactory())
    page = text(client.get(reverse("metrics:run-detail", args=[run.pk])))
    assert "A results-only run: per-task verdicts (and final answers) imported without agent steps" in page
    assert "Submitted" in page  # its final answer is listed


def test_a_run_with_steps_is_not_results_only(run, api):
    assert not one_run(run).results_only
    assert api.get(reverse("api-run-detail", args=[run.pk])).json()["results_only"] is False


def test_the_api_gives_verdicts_usage_and_the_harness_source(run, api):
    detail = api.get(reverse("api-trajectory-detail", args=[_trajectory(run, "click-checkboxes").pk])).json()
    assert detail["verdicts"] == [
        {"kind": "agent_self_report", "name": "agent self-report", "model": "", "threshold": None,
         "screenshot_threshold": None, "grader": "", "success": None, "label": "not_executable", "score": None, "labels": {}, "note": "", "explanation": "",
         "file": "run/click-checkboxes.json"},
        {"kind": "human", "name": "expert graders", "model": "", "threshold": None, "screenshot_threshold": None,
         "grader": "", "success": False,
         "label": "", "score": None, "labels": {}, "note": "", "explanation": "<img src=x onerror=alert(1)> The box was ticked.",
         "file": "run/click-checkboxes.json"},
        {"kind": "llm_judge", "name": "WebJudge", "model": "o4-mini", "threshold": 3.0, "screenshot_threshold": None,
         "grader": "", "success": True,
         "label": "", "score": 4.0, "labels": {}, "note": "", "explanation": "Key points met.",
         "file": "run/click-checkboxes.json"},
    ]
    assert (detail["tokens_in"], detail["tokens_out"], detail["cost"], detail["duration"]) == (900, None, 0.5, 12.0)
    assert detail["steps"] == []
    dialog = api.get(reverse("api-trajectory-detail", args=[_trajectory(run, "click-dialog").pk])).json()
    assert (dialog["success"], dialog["success_by"]) == (True, "BrowserGym reward")
    assert [(step["tokens_in"], step["tokens_out"], step["cost"], step["duration"]) for step in dialog["steps"]] == [
        (1200, 80, 0.0021, 3.5), (1300, 20, 0.0019, 1.5)]

    body = api.get(reverse("api-run-detail", args=[run.pk])).json()
    assert [(rate["name"], rate["passed"], rate["count"], rate["unsaid"]) for rate in body["verdict_sources"]] == [
        ("agent self-report", 1, 2, 0), ("expert graders", 0, 1, 0), ("WebJudge", 1, 1, 0)]
    assert body["usage"] == {"tokens_in": {"total": 3400, "trajectories": 2},
                             "tokens_out": {"total": 100, "trajectories": 1},
                             "cost": {"total": pytest.approx(0.504), "trajectories": 2},
                             "duration": {"total": 17.0, "trajectories": 2}}


def test_the_api_imports_the_folder_and_again_changes_nothing(api, tmp_path):
    folder = write_verdict_run(tmp_path / "run")

    def post():
        files = [SimpleUploadedFile(f"run/{path.name}", path.read_bytes()) for path in sorted(folder.iterdir())]
        return api.post(reverse("api-run-import"), {"run": "api-run", "files": files}, format="multipart").json()

    first = post()
    assert first["counts"] == {"imported": 2, "unchanged": 0, "replaced": 0, "failed": 0, "skipped": 0}
    assert post()["counts"]["unchanged"] == 2
    assert AgentRun.objects.get(name="api-run").verdicts.count() == 4


@pytest.fixture
def outcomes_only(tmp_path):
    """A run whose one trajectory records its outcome and named sources' verdicts, no steps."""
    run = AgentRunFactory(name="outcomes")
    write_verdict_run(tmp_path / "run")
    (tmp_path / "run" / "click-dialog.json").unlink()
    import_paths([tmp_path / "run"], run)
    return run


def test_the_runs_list_shows_named_sources_and_the_trajectories_held(client, outcomes_only):
    client.force_login(UserFactory())
    page = text(client.get(reverse("metrics:run-list")))
    row = page.split("outcomes", 1)[1]
    assert "expert graders (o4-mini)" not in row and "expert graders 0.000 (0 of 1)" in row
    assert "no verdicts" not in row and "not available" not in row
    assert "1 without steps" in row


def test_the_run_page_names_no_disagreement_of_sources_without_verdicts(client, outcomes_only):
    client.force_login(UserFactory())
    page = text(client.get(reverse("metrics:run-detail", args=[outcomes_only.pk])))
    assert "no verdicts" not in page
    assert "harness and offline check" not in page and "offline check and human graders" not in page
    assert "expert graders" in page.split("Disagreements between sources", 1)[1]
