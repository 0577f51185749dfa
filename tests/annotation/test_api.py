import pytest
from rest_framework.test import APIClient

from annotation.models import GoldTrajectory
from tests.factories import GoldStepFactory, GoldTrajectoryFactory, TaskFactory, UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def task():
    return TaskFactory(task_id="82", number=82, requirements=["63 min"], requirements_source="fuzzy_match")


def _client(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


def _create(client, task, **body):
    return client.post("/api/gold/", {"task_id": task.task_id, "steps": [{"text": "Scroll down"}], **body},
                       format="json")


def test_create_read_and_list(annotator, task):
    client = _client(annotator)

    created = _create(client, task, steps=[
        {"text": "Click on the 'Find directions between two points'"},
        {"action_type": "type", "element_role": "textbox", "element_name": "From", "value": "MIT"},
    ])

    assert created.status_code == 201, created.data
    body = created.data
    assert (body["task"]["task_id"], body["annotator"], body["status"], body["version"]) == ("82", "alice", "draft", 1)
    assert [s["text"] for s in body["steps"]] == [
        "Click on the 'Find directions between two points'", "Type 'MIT' into the 'From' textbox"
    ]
    assert client.get(f"/api/gold/{body['id']}/").data["steps"][1]["element_name"] == "From"
    listed = client.get("/api/gold/", {"task_id": "82", "annotator": "alice"}).data
    assert listed["count"] == 1 and listed["results"][0]["id"] == body["id"]
    assert client.get("/api/gold/", {"status": "approved"}).data["count"] == 0


def test_create_needs_a_known_task(annotator):
    client = _client(annotator)
    assert client.post("/api/gold/", {"steps": []}, format="json").status_code == 400
    assert client.post("/api/gold/", {"task_id": "nope"}, format="json").status_code == 404


def test_update_with_the_version_check_answers_409_with_both_versions(annotator, reviewer, task):
    gold_id = _create(_client(annotator), task).data["id"]
    first = _client(annotator).put(f"/api/gold/{gold_id}/", {"version": 1, "steps": [{"text": "Mine"}]}, format="json")
    assert first.status_code == 200 and first.data["version"] == 2

    stale = _client(reviewer).put(f"/api/gold/{gold_id}/", {"version": 1, "steps": [{"text": "Theirs"}]},
                                  format="json")

    assert stale.status_code == 409
    assert stale.data["code"] == "version_conflict"
    assert [s["text"] for s in stale.data["current"]["steps"]] == ["Mine"]
    assert stale.data["yours"]["steps"] == [{"text": "Theirs"}]
    assert [s.text for s in GoldTrajectory.objects.get(pk=gold_id).steps.all()] == ["Mine"]


def test_update_requires_the_version(annotator, task):
    gold_id = _create(_client(annotator), task).data["id"]
    response = _client(annotator).put(f"/api/gold/{gold_id}/", {"steps": []}, format="json")
    assert response.status_code == 400 and "version" in response.data["errors"]


def test_patch_keeps_what_is_not_sent(annotator, task):
    client = _client(annotator)
    gold_id = _create(client, task).data["id"]

    response = client.patch(f"/api/gold/{gold_id}/", {"version": 1, "final_answer": "63 min"}, format="json")

    assert (response.data["final_answer"], [s["text"] for s in response.data["steps"]]) == ("63 min", ["Scroll down"])


def test_validation_errors_name_the_field(annotator, task):
    client = _client(annotator)
    gold_id = _create(client, task).data["id"]
    response = client.put(f"/api/gold/{gold_id}/", {"version": 1, "steps": [{"text": " "}]}, format="json")
    assert response.status_code == 400 and response.data["errors"] == {
        "steps[0].text": "a step needs its text (or an action type to write it from)"
    }


def test_submit_and_review(annotator, reviewer, task):
    gold_id = _create(_client(annotator), task).data["id"]

    submitted = _client(annotator).post(f"/api/gold/{gold_id}/submit/", {"version": 1}, format="json")
    assert (submitted.status_code, submitted.data["status"]) == (200, "submitted")
    again = _client(annotator).post(f"/api/gold/{gold_id}/submit/", {"version": 2}, format="json")
    assert again.status_code == 409 and again.data["code"] == "status"
    assert _client(annotator).post(f"/api/gold/{gold_id}/review/", {"version": 2, "decision": "approved"},
                                   format="json").status_code == 403

    reviewed = _client(reviewer).post(f"/api/gold/{gold_id}/review/",
                                      {"version": 2, "decision": "changes_requested", "comment": "Add the Go step."},
                                      format="json")
    assert reviewed.status_code == 200
    assert reviewed.data["status"] == "changes_requested"
    assert reviewed.data["reviews"][0]["comment"] == "Add the Go step."


def test_reviewing_without_the_role_is_refused_before_the_body_is_read(task):
    gold = GoldTrajectoryFactory(task=task, status="approved")
    nobody = _client(UserFactory(username="nobody"))
    for body in ({}, {"version": "x", "decision": "maybe"}, {"version": gold.version, "decision": "approved"}):
        response = nobody.post(f"/api/gold/{gold.pk}/review/", body, format="json")
        assert response.status_code == 403 and response.data["code"] == "permission_denied"


def test_step_endpoints(annotator, task):
    client = _client(annotator)
    gold_id = _create(client, task).data["id"]
    url = f"/api/gold/{gold_id}/steps/"

    inserted = client.post(url, {"version": 1, "position": 1, "text": "Click on the 'Go' button"}, format="json")
    assert inserted.status_code == 201 and inserted.data["version"] == 2
    appended = client.post(url, {"version": 2, "action_type": "press", "value": "Enter"}, format="json")
    assert [s["text"] for s in appended.data["steps"]] == ["Click on the 'Go' button", "Scroll down", "Press Enter"]

    patched = client.patch(f"{url}2/", {"version": 3, "value": "up", "action_type": "scroll", "text": ""},
                           format="json")
    assert patched.data["steps"][1]["text"] == "Scroll up"
    replaced = client.put(f"{url}1/", {"version": 4, "text": "Click on 'Go'"}, format="json")
    assert replaced.data["steps"][0] == {"index": 1, "text": "Click on 'Go'", "label": "", "action_type": "",
                                         "element_role": "", "element_name": "", "value": ""}
    deleted = client.delete(f"{url}3/?version=5")
    assert [s["text"] for s in deleted.data["steps"]] == ["Click on 'Go'", "Scroll up"]
    assert client.get(f"{url}2/").data["text"] == "Scroll up"
    assert client.get(url).data[0]["index"] == 1

    assert client.delete(f"{url}9/?version=6").status_code == 404
    assert client.delete(f"{url}1/?version=5").status_code == 409
    assert client.post(url, {"version": 6, "position": 9, "text": "x"}, format="json").status_code == 400
    assert GoldTrajectory.objects.get(pk=gold_id).version == 6


def test_blind_gold_is_not_found(annotator, other_annotator, task):
    gold_id = _create(_client(other_annotator), task).data["id"]
    assert _client(annotator).get(f"/api/gold/{gold_id}/").status_code == 404
    assert _client(annotator).get("/api/gold/").data["count"] == 0


def test_requirements(annotator, task):
    client = _client(annotator)
    url = "/api/requirements/webarena/82/"

    assert client.get(url).data == {"benchmark": "webarena", "task_id": "82", "requirements": ["63 min"],
                                    "source": "fuzzy_match"}
    saved = client.put(url, {"requirements": ["63 min", "walk"], "expected": ["63 min"]}, format="json")
    assert saved.data["requirements"] == ["63 min", "walk"] and saved.data["source"] == "annotator"
    conflict = client.put(url, {"requirements": ["x"], "expected": ["63 min"]}, format="json")
    assert conflict.status_code == 409 and conflict.data["current"] == ["63 min", "walk"]
    assert client.get("/api/requirements/webarena/999/").status_code == 404
    assert _client(UserFactory()).put(url, {"requirements": []}, format="json").status_code == 403


def test_anonymous_requests_are_refused(task):
    gold = GoldTrajectoryFactory(task=task, status="approved")
    GoldStepFactory(gold=gold)
    assert APIClient().get("/api/gold/").status_code in (401, 403)
