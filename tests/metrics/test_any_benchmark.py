"""Evaluation of runs on benchmarks the platform holds no task list or gold for: every trajectory is
scored, listed as having no gold, with outcome metrics only."""

import html
import re

import pytest
from django.urls import reverse

from metrics.models import TrajectoryScore
from metrics.services import evaluation
from tests.factories import AgentRunFactory, JudgeConfigFactory, UserFactory
from tests.trajectories.verdict_samples import write_verdict_run
from trajectories.services.ingest import import_paths

pytestmark = pytest.mark.django_db


def test_tasks_without_gold_are_scored_on_their_outcome(client, tmp_path, django_capture_on_commit_callbacks):
    run = AgentRunFactory(name="genericagent")
    assert import_paths([write_verdict_run(tmp_path / "run")], run).ok
    job = evaluation.create_evaluation(runs=[run], judge_config=JudgeConfigFactory(name="exact", backend="exact"))
    with django_capture_on_commit_callbacks(execute=True):
        evaluation.start_evaluation(job)
    job.refresh_from_db()

    assert job.status == "done"
    scores = {score.trajectory.task.task_id: score for score in TrajectoryScore.objects.filter(job=job)
              .select_related("trajectory__task")}
    assert set(scores) == {"click-dialog", "click-checkboxes"}
    assert all(score.error == "" and score.gold_id is None for score in scores.values())
    dialog, outcome_only = scores["click-dialog"], scores["click-checkboxes"]
    assert (dialog.success, dialog.success_source, dialog.step_success, dialog.recovery) == (True, "harness", None, None)
    assert (dialog.outcome_status, dialog.agent_steps, dialog.gold_steps) == ("answered", 2, None)
    # METRICS.md's outcome table counts a trajectory without steps as crashed, whatever it recorded
    assert (outcome_only.success, outcome_only.agent_steps, outcome_only.outcome_status) == (None, 0, "crashed")

    client.force_login(UserFactory())
    page = html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ",
                                                    client.get(reverse("metrics:job", args=[job.pk])).content.decode())))
    assert "2 trajectories scored with no gold" in page and "outcome metrics only" in page
    assert page.count("no gold") >= 3
