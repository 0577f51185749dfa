"""Uploads that import nothing, in Debian's Chromium at 1366 and 800 px: the job page says what happened
and no empty run is left on the run list or the leaderboard."""

import zipfile

import pytest
from playwright.sync_api import expect

from tests.browser_helpers import log_in, page_width, sized_page, submit_import, width  # noqa: F401 - fixtures
from tests.factories import UserFactory
from trajectories.models import AgentRun, ImportJob

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _empty_zip(folder):
    path = folder / "results.zip"
    with zipfile.ZipFile(path, "w"):
        pass
    return path


def _png(folder):
    path = folder / "screenshot.png"
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(64))
    return path


@pytest.mark.parametrize("make", [_empty_zip, _png], ids=["empty-zip", "png"])
def test_an_upload_that_imports_nothing(sized_page, live_server, tmp_path, width, make):
    page = sized_page
    log_in(page.context, live_server, UserFactory(username="uploader"))
    page.goto(live_server.url + "/runs/import/")
    page.fill("#id_run", "empty-upload")
    page.set_input_files("#id_files", [str(make(tmp_path))])
    submit_import(page)
    page.wait_for_selector("#import-job[data-status='done']")
    notice = page.locator("#nothing-imported")
    expect(notice).to_contain_text("Nothing was imported:")
    expect(notice).to_contain_text("held no file to import")
    expect(notice).to_contain_text("The run empty-upload held nothing else, so it was not kept")
    expect(page.locator("#job-status")).to_have_text("Done, nothing imported")
    expect(page.get_by_role("link", name="Go to the run")).to_have_count(0)
    assert page_width(page) <= width
    assert not AgentRun.objects.filter(name="empty-upload").exists()
    assert ImportJob.objects.get().report["run_removed"] is True

    page.locator("#mainnav").get_by_role("link", name="Runs", exact=True).click()
    expect(page.locator("main")).not_to_contain_text("empty-upload")
    page.locator("#mainnav").get_by_role("link", name="Leaderboard").click()
    expect(page.locator("#leaderboard")).not_to_contain_text("empty-upload")
    # the name is free again: the next upload may take it
    page.goto(live_server.url + "/runs/import/?run=empty-upload")
    expect(page.locator("#id_run")).to_have_value("empty-upload")
