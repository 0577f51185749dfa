"""An AgentLab study, zipped, through the upload page in Debian's Chromium: imported, then shown."""

import io
import zipfile

import pytest
from playwright.sync_api import expect

from tests.browser_helpers import log_in, page_width, sized_page, submit_import, width  # noqa: F401 - fixtures
from tests.factories import UserFactory
from trajectories.models import AgentRun, Trajectory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_an_agentlab_study_through_the_upload_page(sized_page, live_server, shared_data, tmp_path, width):
    study = shared_data / "agent-outputs" / "browsergym-agentlab"
    archive = tmp_path / "study.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zipped:
        for path in sorted(study.rglob("*")):
            if path.is_file():
                zipped.write(path, f"study/{path.relative_to(study).as_posix()}")
    page = sized_page
    log_in(page.context, live_server, UserFactory(username="uploader"))
    page.goto(live_server.url + "/runs/import/")
    page.fill("#id_run", "agentlab-study")
    page.set_input_files("#id_files", [str(archive)])
    submit_import(page)
    page.wait_for_selector("#import-job[data-status='done']")
    expect(page.locator("#job-failures")).to_have_text("nothing failed")
    expect(page.locator("main")).to_contain_text("part of a BrowserGym episode folder: read with its summary_info.json")
    assert page_width(page) <= width

    run = AgentRun.objects.get(name="agentlab-study")
    dialog = Trajectory.objects.get(run=run, task__task_id="click-dialog_28")
    page.goto(f"{live_server.url}/trajectories/{dialog.pk}/")
    main = page.locator("main")
    expect(main).to_contain_text('Close the dialog box by clicking the "x".')
    expect(main).to_contain_text("click('20')")
    expect(main).to_contain_text('The dialog box is currently open, and the "Close" button is focused.')
    assert page_width(page) <= width
