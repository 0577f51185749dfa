"""403 and 404 answer with the site's layout, its navigation and a way back, whether DEBUG is on or off;
the API keeps its JSON errors."""

import pytest

from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture(params=[False, True], ids=["debug-off", "debug-on"])
def debug(request, settings):
    settings.DEBUG = request.param
    return request.param


@pytest.fixture
def logged_in(client):
    client.force_login(UserFactory(username="visitor"))
    return client


def _site_page(response) -> str:
    content = response.content.decode()
    assert 'id="mainnav"' in content and "Skip to main content" in content
    assert "Go back" in content and "Traceback" not in content and "URLconf" not in content
    return content


@pytest.mark.parametrize("url", ["/no-such-page/", "/runs/999999/", "/trajectories/999999/"])
def test_missing_pages(debug, logged_in, url):
    response = logged_in.get(url, HTTP_REFERER="http://testserver/runs/")
    assert response.status_code == 404
    content = _site_page(response)
    assert "Page not found" in content and 'href="http://testserver/runs/"' in content
    assert "matches the given query" not in content


def test_a_view_names_what_is_missing(debug, client):
    from django.contrib.auth.models import Group

    annotator = UserFactory(username="ann")
    annotator.groups.add(Group.objects.get(name="annotator"))
    client.force_login(annotator)
    response = client.get("/annotation/gold/424242/")
    assert response.status_code == 404
    assert "no such gold trajectory, or not one you may see yet" in _site_page(response)


def test_refused_pages(debug, logged_in):
    response = logged_in.get("/annotation/review/")
    assert response.status_code == 403
    content = _site_page(response)
    assert "You may not open this page" in content and "This page needs the reviewer role." in content
    assert "visitor" in content


def test_go_back_never_leads_off_site(debug, logged_in):
    content = _site_page(logged_in.get("/no-such-page/", HTTP_REFERER="https://evil.example/"))
    assert "evil.example" not in content and '<a class="button-link" href="/">Go back</a>' in content


def test_api_errors_stay_json(debug, logged_in):
    response = logged_in.get("/api/runs/999999/")
    assert response.status_code == 404 and response.json()["code"] == "not_found"


def test_a_form_refused_by_the_csrf_check(debug):
    from django.test import Client

    client = Client(enforce_csrf_checks=True)
    client.force_login(UserFactory(username="late"))
    response = client.post("/accounts/logout/")
    assert response.status_code == 403
    content = _site_page(response)
    assert "has expired or is from another site; reload the page and send it again." in content


def test_a_form_address_opened_as_a_page_says_so(debug, logged_in):
    from tests.factories import AgentRunFactory

    run = AgentRunFactory()
    response = logged_in.get(f"/runs/{run.pk}/evaluate/")
    assert response.status_code == 405 and response["Allow"] == "POST"
    assert "takes a form sent from another page" in _site_page(response)
    assert logged_in.get("/api/evaluations/1/cancel/").status_code == 405  # the API keeps its own answer
