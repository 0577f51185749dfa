"""Failure themes as a background job, with the shipped sentence model."""

import pytest
from django.urls import reverse

from failures.models import ThemeJob
from failures.services.annotations import record_failure_annotation
from failures.services.themes import failure_texts
from tests.factories import AgentRunFactory, StepFactory, TrajectoryFactory, UserFactory

pytestmark = pytest.mark.django_db

NOTES = [("blocked_by_site", "A captcha blocked the login page"),
         ("blocked_by_site", "Captcha at login, could not pass"),
         ("blocked_by_site", "The login captcha stopped it"),
         ("wrong_value", "Typed the wrong date into the booking form"),
         ("wrong_value", "Entered the wrong date in the booking form")]


@pytest.fixture
def run():
    run = AgentRunFactory(name="shop")
    for index, (failure_type, note) in enumerate(NOTES):
        trajectory = TrajectoryFactory(run=run, success=False, step_count=2)
        StepFactory(trajectory=trajectory, index=1, action="click [3]", reasoning=f"reason {index}")
        StepFactory(trajectory=trajectory, index=2, action="stop [x]", reasoning="")
    return run


def test_an_annotation_asks_for_the_runs_themes_and_the_job_groups_the_failures(
        run, annotator, django_capture_on_commit_callbacks):
    trajectories = list(run.trajectories.order_by("pk"))
    with django_capture_on_commit_callbacks(execute=True):
        for trajectory, (failure_type, note) in zip(trajectories, NOTES):
            record_failure_annotation(trajectory, annotator, step=1, failure_type=failure_type, note=note)

    job = ThemeJob.objects.get(status=ThemeJob.Status.DONE)
    assert (job.run, job.failures, job.error) == (run, 5, "")
    assert [theme["size"] for theme in job.themes] == [3, 2]
    assert set(job.themes[0]["trajectories"]) == {t.pk for t in trajectories[:3]}
    assert "captcha" in job.themes[0]["phrases"] and "booking form" in job.themes[1]["phrases"]
    assert ThemeJob.objects.count() == 1  # five annotations in a row asked for one job


def test_a_failures_text_is_its_notes_and_its_decisive_step(run, annotator, other_annotator):
    trajectory = run.trajectories.order_by("pk").first()
    record_failure_annotation(trajectory, annotator, step=1, failure_type="looped", note="went round")
    record_failure_annotation(trajectory, other_annotator, step=1, failure_type="looped")

    [text] = failure_texts(run.pk)

    assert (text.trajectory_id, text.text) == (trajectory.pk, "went round click [3] reason 0")


def test_the_themes_page_shows_the_latest_themes_and_recomputes(client, run, annotator,
                                                               django_capture_on_commit_callbacks):
    trajectory = run.trajectories.order_by("pk").first()
    with django_capture_on_commit_callbacks(execute=True):
        record_failure_annotation(trajectory, annotator, step=1, failure_type="looped", note="<b>loop</b> again")
    client.force_login(UserFactory())
    page = client.get(reverse("failures:themes") + f"?run={run.pk}").content.decode()
    assert "1 attributed failure in 1 theme" in page and 'id="themes-form"' not in page
    assert f'href="/trajectories/{trajectory.pk}/#failure"' in page and "<b>" not in page
    assert client.post(reverse("failures:themes") + f"?run={run.pk}").status_code == 403

    client.force_login(annotator)
    with django_capture_on_commit_callbacks(execute=True):
        client.post(reverse("failures:themes") + f"?run={run.pk}")
    [latest] = ThemeJob.objects.filter(run=run, status=ThemeJob.Status.DONE)
    assert latest.pk == ThemeJob.objects.order_by("pk").last().pk and latest.failures == 1
