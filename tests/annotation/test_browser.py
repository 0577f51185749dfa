"""The gold editor in Debian's Chromium: keyboard-only recording, review, conflicts, failed saves."""

import re

import pytest
from django.conf import settings
from django.contrib.auth.models import Group
from django.test import Client
from playwright.sync_api import expect

from accounts.roles import ANNOTATOR, REVIEWER
from annotation.content import GoldContent
from annotation.gold_records import GoldStepRecord
from annotation.models import GoldStatus, GoldTrajectory
from annotation.services.gold_editing import create_gold
from annotation.services.gold_import import import_gold_file
from tests.factories import JudgeDecisionFactory, TaskFactory, UserFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def saved_version(version: int):
    """An explicit save and an autosave may race: either confirmation names the saved version."""
    return re.compile(rf"[Ss]aved · version {version}( · recorded as your edit)?$")


def _user(username: str, role: str):
    user = UserFactory(username=username)
    user.groups.add(Group.objects.get_or_create(name=role)[0])
    return user


def _log_in(context, live_server, user) -> None:
    client = Client()
    client.force_login(user)
    session = client.cookies[settings.SESSION_COOKIE_NAME].value
    context.add_cookies([{"name": settings.SESSION_COOKIE_NAME, "value": session, "url": live_server.url}])


def _steps(gold_id: int) -> list[str]:
    return [step.text for step in GoldTrajectory.objects.get(pk=gold_id).steps.all()]


@pytest.fixture
def annotator_page(page, live_server):
    _log_in(page.context, live_server, _user("alice", ANNOTATOR))
    return page


def test_an_annotator_records_gold_with_the_keyboard_only_and_submits(annotator_page, live_server):
    page = annotator_page
    task = TaskFactory(task_id="82", number=82, intent="Walk from MIT to Harvard, then drive to the airport")
    following = TaskFactory(task_id="83", number=83)

    page.goto(f"{live_server.url}/annotation/tasks/{task.pk}/")
    expect(page.locator("#steps .step-text")).to_be_focused()
    page.keyboard.type("Click on the 'Find directions between two points' link")
    page.keyboard.press("Enter")
    page.keyboard.press("Alt+S")
    expect(page.locator("#steps li").nth(1).locator(".step-action")).to_be_focused()
    page.keyboard.type("type")
    for text in ("textbox", "To", "Harvard University"):
        page.keyboard.press("Tab")
        page.keyboard.type(text)
    expect(page.locator("#steps li").nth(1).locator(".sentence")).to_have_text(
        "Type 'Harvard University' into the 'To' textbox"
    )
    page.keyboard.press("Enter")
    page.keyboard.type("Click the 'Go' button")
    page.keyboard.press("Alt+ArrowUp")
    expect(page.locator("#steps li").nth(1).locator(".step-text")).to_have_value("Click the 'Go' button")
    page.keyboard.press("Alt+ArrowDown")
    page.keyboard.press("Enter")
    page.keyboard.type("a step typed by mistake")
    page.keyboard.press("Alt+Backspace")
    expect(page.locator("#steps li")).to_have_count(3)

    page.keyboard.press("Escape")  # leaves the field, so that "?" is a shortcut and not text
    page.keyboard.press("?")
    expect(page.locator("#help")).to_be_visible()
    expect(page.locator("#help")).to_contain_text("submit and go to the next task")
    page.keyboard.press("Escape")
    expect(page.locator("#help")).to_be_hidden()
    page.keyboard.press("Control+/")
    expect(page.locator("#help")).to_be_visible()
    page.keyboard.press("Control+/")
    expect(page.locator("#help")).to_be_hidden()

    page.keyboard.press("Control+Shift+Enter")
    page.wait_for_url(f"**/annotation/tasks/{following.pk}/")

    gold = GoldTrajectory.objects.get(task=task)
    assert (gold.status, gold.annotator.username) == (GoldStatus.SUBMITTED, "alice")
    assert _steps(gold.pk) == [
        "Click on the 'Find directions between two points' link",
        "Type 'Harvard University' into the 'To' textbox",
        "Click the 'Go' button",
    ]
    typed = gold.steps.get(index=2)
    assert (typed.action_type, typed.element_role, typed.element_name, typed.value) == (
        "type", "textbox", "To", "Harvard University"
    )


def test_a_reviewer_approves_submitted_gold(page, live_server):
    annotator = _user("alice", ANNOTATOR)
    task = TaskFactory(task_id="3", number=3, intent="What are the top-2 best-selling product in 2022")
    gold = create_gold(task, user=annotator, submit=True, content=GoldContent(steps=[
        GoldStepRecord(text="Click on the 'REPORTS' link in the navigation menu."),
        GoldStepRecord(text="Click on the 'Bestsellers' link under the Products section."),
    ]))
    _log_in(page.context, live_server, _user("rita", REVIEWER))

    page.goto(f"{live_server.url}/annotation/review/")
    page.get_by_role("link", name="Review", exact=True).last.click()
    expect(page.locator("#steps li").first.locator("input")).to_have_value(
        "Click on the 'REPORTS' link in the navigation menu."
    )
    page.locator("#review-comment").fill("Matches the Bestsellers report path.")
    page.locator("#approve-button").click()

    expect(page.locator(".messages")).to_contain_text("Gold for task 3 by alice approved.")
    gold.refresh_from_db()
    assert gold.status == GoldStatus.APPROVED
    assert gold.reviews.get().comment == "Matches the Bestsellers report path."


def test_two_people_saving_the_same_gold_see_the_conflict_and_lose_nothing(browser, live_server):
    annotator = _user("alice", ANNOTATOR)
    gold = create_gold(TaskFactory(), user=annotator, content=GoldContent(steps=[GoldStepRecord(text="Scroll down")]))
    pages = {}
    for username, user in (("alice", annotator), ("rita", _user("rita", REVIEWER))):
        context = browser.new_context()
        _log_in(context, live_server, user)
        pages[username] = context.new_page()
        pages[username].set_default_timeout(15_000)
        pages[username].goto(f"{live_server.url}/annotation/gold/{gold.pk}/")
    alice, rita = pages["alice"], pages["rita"]

    alice.locator("#steps .step-text").fill("Alice's step")
    alice.keyboard.press("Control+s")
    expect(alice.locator("#save-state")).to_have_text(saved_version(2))

    rita.locator("#edit-button").click()  # a reviewer reads until asking to edit
    rita.locator("#steps .step-text").fill("Rita's step")
    rita.keyboard.press("Control+s")
    dialog = rita.locator("#conflict")
    expect(dialog).to_be_visible()
    expect(rita.locator("#conflict-yours")).to_have_text("Rita's step")
    expect(rita.locator("#conflict-theirs")).to_have_text("Alice's step")
    assert _steps(gold.pk) == ["Alice's step"]

    # Rita's text survives a reload, and the conflict comes back until she chooses.
    rita.reload()
    expect(rita.locator("#restore-banner")).to_be_visible()
    expect(rita.locator("#steps .step-text")).to_have_value("Rita's step")
    expect(dialog).to_be_visible()
    rita.locator("#conflict-keep-mine").click()
    expect(rita.locator("#save-state")).to_have_text(saved_version(3))
    assert _steps(gold.pk) == ["Rita's step"]

    # Alice, still on version 2, is told in turn instead of overwriting Rita.
    alice.locator("#steps .step-text").fill("Alice again")
    alice.keyboard.press("Control+s")
    expect(alice.locator("#conflict-theirs")).to_have_text("Rita's step")
    alice.locator("#conflict-take-theirs").click()
    expect(alice.locator("#steps .step-text")).to_have_value("Rita's step")
    assert _steps(gold.pk) == ["Rita's step"]
    for each in pages.values():
        each.context.close()


def test_input_survives_a_failed_save(annotator_page, live_server):
    page = annotator_page
    task = TaskFactory()
    page.goto(f"{live_server.url}/annotation/tasks/{task.pk}/")
    page.route("**/api/gold/**", lambda route: route.fulfill(status=500, body="boom"))

    page.keyboard.type("Click on the 'Orders' link")
    page.keyboard.press("Control+s")
    expect(page.locator("#save-state")).to_contain_text("Not saved")
    assert not GoldTrajectory.objects.filter(task=task).exists()

    page.unroute("**/api/gold/**")
    page.reload()
    expect(page.locator("#restore-banner")).to_be_visible()
    expect(page.locator("#steps .step-text")).to_have_value("Click on the 'Orders' link")
    expect(page.locator("#save-state")).to_have_text(saved_version(1))
    assert _steps(GoldTrajectory.objects.get(task=task).pk) == ["Click on the 'Orders' link"]


def test_a_reviewer_audits_judge_verdicts_with_one_key_each(page, live_server):
    first = JudgeDecisionFactory(score=0.9, inputs={"gold": {"text": "Scroll down"}, "agent": {"text": "scroll [up]"}})
    second = JudgeDecisionFactory(score=0.75,
                                  inputs={"gold": {"text": "Press Enter"}, "agent": {"text": "press [Enter]"}})
    _log_in(page.context, live_server, _user("rita", REVIEWER))

    page.goto(f"{live_server.url}/annotation/judge-audit/")
    expect(page.locator(".audit-item.current")).to_contain_text("Press Enter")  # nearest tau first
    page.keyboard.press("c")
    expect(page.locator(".audit-item").first.locator(".audit-state")).to_contain_text("Confirmed")
    expect(page.locator(".audit-item.current")).to_contain_text("scroll [up]")
    page.keyboard.press("o")
    expect(page.locator(".audit-item").nth(1).locator(".audit-state")).to_contain_text("Overruled")

    first.refresh_from_db()
    second.refresh_from_db()
    assert (second.human_score, first.human_score) == (1.0, 0.0)
    assert first.reviewed_by.username == "rita"


def test_the_editor_shows_who_imported_the_gold_on_whose_behalf(annotator_page, live_server, tmp_path):
    TaskFactory(task_id="1", number=1)
    path = tmp_path / "orders.csv"
    path.write_text("Task No.,Step No.,Text\n1,1,Click on the 'Orders' link\n")
    report = import_gold_file(path, annotator="alice", imported_by=_user("rita", REVIEWER), status="submitted")

    annotator_page.goto(f"{live_server.url}/annotation/gold/{report.gold[0].gold_id}/")

    expect(annotator_page.locator("#gold-meta")).to_contain_text(
        re.compile(r"imported from orders\.csv by rita on behalf of alice on \d{4}-\d\d-\d\d \d\d:\d\d"))
