"""POST /api/verdicts/import/: files of any source, each stored whole or refused."""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from tests.api.conftest import client_for, member
from tests.factories import AgentRunFactory
from trajectories.models import AgentRun, Verdict

pytestmark = pytest.mark.django_db


def test_human_labels_and_a_refused_file(shared_data):
    owner = member(None, "owner")
    client = client_for(owner)
    labels = shared_data / "agent-outputs" / "online-mind2web" / "human_label.excerpt.json"
    response = client.post("/api/verdicts/import/", {"file": [SimpleUploadedFile(labels.name, labels.read_bytes())]},
                           format="multipart")
    assert response.status_code == 200, response.content
    report = response.json()["imported"][0]
    assert (report["format"], report["new"], len(report["runs"])) == ("online_mind2web_human_labels", 180, 6)
    assert AgentRun.objects.get(name="Operator").uploaded_by == owner
    assert Verdict.objects.filter(origin="api", label="not_executable").count() == 3
    judge = shared_data / "agent-outputs" / "online-mind2web"
    webjudge = next(judge.glob("WebJudge_*"))
    mixed = client.post("/api/verdicts/import/", {
        "file": [SimpleUploadedFile(webjudge.name, webjudge.read_bytes()),
                 SimpleUploadedFile(labels.name, labels.read_bytes())]}, format="multipart")
    assert mixed.status_code == 400
    assert "give the run" in mixed.json()["refused"][0]
    assert mixed.json()["imported"][0]["unchanged"] == 180
    stranger = client_for(member(None, "stranger"))
    again = stranger.post("/api/verdicts/import/", {"file": [SimpleUploadedFile(labels.name, labels.read_bytes())]},
                          format="multipart")
    assert again.status_code == 400 and "belongs to another account" in again.json()["refused"][0]


def test_the_run_verdicts_give_every_source_and_hide_human_ones_from_a_blind_grader(shared_data):
    owner = member(None, "owner")
    labels = shared_data / "agent-outputs" / "online-mind2web" / "human_label.excerpt.json"
    client_for(owner).post("/api/verdicts/import/", {"file": [SimpleUploadedFile(labels.name, labels.read_bytes())]},
                           format="multipart")
    run = AgentRun.objects.get(name="Operator")
    tasks = client_for(owner).get(f"/api/runs/{run.pk}/verdicts/").json()["tasks"]
    assert len(tasks) == 30
    said = [source for task in tasks for source in task["sources"]]
    assert {(source["kind"], source["name"]) for source in said} == {("human", "Online-Mind2Web human labels")}
    assert [(source["success"], source["label"]) for source in said].count((None, "not_executable")) == 3
    blind = client_for(member("annotator", "grader")).get(f"/api/runs/{run.pk}/verdicts/").json()["tasks"]
    assert all(task["sources"] == [] for task in blind)


def test_importing_into_another_accounts_run_is_refused_before_the_files_are_read():
    run = AgentRunFactory(name="their-run", uploaded_by=member(None, "owner"))
    stranger = client_for(member(None, "stranger"))
    for fields in ({"run": "their-run"}, {"run": "their-run", "file": [SimpleUploadedFile("x.csv", b"")]},
                   {"mapping": '{"Operator_human_label": %d}' % run.pk}):
        refused = stranger.post("/api/verdicts/import/", fields, format="multipart")
        assert refused.status_code == 403 and "belongs to another account" in refused.json()["detail"], fields
