"""Benchmarks beyond WebArena in Debian's Chromium: the leaderboard filtered to the Lite subset,
and Mind2Web human demonstrations shown in the gold editor as structured steps."""

import pytest
from django.conf import settings
from django.contrib.auth.models import Group
from django.test import Client
from playwright.sync_api import expect

from annotation.models import GoldTrajectory
from accounts.roles import REVIEWER
from annotation.services.gold_import import import_gold_file
from tests.factories import UserFactory
from tests.metrics.reports import two_evaluated_runs
from trajectories.services.tasks import import_task_file

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _log_in(page, live_server, user) -> None:
    client = Client()
    client.force_login(user)
    session = client.cookies[settings.SESSION_COOKIE_NAME].value
    page.context.add_cookies([{"name": settings.SESSION_COOKIE_NAME, "value": session, "url": live_server.url}])


@pytest.fixture
def reviewer(db):
    user = UserFactory(username="rita")
    user.groups.add(Group.objects.get_or_create(name=REVIEWER)[0])
    return user


def test_the_leaderboard_filtered_to_the_lite_subset(page, live_server, reviewer, shared_data, tmp_path):
    runs = two_evaluated_runs()
    lite = tmp_path / "lite.json"  # WebArena-Lite entries whose old_task_id are two of the runs' tasks
    lite.write_text((shared_data / "more-benchmarks" / "webarena-lite.excerpt.json").read_text(encoding="utf-8")
                    .replace('"old_task_id": 4', '"old_task_id": 101').replace('"old_task_id": 7', '"old_task_id": 201'))
    import_task_file(lite)
    _log_in(page, live_server, reviewer)
    page.goto(f"{live_server.url}/leaderboard/")
    expect(page.locator("#leaderboard-filters select[name=subset]")).to_be_visible()
    page.select_option("#leaderboard-filters select[name=subset]", "webarena-lite")
    expect(page.locator("#subset-scope")).to_have_text("webarena-lite")
    assert "subset=webarena-lite" in page.url
    body = page.locator("main").inner_text()
    assert "alpha" in body and "beta" in body
    page.goto(f"{live_server.url}/runs/{runs.alpha.pk}/")
    expect(page.locator("#subsets")).to_contain_text("webarena-lite")
    expect(page.locator("#subsets")).to_contain_text("2 / 5")


def test_mind2web_gold_in_the_editor_as_structured_steps(page, live_server, reviewer, shared_data):
    import_gold_file(shared_data / "more-benchmarks" / "mind2web-actions.excerpt.json", annotator="rita")
    gold = GoldTrajectory.objects.get(task__intent__startswith="Sign Allan Smith")
    _log_in(page, live_server, reviewer)
    page.goto(f"{live_server.url}/annotation/gold/{gold.pk}/")
    steps = page.locator("#steps li")
    expect(steps).to_have_count(7)
    second = steps.nth(1)
    expect(second.locator(".step-action")).to_have_value("type")
    expect(second.locator(".step-role")).to_have_value("textbox")
    expect(second.locator(".step-name")).to_have_value("First Name (required)")
    expect(second.locator(".step-value")).to_have_value("Allan")
    expect(second.locator(".sentence")).to_have_text("Type 'Allan' into the 'First Name (required)' textbox")
    expect(steps.nth(6).locator(".step-action")).to_have_value("click")
    expect(page.locator("body")).to_contain_text("Sign Allan Smith for email offers")
