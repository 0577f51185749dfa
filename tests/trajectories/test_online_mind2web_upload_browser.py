"""Online-Mind2Web and Agent-E folders uploaded as zips through the upload page, in Debian's Chromium."""

import zipfile

import pytest
from playwright.sync_api import expect

from tests.browser_helpers import log_in, page_width, sized_page, submit_import, width  # noqa: F401 - fixtures
from tests.factories import UserFactory
from trajectories.models import AgentRun

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _zip(folder, target):
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                archive.write(path, f"{folder.name}/{path.relative_to(folder).as_posix()}")
    return target


@pytest.mark.parametrize("folder, run, counts", [
    ("online-mind2web", "om2w-web", ("16 trajectories imported", "15 trajectories skipped", "3 other files skipped")),
    ("agent-e", "agent-e-web", ("30 trajectories imported", "15 trajectories unchanged", "15 trajectories skipped")),
])
def test_a_folder_zipped_through_the_upload_page(sized_page, live_server, shared_data, tmp_path, width, folder, run,
                                                 counts):
    page = sized_page
    log_in(page.context, live_server, UserFactory(username="uploader"))
    page.goto(live_server.url + "/runs/import/")
    page.fill("#id_run", run)
    page.set_input_files("#id_files", [str(_zip(shared_data / "agent-outputs" / folder, tmp_path / f"{folder}.zip"))])
    submit_import(page)
    page.wait_for_selector("#import-job[data-status='done']")
    expect(page.locator("#job-failures")).to_have_text("nothing failed")
    for count in counts:
        expect(page.locator(".tj-report")).to_contain_text(count)
    expect(page.locator(".tj-entry.skipped").first).to_contain_text(
        "import_tasks" if folder == "online-mind2web" else "as a run of their own")
    assert page_width(page) <= width
    assert AgentRun.objects.get(name=run).trajectories.count() == int(counts[0].split()[0])
