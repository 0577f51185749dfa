"""Acceptance in Debian's Chromium: a sheet with a block moved to another task and a gold copied under
a sibling task is imported from the web page, and the gold quality page flags both."""

import json

import pytest
from django.conf import settings
from django.contrib.auth.models import Group
from django.test import Client
from playwright.sync_api import expect

from annotation.models import GoldFlag
from accounts.roles import REVIEWER
from tests.annotation.sheets import excerpt_rows, misplaced_gold_sheet, sheet_bytes
from tests.factories import GoldStepFactory, UserFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture(scope="module", autouse=True)
def _intents_encoded(shared_data):
    """The quality job that follows an import runs inside the import request here (no broker): with
    the 812 intents already in the encoder's cache it answers within the browser's wait."""
    from judges.embeddings import sentence_encoder

    tasks = json.loads((shared_data / "webarena" / "test.raw.json").read_text(encoding="utf-8"))
    sentence_encoder().encode([task["intent"] for task in tasks])


@pytest.fixture
def reviewer_page(page, live_server):
    user = UserFactory(username="rita")
    user.groups.add(Group.objects.get_or_create(name=REVIEWER)[0])
    client = Client()
    client.force_login(user)
    page.context.add_cookies([{"name": settings.SESSION_COOKIE_NAME,
                               "value": client.cookies[settings.SESSION_COOKIE_NAME].value, "url": live_server.url}])
    return page


def test_a_moved_block_and_a_copied_gold_are_flagged_on_the_quality_page(reviewer_page, live_server, webarena_tasks,
                                                                          gold_xlsx, tmp_path):
    page = reviewer_page
    sheet = tmp_path / "golden_misplaced.xlsx"
    sheet.write_bytes(sheet_bytes(misplaced_gold_sheet(excerpt_rows(gold_xlsx))))

    page.goto(f"{live_server.url}/annotation/import/")
    page.set_input_files("input[name=file]", str(sheet))
    page.get_by_role("button", name="Import").click()
    expect(page.locator(".import-report")).to_contain_text("9 gold trajectories, 59 steps")

    page.get_by_role("link", name="Gold quality", exact=True).click()
    expect(page.locator("#check-job")).to_contain_text("Done")
    moved = page.locator("tr[data-kind=other_task][data-task='811']")
    expect(moved).to_contain_text("fits task 529 better than its own task 811")
    copied = page.locator("tr[data-kind=duplicate][data-task='83']")
    expect(copied).to_contain_text("the same 9 steps are stored under task 82")
    expect(page.locator("tr[data-kind=sibling_values][data-task='83']")).to_contain_text(
        "types ‘Massachusetts Institute of Technology’, ‘Harvard University’, ‘Boston Logan International Airport’, "
        "the place_A, place_B, place_C of task 82 (same template)")

    moved.get_by_label("Reason to dismiss").fill("kept on purpose: a demo of a moved block")
    moved.get_by_role("button", name="Dismiss").click()
    expect(page.locator("tr[data-kind=other_task][data-task='811']")).to_have_count(0)
    expect(page.locator("table.dismissed")).to_contain_text("kept on purpose: a demo of a moved block")
    page.get_by_role("button", name="Run the checks now").click()
    expect(page.locator("#check-job")).to_contain_text("Done")
    expect(page.locator("tr[data-kind=other_task][data-task='811']")).to_have_count(0)
    assert GoldFlag.objects.get(kind="other_task", gold__task__task_id="811").dismissed_by.username == "rita"


def test_the_evidence_of_a_misplaced_gold_is_shown_side_by_side(reviewer_page, live_server, webarena_tasks, gold_xlsx,
                                                                 tmp_path):
    page = reviewer_page
    sheet = tmp_path / "golden_misplaced.xlsx"
    sheet.write_bytes(sheet_bytes(misplaced_gold_sheet(excerpt_rows(gold_xlsx))))
    page.goto(f"{live_server.url}/annotation/import/")
    page.set_input_files("input[name=file]", str(sheet))
    page.get_by_role("button", name="Import").click()
    expect(page.locator(".import-report")).to_contain_text("9 gold trajectories")
    moved = GoldFlag.objects.get(kind="other_task", gold__task__task_id="811")
    # Uploaded text is shown as text, never as markup.
    GoldStepFactory(gold=moved.gold, index=8, text="<b>Press</b> <img src=x onerror=alert(1)> Enter")

    page.goto(f"{live_server.url}/annotation/quality/?benchmark=webarena")

    row = page.locator(f"#flag-{moved.pk}")
    expect(row).to_contain_text("% sure")
    evidence = page.locator(f"tr[data-evidence-for='{moved.pk}'] .flag-evidence section")
    expect(evidence).to_have_count(3)
    expect(evidence.nth(0)).to_contain_text("Regarding Order ID 000000148: The Bluetooth speaker broke")
    expect(evidence.nth(0)).to_contain_text("<b>Press</b> <img src=x onerror=alert(1)> Enter")
    expect(page.locator(".flag-evidence img")).to_have_count(0)
    expect(evidence.nth(1)).to_contain_text("Its task 811")
    expect(evidence.nth(1)).to_contain_text("Assign the issue regarding 404 in a11yproject to myself.")
    expect(evidence.nth(2)).to_contain_text("Better-fitting task 529")
    expect(evidence.nth(2)).to_contain_text('Draft a refund message via their "contact us" form for the bluetooth')
    boxes = [evidence.nth(n).bounding_box() for n in range(3)]
    assert boxes[0]["x"] < boxes[1]["x"] < boxes[2]["x"] and abs(boxes[0]["y"] - boxes[2]["y"]) < 1  # side by side
