"""A run folder uploaded zipped on the upload page, as a user would: the report counts every file and
each trajectory's page shows its verdicts with their sources and says what the files do not record.
One parameter per tool's sample folder."""

import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.browser_helpers import log_in, submit_import
from tests.factories import UserFactory
from tests.trajectories.verdict_samples import write_verdict_run
from trajectories.models import Trajectory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@dataclass(frozen=True)
class Sample:
    """A run folder, what the import report must count, and what pages of its trajectories must show."""

    folder: Callable[[Path, Path], Path]  # (shared data, a scratch folder) -> the folder to upload
    counts: tuple[str, ...]  # what the report's counts say
    pages: dict[str, tuple[str, ...]]  # task id -> texts its trajectory page shows


SAMPLES = {
    "trajectory-v1-with-verdicts": Sample(
        folder=lambda shared, scratch: write_verdict_run(scratch / "run"),
        counts=("2 trajectories imported", "0 unchanged", "0 replaced", "0 failed", "0 skipped"),
        pages={
            "click-dialog": ("harness verdict by BrowserGym reward", "Agent self-report: PASS",
                             "The file records no screenshots and no accessibility tree or page HTML for these steps."),
            "click-checkboxes": ("expert graders: FAIL", "WebJudge (o4-mini)", "score 4 (success at 3 or above)",
                                 "No agent steps: the file records the outcome only (final answer and verdicts)."),
        },
    ),
}


def _zipped(folder: Path, scratch: Path) -> Path:
    archive = scratch / f"{folder.name}.zip"
    with zipfile.ZipFile(archive, "w") as zipped:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                zipped.write(path, f"{folder.name}/{path.relative_to(folder)}")
    return archive


@pytest.mark.parametrize("name", list(SAMPLES))
def test_a_run_folder_uploaded_on_the_page(page, live_server, shared_data, tmp_path, name):
    sample = SAMPLES[name]
    log_in(page.context, live_server, UserFactory(username="uploader"))
    page.goto(live_server.url + "/runs/import/")
    expect(page.locator("#run-sources")).to_contain_text("browser-use")
    page.fill("#id_run", name)
    page.set_input_files("#id_files", [str(_zipped(sample.folder(shared_data, tmp_path), tmp_path))])
    submit_import(page)
    page.wait_for_selector("#import-job[data-status='done']")
    for words in sample.counts:
        expect(page.locator(".tj-count", has_text=words)).to_have_text(words)

    for task_id, texts in sample.pages.items():
        trajectory = Trajectory.objects.get(run__name=name, task__task_id=task_id)
        page.goto(f"{live_server.url}/trajectories/{trajectory.pk}/")
        for text in texts:
            expect(page.locator("main")).to_contain_text(text)
    # what an agent wrote is shown as text, never run
    assert page.evaluate("document.querySelectorAll('main script, main img[src=x]').length") == 0
