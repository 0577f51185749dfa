"""Rows whose file is gone from the media store: a 404 with a placeholder, logged once, and
`check_media` to list and clear them."""

import logging
from io import StringIO

import pytest
from django.core.management import call_command
from django.urls import reverse

from tests.factories import ImportJobFactory, ScreenshotFactory, StepFactory, UserFactory
from trajectories.models import ImportJob, Screenshot, Step

pytestmark = pytest.mark.django_db


def _lose_file(shot: Screenshot) -> None:
    shot.image.storage.delete(shot.image.name)


def test_a_missing_screenshot_answers_404_with_a_placeholder_and_is_logged_once(client, caplog):
    shot = ScreenshotFactory()
    _lose_file(shot)
    client.force_login(UserFactory())
    caplog.set_level(logging.ERROR, logger="trajectories.services.media_check")
    for url in (reverse("trajectories:screenshot", args=[shot.sha256]), f"/media/{shot.image.name}",
                reverse("trajectories:screenshot", args=[shot.sha256])):
        response = client.get(url)
        assert response.status_code == 404
        assert response["Content-Type"] == "image/svg+xml" and b"Screenshot missing" in response.content
        assert "no-store" in response["Cache-Control"] and "immutable" not in response["Cache-Control"]
    assert [r.getMessage() for r in caplog.records].count(
        f"screenshot file {shot.image.name} is missing from the media store "
        "(manage.py check_media lists such rows)") == 1


def test_a_stored_screenshot_is_still_cached_for_good(client):
    shot = ScreenshotFactory()
    client.force_login(UserFactory())
    response = client.get(reverse("trajectories:screenshot", args=[shot.sha256]))
    assert response.status_code == 200 and "immutable" in response["Cache-Control"]


def test_check_media_lists_missing_files_and_fix_clears_their_rows():
    kept, lost = ScreenshotFactory(), ScreenshotFactory()
    step = StepFactory(screenshot=lost)
    _lose_file(lost)
    job = ImportJobFactory()
    job.upload.storage.delete(job.upload.name)

    out = StringIO()
    call_command("check_media", stdout=out)
    text = out.getvalue()
    assert f"screenshot #{lost.pk}: {lost.image.name} is missing (shown on 1 step)" in text
    assert f"upload #{job.pk}: {job.upload.name} is missing" in text
    assert kept.image.name not in text and "2 missing; run again with --fix" in text
    assert Screenshot.objects.filter(pk=lost.pk).exists()

    call_command("check_media", "--fix", stdout=StringIO())
    assert list(Screenshot.objects.values_list("pk", flat=True)) == [kept.pk]
    assert Step.objects.get(pk=step.pk).screenshot is None
    assert ImportJob.objects.get(pk=job.pk).upload == ""

    out = StringIO()
    call_command("check_media", stdout=out)
    assert "Every file named by a row is in the media store." in out.getvalue()
