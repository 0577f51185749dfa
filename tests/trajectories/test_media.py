"""Uploaded files and screenshots are served only to those who may see them, whatever DEBUG says."""

import pytest
from django.contrib.auth.models import Group

from accounts.roles import ADMIN
from tests.factories import ImportJobFactory, ScreenshotFactory, UserFactory

pytestmark = pytest.mark.django_db


def _url(field) -> str:
    return f"/media/{field.name}"


@pytest.fixture(params=[True, False], ids=["debug", "production-like"])
def debug(request, settings):
    settings.DEBUG = request.param
    return request.param


def test_anonymous_visitors_get_no_media(client, debug):
    shot = ScreenshotFactory()
    job = ImportJobFactory()
    for url in (_url(shot.image), _url(job.upload)):
        response = client.get(url)
        assert response.status_code == 302 and response["Location"].startswith("/accounts/login/"), url


def test_screenshots_are_served_to_accounts_that_may_see_trajectories(client, debug):
    shot = ScreenshotFactory()
    client.force_login(UserFactory())
    response = client.get(_url(shot.image))
    assert response.status_code == 200
    assert b"".join(response.streaming_content).startswith(b"\x89PNG")
    assert response["Content-Security-Policy"] == "default-src 'none'"


def test_an_uploaded_file_is_served_to_its_uploader_and_admins_only(client, debug):
    owner, other, admin = UserFactory(), UserFactory(), UserFactory()
    admin.groups.add(Group.objects.get(name=ADMIN))
    job = ImportJobFactory(created_by=owner)
    client.force_login(other)
    assert client.get(_url(job.upload)).status_code == 403
    for user in (owner, admin):
        client.force_login(user)
        response = client.get(_url(job.upload))
        assert response.status_code == 200 and response["Content-Disposition"].startswith("attachment")


def test_files_that_no_row_names_are_not_served(client, settings, debug):
    (settings.MEDIA_ROOT / "stray").mkdir(parents=True)
    (settings.MEDIA_ROOT / "stray" / "secret.txt").write_text("not for you")
    client.force_login(UserFactory(is_superuser=True))
    assert client.get("/media/stray/secret.txt").status_code == 404
    assert client.get("/media/../config/settings/base.py").status_code == 404


def test_the_screenshot_urls_the_api_gives_are_read_with_an_api_token(client, debug):
    from accounts.services import create_api_token
    from tests.factories import StepFactory, TrajectoryFactory

    shot = ScreenshotFactory()
    trajectory = TrajectoryFactory()
    StepFactory(trajectory=trajectory, index=1, screenshot=shot)
    token = create_api_token(UserFactory(username="script"))[1]
    steps = client.get(f"/api/trajectories/{trajectory.pk}/", HTTP_AUTHORIZATION=f"Token {token}").json()["steps"]
    url = steps[0]["screenshot"]
    assert url
    read = client.get(url, HTTP_AUTHORIZATION=f"Token {token}")
    assert read.status_code == 200 and b"".join(read.streaming_content) == shot.image.open("rb").read()
    assert client.get(_url(shot.image), HTTP_AUTHORIZATION=f"Token {token}").status_code == 200
    wrong = client.get(url, HTTP_AUTHORIZATION="Token not-a-token")
    assert wrong.status_code == 401 and wrong["WWW-Authenticate"] == "Token"
    assert client.get(url).status_code == 302  # no token, no session: the login page, as before
