"""The annotator's and the reviewer's rough edges in Debian's Chromium, 1366 and 800 px wide: filters kept
by "Submit & next", cannot-complete without a reason, the first "Next task", a steady toolbar, help keys
that work everywhere, and a read-only review page with an explicit, recorded edit."""

import pytest
from django.contrib.auth.models import Group
from playwright.sync_api import expect

from annotation.content import GoldContent
from annotation.gold_records import GoldStepRecord
from annotation.models import GoldReview, GoldStatus, GoldTrajectory
from accounts.roles import ANNOTATOR, REVIEWER
from annotation.services.gold_editing import create_gold
from tests.browser_helpers import log_in, page_width, sized_page, width  # noqa: F401 - fixtures
from tests.factories import GoldTrajectoryFactory, TaskFactory, UserFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _user(username: str, role: str):
    user = UserFactory(username=username)
    user.groups.add(Group.objects.get_or_create(name=role)[0])
    return user


@pytest.fixture
def tasks():
    return [TaskFactory(task_id=str(number), number=number, intent=intent, sites=["shopping_admin"])
            for number, intent in ((1, "Top product in 2022"), (2, "Drive to the airport"), (3, "Open an issue"))]


@pytest.fixture
def annotator(sized_page, live_server):
    user = _user("alice", ANNOTATOR)
    log_in(sized_page.context, live_server, user)
    return user


def test_submit_and_next_under_a_search_keeps_the_filtered_queue(sized_page, live_server, annotator, tasks, width):
    page = sized_page
    page.goto(live_server.url + "/annotation/")
    page.get_by_label("Search").fill("airport")
    page.get_by_role("button", name="Filter").click()
    page.get_by_role("link", name="webarena/2").click()
    expect(page.locator("#steps .step-text")).to_be_focused()
    page.keyboard.type("Click on the 'Directions' link")
    page.keyboard.press("Control+Shift+Enter")
    page.wait_for_url("**/annotation/?q=airport")
    expect(page.locator(".messages")).to_contain_text("Nothing left to annotate under these filters.")
    expect(page.get_by_label("Search")).to_have_value("airport")
    expect(page.locator("main")).to_contain_text("1 task.")
    expect(page.locator("table.ann-queue tbody tr")).to_have_count(1)
    assert GoldTrajectory.objects.get(task=tasks[1]).status == GoldStatus.SUBMITTED
    assert page_width(page) <= width


def test_cannot_complete_without_a_reason_is_not_submitted(sized_page, live_server, annotator, tasks, width):
    page = sized_page
    page.goto(live_server.url + f"/annotation/tasks/{tasks[0].pk}/")
    expect(page.locator("#steps .step-text")).to_be_focused()
    page.keyboard.press("Alt+c")
    reason = page.get_by_label("Reason it cannot be completed")
    expect(reason).to_be_visible()
    expect(reason).to_be_focused()
    page.get_by_role("button", name="Submit & next").click()
    error = page.locator("#cannot-complete-reason-error")
    expect(error).to_have_text("Not submitted: say why the task cannot be completed.")
    expect(reason).to_be_focused()
    expect(reason).to_have_attribute("aria-invalid", "true")
    assert page.url.endswith(f"/annotation/tasks/{tasks[0].pk}/")
    assert not GoldTrajectory.objects.filter(status=GoldStatus.SUBMITTED).exists()
    reason.fill("The product catalogue is empty on this site.")
    expect(error).to_be_hidden()
    page.get_by_role("button", name="Submit & next").click()
    page.wait_for_url(f"**/annotation/tasks/{tasks[1].pk}/")
    gold = GoldTrajectory.objects.get(task=tasks[0])
    assert gold.status == GoldStatus.SUBMITTED
    assert gold.cannot_complete_reason == "The product catalogue is empty on this site."


def test_the_first_next_task_skips_tasks_with_approved_gold(sized_page, live_server, annotator, tasks, width):
    GoldTrajectoryFactory(task=tasks[0], status=GoldStatus.APPROVED)
    page = sized_page
    page.goto(live_server.url + "/annotation/")
    page.get_by_role("link", name="Next task →").click()
    page.wait_for_url(f"**/annotation/tasks/{tasks[1].pk}/")


def test_the_save_status_keeps_the_toolbar_still(sized_page, live_server, annotator, tasks, width):
    page = sized_page
    page.goto(live_server.url + f"/annotation/tasks/{tasks[0].pk}/")

    def layout():
        return page.evaluate("""() => ({
            toolbar: document.querySelector('.ann-actions').getBoundingClientRect().toJSON(),
            steps: document.getElementById('steps').getBoundingClientRect().top,
            submit: document.getElementById('submit-button').getBoundingClientRect().toJSON(),
        })""")

    expect(page.locator("#steps .step-text")).to_be_focused()
    before = layout()
    page.keyboard.type("Click on the 'REPORTS' link")
    expect(page.locator("#save-state")).to_have_text("Unsaved changes")
    assert layout() == before
    expect(page.locator("#save-state")).to_have_text("Saved · version 1")
    assert layout() == before
    page.evaluate("""() => { const node = document.getElementById('save-state');
        node.textContent = 'Not saved. Your changes are kept in this browser.'; }""")
    assert layout() == before
    assert page_width(page) <= width


def test_help_opens_from_anywhere(sized_page, live_server, annotator, tasks, width):
    page = sized_page
    page.goto(live_server.url + f"/annotation/tasks/{tasks[0].pk}/")
    step = page.locator("#steps .step-text")
    expect(step).to_be_focused()
    page.keyboard.type("Scroll down?")  # "?" in a step is text
    expect(page.locator("#help")).to_be_hidden()
    for key in ("F1", "Alt+/", "Control+/"):
        page.keyboard.press(key)
        expect(page.locator("#help")).to_be_visible()
        expect(page.locator("#help")).to_contain_text("F1")
        page.keyboard.press("Escape")
        expect(page.locator("#help")).to_be_hidden()
        expect(step).to_be_focused()
    expect(step).to_have_value("Scroll down?")
    page.get_by_role("button", name="Shortcuts").click()
    expect(page.locator("#help")).to_be_visible()


@pytest.fixture
def submitted_gold(tasks):
    return create_gold(tasks[0], user=_user("bob", ANNOTATOR), submit=True, content=GoldContent(steps=[
        GoldStepRecord(text="Click on the 'REPORTS' link"), GoldStepRecord(text="Click on 'Bestsellers'")]))


def test_the_review_page_is_read_only_until_edit_and_the_edit_is_recorded(sized_page, live_server, submitted_gold,
                                                                          width):
    page = sized_page
    # The page's timers run on a clock the test moves, so that "no autosave" is checked after the moment an
    # autosave would have been sent, not after a sleep.
    page.clock.install()
    writes = []
    page.on("request", lambda request: writes.append(request.url) if request.method != "GET" else None)
    log_in(page.context, live_server, _user("rita", REVIEWER))
    page.goto(live_server.url + "/annotation/review/")
    page.get_by_role("link", name="Review", exact=True).last.click()
    steps = page.locator("#steps .step-text")
    expect(steps.first).to_have_value("Click on the 'REPORTS' link")
    expect(steps.first).to_be_disabled()
    assert page.evaluate("document.activeElement === document.body")  # nothing to type into by accident
    page.keyboard.type("xyz")
    expect(page.locator("#read-only-note")).to_be_visible()
    expect(page.locator("#save-button")).to_be_hidden()
    assert page_width(page) <= width

    page.get_by_role("button", name="Edit").click()
    expect(steps.first).to_be_enabled()
    expect(steps.first).to_be_focused()
    expect(page.locator("#review-edit-note")).to_contain_text("You are editing bob's gold")
    steps.nth(1).fill("Click on the 'Bestsellers' link under Products")
    writes.clear()
    page.clock.run_for(10_000)  # far past the annotator's 1.2 s autosave delay: any autosave timer has fired
    assert GoldTrajectory.objects.get(pk=submitted_gold.pk).version == 1
    page.keyboard.press("Control+s")
    expect(page.locator("#save-state")).to_have_text("Saved · version 2 · recorded as your edit")
    # Requests leave in the order the page sends them: an autosave would be logged before Ctrl+S's save.
    assert len(writes) == 1, writes
    gold = GoldTrajectory.objects.get(pk=submitted_gold.pk)
    assert [step.text for step in gold.steps.all()][1] == "Click on the 'Bestsellers' link under Products"
    edit = gold.reviews.get()
    assert (edit.reviewer.username, edit.decision, edit.gold_version) == ("rita", GoldReview.Decision.EDITED, 2)

    page.reload()
    expect(steps.first).to_be_disabled()  # read-only again until the next "Edit"
    expect(page.locator(".review-note.decision-edited")).to_contain_text("Edited by a reviewer by rita")
    page.locator("#review-comment").fill("Fixed the second step's link name.")
    page.locator("#approve-button").click()
    # Who changed a gold's content does not approve that version: another reviewer does.
    expect(page.locator(".messages")).to_contain_text("another reviewer or an admin approves it")
    gold.refresh_from_db()
    assert gold.status == GoldStatus.SUBMITTED
    page.context.clear_cookies()
    log_in(page.context, live_server, _user("sam", REVIEWER))
    page.goto(live_server.url + "/annotation/review/")
    page.get_by_role("link", name="Review", exact=True).last.click()
    page.locator("#review-comment").fill("Fixed the second step's link name.")
    page.locator("#approve-button").click()
    expect(page.locator(".messages")).to_contain_text("approved")
    gold.refresh_from_db()
    assert gold.status == GoldStatus.APPROVED
