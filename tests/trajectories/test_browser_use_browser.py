"""The browser-use and WebVoyager samples uploaded as one zip through the import page, in Debian's
Chromium at 1366 and 800 px: every file reported, and the trajectories readable with their screenshots."""

import zipfile

import pytest
from playwright.sync_api import expect

from tests.browser_helpers import log_in, page_width, sized_page, submit_import, width  # noqa: F401 - fixtures
from tests.factories import UserFactory
from trajectories.models import ImportJob

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _zip(shared_data, tmp_path):
    path = tmp_path / "runs.zip"
    outputs = shared_data / "agent-outputs"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for folder in (outputs / "browser-use", outputs / "webvoyager"):
            for file in sorted(folder.rglob("*")):
                if file.is_file():
                    archive.write(file, f"{folder.name}/{file.relative_to(folder).as_posix()}")
    return path


def test_the_samples_upload_and_read_like_webarenas(sized_page, live_server, shared_data, tmp_path, width):
    page = sized_page
    log_in(page.context, live_server, UserFactory(username="uploader"))
    page.goto(live_server.url + "/runs/import/")
    page.fill("#id_run", "other-tools")
    page.set_input_files("#id_files", [str(_zip(shared_data, tmp_path))])
    submit_import(page)
    page.wait_for_selector("#import-job[data-status='done']")
    expect(page.locator("#job-failures")).to_have_text("nothing failed")
    report = page.locator(".tj-report")
    expect(report).to_contain_text("3 trajectories imported")
    expect(report).to_contain_text("read with history.json")
    assert ImportJob.objects.get().report["counts"] == {"imported": 4, "unchanged": 0, "replaced": 0, "failed": 0,
                                                        "skipped": 3}
    assert page_width(page) <= width

    report.get_by_role("link", name="task_e1").click()
    main = page.locator("main")
    expect(main).to_contain_text("Successfully starred the email from Sarah Chen")
    expect(main).to_contain_text("The user wants me to star the email")
    shots = page.locator("img[alt^='Screenshot before step']")
    expect(shots).to_have_count(2)
    # Lazy images: the first one, once in view, is loaded from the platform's own storage.
    shots.first.scroll_into_view_if_needed()
    page.wait_for_function("image => image.complete && image.naturalWidth > 0", arg=shots.first.element_handle())

    page.go_back()
    page.locator(".tj-report").get_by_role("link", name="GitHub--0").click()
    expect(page.locator("main")).to_contain_text("resource-watch/resource-watch with 63 stars")
    expect(page.locator("img[alt^='Screenshot before step']")).to_have_count(5)
