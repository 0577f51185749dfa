"""AgentRewardBench judge files, one per trajectory and named after its task, imported as verdicts of a named
judge: alone, and many as one file (a folder or zip) through the command, the API and the upload page."""

import html
import io
import json
import re
import zipfile

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from rest_framework.test import APIClient

from tests.factories import TaskFactory, UserFactory
from tests.trajectories.verdict_samples import (
    JUDGE_AGENT, WORKARENA_IDS, judge_completion, judge_file, write_judgments,
)
from trajectories.models import AgentRun, Task, Verdict, VerdictSource
from trajectories.services.verdict_import import import_verdicts

pytestmark = pytest.mark.django_db

AGENT_FOLDER = f"{JUDGE_AGENT}/gpt-4o-noaxtree"
LONGEST = WORKARENA_IDS[2]  # a WorkArena++ id of 106 characters
JUDGMENTS = {
    f"webarena/{AGENT_FOLDER}/webarena.100.json": judge_file("webarena", "Star the repo", judge_completion("Successful")),
    f"webarena/{AGENT_FOLDER}/webarena.101.json": judge_file(
        "webarena", "Close issue 7", judge_completion("Unsuccessful", side="Yes", optimal="2. Suboptimal", loop="Yes")),
    f"webarena/{AGENT_FOLDER}/webarena.102.json": judge_file("webarena", "Fork it", "The screenshot is cut off."),
    f"webarena/{AGENT_FOLDER}/webarena.103_error.json": judge_file("webarena", "Rename it", None),
    f"workarena/{AGENT_FOLDER}/{LONGEST}.json": judge_file("workarena", "Order the cheapest item",
                                                         judge_completion("Successful")),
}
SOURCE = "AgentRewardBench gpt-4o-noaxtree (gpt-4o-2024-11-20)"


@pytest.fixture
def webarena_tasks():
    return [TaskFactory(benchmark="webarena", task_id=task_id) for task_id in ("100", "101", "102", "103")]


def _zip() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, document in JUDGMENTS.items():
            archive.writestr(f"judgments/{name}", json.dumps(document))
    return buffer.getvalue()


def _assert_stored():
    """Three verdicts of one source in two runs (one per benchmark, named after the agent); the file without a
    verdict and the failed request are left out and named."""
    [source] = VerdictSource.objects.filter(name="AgentRewardBench gpt-4o-noaxtree")
    assert str(source) == SOURCE and source.kind == "llm_judge"
    verdicts = {(v.run.name, v.task.task_id): v for v in Verdict.objects.select_related("run", "task")}
    assert {key: v.success for key, v in verdicts.items()} == {
        (f"{JUDGE_AGENT} on webarena", "100"): True, (f"{JUDGE_AGENT} on webarena", "101"): False,
        (f"{JUDGE_AGENT} on workarena", LONGEST.removeprefix("workarena.")): True}
    assert verdicts[(f"{JUDGE_AGENT} on webarena", "101")].labels == {
        "side_effect": "Yes", "optimality": "2. Suboptimal", "looping": "Yes"}
    assert AgentRun.objects.get(name=f"{JUDGE_AGENT} on workarena").model == JUDGE_AGENT
    assert Task.objects.get(benchmark="workarena", task_id=LONGEST.removeprefix("workarena.")).intent == (
        "Order the cheapest item")


def test_a_folder_of_judge_files_imports_as_one_file_with_the_command(webarena_tasks, tmp_path, capsys):
    folder = write_judgments(tmp_path / "judgments", JUDGMENTS)
    call_command("import_verdicts", str(folder))
    out = capsys.readouterr().out
    assert f"judgments: agent_reward_bench_judge: 3 verdicts of {SOURCE} (3) (3 new, 0 changed, 0 unchanged)" in out
    assert "judgments: 2 records left out:" in out
    assert (f"webarena/{AGENT_FOLDER}/webarena.102.json (response.choices[0].message.content 'The screenshot is "
            "cut off.'): no verdict in the judge's completion") in out
    assert f"webarena/{AGENT_FOLDER}/webarena.103_error.json (error " in out
    _assert_stored()

    call_command("import_verdicts", str(folder))
    assert "(0 new, 0 changed, 3 unchanged)" in capsys.readouterr().out
    assert Verdict.objects.count() == 3


def test_a_zip_of_them_through_the_command_and_alone(webarena_tasks, tmp_path, capsys):
    archive = tmp_path / "judgments.zip"
    archive.write_bytes(_zip())
    call_command("import_verdicts", str(archive))
    assert "judgments.zip: agent_reward_bench_judge: 3 verdicts" in capsys.readouterr().out
    _assert_stored()
    # One file alone: its name is its task.
    single = judge_file("webarena", "Fork it", judge_completion("Unsuccessful"))
    report = import_verdicts("webarena.102.json", json.dumps(single).encode())
    assert (report.new, report.problems) == (1, [])
    assert Verdict.objects.get(task__task_id="102").success is False


def test_a_zip_of_them_through_the_api(webarena_tasks):
    api = APIClient()
    api.force_authenticate(UserFactory())
    response = api.post("/api/verdicts/import/", {
        "file": [SimpleUploadedFile("judgments.zip", _zip(), content_type="application/zip")]}, format="multipart")
    assert response.status_code == 200, response.content
    [report] = response.json()["imported"]
    assert (report["format"], report["new"], report["sources"]) == ("agent_reward_bench_judge", 3, [f"{SOURCE} (3)"])
    assert [(p["file"], p["line"], p["field"]) for p in report["problems"]] == [
        ("judgments.zip", f"judgments/webarena/{AGENT_FOLDER}/webarena.102.json", "response.choices[0].message.content"),
        ("judgments.zip", f"judgments/webarena/{AGENT_FOLDER}/webarena.103_error.json", "error")]
    _assert_stored()


def test_a_zip_of_them_through_the_upload_page(webarena_tasks, client):
    client.force_login(UserFactory())
    first = client.post("/runs/import-verdicts/", {"files": [SimpleUploadedFile("judgments.zip", _zip())]})
    page = html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", first.content.decode())))
    assert f"{JUDGE_AGENT} on webarena: 2 verdicts of 2 tasks of webarena" in page
    token = re.search(r'name="token" value="([^"]+)"', first.content.decode())[1]
    choices = {f"file0-agent{number}-{name}": value for number, benchmark in enumerate(("webarena", "workarena"))
               for name, value in (("choice", "new"), ("new", f"{JUDGE_AGENT} on {benchmark}"))}
    done = client.post("/runs/import-verdicts/", {"token": token, **choices})
    page = html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", done.content.decode())))
    assert "3 new, 0 changed, 0 unchanged" in page, page
    assert "webarena.102.json" in page
    _assert_stored()


def test_a_zip_over_the_limits_is_refused_before_it_is_read(webarena_tasks, settings):
    settings.INGEST_MAX_FILES = 2
    api = APIClient()
    api.force_authenticate(UserFactory())
    response = api.post("/api/verdicts/import/", {
        "file": [SimpleUploadedFile("judgments.zip", _zip(), content_type="application/zip")]}, format="multipart")
    assert response.status_code == 400
    assert response.json()["refused"] == [
        "judgments.zip: refused, nothing was read: more than 2 files; nothing was stored."]
    assert not Verdict.objects.exists()
