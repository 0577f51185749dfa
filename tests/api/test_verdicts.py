"""The verdict endpoints: every source per task, agreement, grading and the two imports."""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from tests.api.conftest import client_for, member
from tests.metrics.verdict_data import three_voices
from trajectories.models import AgentRun, OutcomeGrade, TaskResult

pytestmark = pytest.mark.django_db


@pytest.fixture
def voices(django_capture_on_commit_callbacks):
    return three_voices(django_capture_on_commit_callbacks)


def test_run_verdicts_name_every_source(voices):
    body = client_for(member(None, "dev")).get(f"/api/runs/{voices['run'].pk}/verdicts/").json()
    disputed = next(task for task in body["tasks"] if task["trajectory_id"] == voices["disputed"].pk)
    assert (disputed["harness"], disputed["check"], disputed["human"], disputed["human_success"]) == (
        False, True, 1.0, True)
    assert disputed["check_source"] == "string_match" and disputed["harness_source"] == "merged_log.txt"
    assert disputed["disagreements"] == ["harness-check", "harness-human"]
    assert body["disagreements"] == {"harness-check": 1, "harness-human": 1, "check-human": 0}
    assert [rate["source"] for rate in body["rates"]] == ["harness", "check", "human"]


def test_run_verdicts_are_blind_for_a_grader_who_has_not_graded(voices):
    body = client_for(member("annotator", "newcomer")).get(f"/api/runs/{voices['run'].pk}/verdicts/").json()
    assert all(task["human"] is None and task["human_hidden"] for task in body["tasks"])
    assert all("harness-human" not in task["disagreements"] for task in body["tasks"])


def test_grading_through_the_api(voices):
    url = f"/api/trajectories/{voices['disputed'].pk}/grades/"
    grader = client_for(member("reviewer", "rev"))
    assert grader.get(url).json() == {"hidden": 2, "grades": []}
    body = grader.post(url, {"grade": "0", "note": "wrong page"}, format="json").json()
    assert body["hidden"] == 0 and len(body["grades"]) == 3
    assert OutcomeGrade.objects.get(grader_name="rev").origin == "api"
    assert grader.post(url, {"grade": "0.7"}, format="json").status_code == 400
    assert client_for(member(None, "dev")).post(url, {"grade": "1"}, format="json").status_code == 403


def test_agreement_endpoint(voices):
    body = client_for(member(None, "dev")).get(f"/api/runs/{voices['run'].pk}/agreement/").json()
    assert body["overall"]["alpha"] == pytest.approx(1 - 3 * 2 / 36)
    assert body["overall"]["pairs"] == [{"first": "gina", "second": "hugo", "items": 2, "agreed": 1, "percent": 50.0}]
    check = next(row for row in body["overall"]["sources"] if row["source"] == "check")
    assert (check["accuracy"], check["kappa"]) == (1.0, 1.0)
    assert {table["group"] for table in body["by_site"]} == {"shopping", "gitlab"}


def test_leaderboard_api_switches_the_success_source(voices):
    client = client_for(member(None, "dev"))
    [row] = client.get("/api/leaderboard/", {"success_source": "check"}).json()["results"]
    assert row["metrics"]["success"]["mean"] == 0.5
    assert row["success_sources"]["harness"]["mean"] == 0.0 and row["results_only"] is False
    assert client.get("/api/leaderboard/", {"success_source": "oracle"}).status_code == 400


def test_outcomes_and_grades_upload(webarena_tasks, shared_data):
    owner = member(None, "owner")
    client = client_for(owner)
    path = shared_data / "more-benchmarks" / "leaderboard-per-task.excerpt.json"
    response = client.post("/api/outcomes/import/", {"file": SimpleUploadedFile(path.name, path.read_bytes())},
                           format="multipart")
    assert response.status_code == 200, response.content
    assert response.json()["runs"][0]["run"] == "jace"
    run = AgentRun.objects.get(name="jace")
    assert run.uploaded_by == owner and TaskResult.objects.filter(run=run, origin="api").count() == 25
    bad = client.post("/api/outcomes/import/", {"file": SimpleUploadedFile("x.csv", b"task_id,success\n1,1\n")},
                      format="multipart")
    assert bad.status_code == 400 and "x.csv: no run column" in bad.json()["detail"]
    stranger = client_for(member(None, "stranger"))
    again = stranger.post("/api/outcomes/import/", {"file": SimpleUploadedFile(path.name, path.read_bytes())},
                          format="multipart")
    assert again.status_code == 400 and "belongs to another account" in again.json()["detail"]

    grades = shared_data / "more-benchmarks" / "agentoccam-human-grades.excerpt.csv"
    url = f"/api/runs/{run.pk}/grades/import/"
    assert stranger.post(url, {"file": SimpleUploadedFile(grades.name, grades.read_bytes())},
                         format="multipart").status_code == 403
    response = client.post(url, {"file": SimpleUploadedFile(grades.name, grades.read_bytes())}, format="multipart")
    assert response.status_code == 200 and response.json()["graders"] == {"Alice": 20, "Bob": 20, "Colin": 20}


@pytest.fixture
def webarena_tasks(db, shared_data):
    from trajectories.services.tasks import import_task_file
    import_task_file(shared_data / "webarena" / "test.raw.json")


def test_runs_api_marks_results_only_runs(webarena_tasks, shared_data, voices):
    from trajectories.services.outcomes_and_grades import import_outcomes
    path = shared_data / "more-benchmarks" / "leaderboard-per-task.excerpt.json"
    import_outcomes(path.name, path.read_bytes())
    body = client_for(member(None, "dev")).get("/api/runs/").json()
    flags = {run["name"]: run["results_only"] for run in body["results"]}
    assert flags == {"jace": True, "three-voices": False}


def test_a_grades_import_never_writes_another_accounts_grade(voices):
    run, disputed = voices["run"], voices["disputed"]
    run.uploaded_by = owner = member(None, "owner")
    run.save()
    task_id = disputed.task.task_id
    url = f"/api/runs/{run.pk}/grades/import/"
    client = client_for(owner)
    forged_file = SimpleUploadedFile("g.csv", f"task_id,grader,grade,note\n{task_id},gina,0,forged\n".encode())
    forged = client.post(url, {"file": forged_file}, format="multipart")
    assert forged.status_code == 400
    assert "g.csv, line 2" in forged.json()["detail"] and "'gina' is another account" in forged.json()["detail"]
    assert OutcomeGrade.objects.get(run=run, task=disputed.task, grader_name="gina").note == "answer is right"
    # a new account's name is refused too, not only a name that has graded here
    member(None, "ann1")
    assert client.post(url, {"file": SimpleUploadedFile("g.csv", f"task_id,grader,grade\n{task_id},ann1,0\n"
                                                                 .encode())}, format="multipart").status_code == 400
    # the importer's own name is recorded as the importer's grade; other names stay external graders
    own = client.post(url, {"file": SimpleUploadedFile("g.csv", f"task_id,grader,grade\n{task_id},owner,0\n"
                                                                f"{task_id},Outside Panel,1\n".encode())},
                      format="multipart")
    assert own.status_code == 200, own.content
    assert OutcomeGrade.objects.get(run=run, grader_name="owner").grader == owner
    assert OutcomeGrade.objects.get(run=run, grader_name="Outside Panel").grader is None
