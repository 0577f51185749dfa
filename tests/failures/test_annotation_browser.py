"""Annotating why a trajectory failed, by keyboard, in Debian's Chromium."""

import pytest
from django.contrib.auth.models import Group
from django.urls import reverse
from playwright.sync_api import expect

from accounts.roles import ANNOTATOR
from failures.models import FailureAttribution
from tests.browser_helpers import log_in
from tests.factories import AgentRunFactory, UserFactory
from trajectories.services.ingest import import_paths

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_d_marks_the_current_step_as_decisive_and_enter_saves(page, live_server, shared_data):
    run = AgentRunFactory()
    import_paths([shared_data / "failure-attribution" / "who-and-when" / "algorithm-generated" / "9.json"], run)
    trajectory = run.trajectories.get()
    user = UserFactory(username="grader")
    user.groups.add(Group.objects.get_or_create(name=ANNOTATOR)[0])
    log_in(page.context, live_server, user)
    page.goto(live_server.url + reverse("metrics:trajectory-detail", args=[trajectory.pk]))
    expect(page.locator("#failures-hidden")).to_have_text("1 other failure annotation hidden until you annotate.")

    for _ in range(3):
        page.keyboard.press("j")
    page.keyboard.press("d")

    expect(page.locator("#failure-step")).to_have_value("3")
    expect(page.locator("#failure-type")).to_be_focused()
    page.locator("#failure-type").select_option("hallucinated_answer")
    page.locator("#failure-agent").select_option("GameTheory_Expert")
    page.locator("#failure-note").fill("claimed a result it never computed")
    page.locator("#failure-note").press("Enter")

    expect(page.locator("#failure-attributions")).to_contain_text("Who&When annotators")
    saved = FailureAttribution.objects.get(annotator=user)
    assert (saved.step_index, saved.failure_type, saved.agent) == (3, "hallucinated_answer", "GameTheory_Expert")
