"""Every endpoint answers errors in one shape: {"detail": sentence, "code": word} (+ "errors")."""

import logging

import pytest
from knox.crypto import hash_token
from rest_framework import serializers
from rest_framework.exceptions import ValidationError

from accounts.models import ApiToken
from infrastructure.api import error_body
from tests.api.conftest import client_for
from tests.factories import JudgeConfigFactory, TaskFactory

pytestmark = pytest.mark.django_db


def _shape(response) -> dict:
    body = response.json()
    assert isinstance(body["detail"], str) and body["detail"]
    assert isinstance(body["code"], str) and body["code"]
    return body


def test_nested_validation_errors_are_named_by_path(users):
    TaskFactory(task_id="5")
    response = client_for(users["annotator"]).post(
        "/api/gold/", {"task_id": "5", "steps": [{"text": "ok"}, {"action_type": "fly"}]}, format="json"
    )
    body = _shape(response)
    assert response.status_code == 400 and body["code"] == "invalid"
    assert body["errors"] == {"steps[1].action_type": '"fly" is not a valid choice.'}
    assert body["detail"] == 'steps[1].action_type: "fly" is not a valid choice.'


def test_error_body_flattens_lists_dicts_and_bare_messages():
    class Inner(serializers.Serializer):
        value = serializers.IntegerField()

    class Outer(serializers.Serializer):
        items = Inner(many=True)
        tags = serializers.ListField(child=serializers.IntegerField())
        name = serializers.CharField()

    outer = Outer(data={"items": [{"value": 1}, {"value": "x"}], "tags": [1, "y"]})
    assert not outer.is_valid()
    errors = error_body(ValidationError(outer.errors))["errors"]
    assert errors == {"items[1].value": "A valid integer is required.", "tags[1]": "A valid integer is required.",
                      "name": "This field is required."}
    bare = error_body(ValidationError("Send either files or trajectories."))
    assert bare == {"detail": "Send either files or trajectories.", "code": "invalid",
                    "errors": {"non_field_errors": "Send either files or trajectories."}}


@pytest.mark.parametrize("url", ["/api/runs/", "/api/gold/", "/api/evaluations/", "/api/judge-configs/",
                                 "/api/scores/", "/api/exports/scores.csv?run=x"])
def test_anonymous_and_bad_token(db, url):
    anonymous = client_for(None).get(url)
    assert anonymous.status_code == 401 and _shape(anonymous)["code"] == "not_authenticated"
    bad_token = client_for(None)
    bad_token.credentials(HTTP_AUTHORIZATION="Token nope")
    response = bad_token.get(url)
    assert response.status_code == 401 and _shape(response)["code"] == "authentication_failed"


def test_token_from_the_token_endpoint_works(users):
    users["reader"].set_password("s3cret-pass")
    users["reader"].save()
    client = client_for(None)
    token = client.post("/api/token/", {"username": "rob", "password": "s3cret-pass"}, format="json").json()["token"]
    assert ApiToken.objects.get(user=users["reader"]).digest == hash_token(token)  # a hash, not the token
    client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    assert client.get("/api/tasks/").status_code == 200
    wrong = client_for(None).post("/api/token/", {"username": "rob", "password": "x"}, format="json")
    assert wrong.status_code == 400 and _shape(wrong)["errors"]["non_field_errors"]


def test_not_found_forbidden_method_and_conflict(users, platform):
    reader = client_for(users["reader"])
    missing = reader.get("/api/trajectories/99999/")
    assert missing.status_code == 404 and _shape(missing)["code"] == "not_found"
    method = reader.delete("/api/tasks/1/")
    assert method.status_code == 405 and _shape(method)["code"] == "method_not_allowed"
    forbidden = reader.post("/api/judge-configs/", {"name": "x", "backend": "exact"}, format="json")
    assert forbidden.status_code == 403 and _shape(forbidden)["code"] == "permission_denied"
    admin = client_for(users["admin"])
    in_use = admin.delete(f"/api/judge-configs/{platform['judge'].pk}/")
    assert in_use.status_code == 409 and _shape(in_use)["code"] == "conflict"


def test_gold_workflow_errors_share_the_shape(users):
    TaskFactory(task_id="5")
    annotator = client_for(users["annotator"])
    gold = annotator.post("/api/gold/", {"task_id": "5", "steps": [{"text": "Click Go"}]}, format="json").json()
    stale = annotator.put(f"/api/gold/{gold['id']}/", {"version": 0, "steps": []}, format="json")
    assert stale.status_code == 409 and _shape(stale)["code"] == "version_conflict"
    empty = annotator.put(f"/api/gold/{gold['id']}/", {"version": 1, "steps": [{"text": " "}]}, format="json")
    assert empty.status_code == 400 and _shape(empty)["code"] == "invalid" and "steps[0].text" in empty.json()["errors"]
    review = client_for(users["reader"]).post(f"/api/gold/{gold['id']}/review/", {"version": 1, "decision": "approved"},
                                              format="json")
    assert review.status_code == 404 and _shape(review)["code"] == "not_found"  # drafts are not shown to others


def test_unexpected_failures_are_logged_and_answered_in_the_same_shape(api, monkeypatch, caplog):
    def broken():
        raise RuntimeError("database on fire")

    monkeypatch.setattr("trajectories.selectors.runs_overview", broken)
    api.raise_request_exception = False
    with caplog.at_level(logging.ERROR, logger="infrastructure.api"):
        response = api.get("/api/runs/")
    assert response.status_code == 500
    assert response.json() == {"detail": "server error", "code": "server_error"}
    assert "database on fire" in caplog.text


def test_unknown_paths_and_bad_ids_answer_json(api):
    unknown = api.get("/api/nothing/here/")
    assert unknown.status_code == 404 and _shape(unknown)["code"] == "not_found"
    negative_id = api.post("/api/runs/-1/", {}, format="json")
    assert negative_id.status_code == 404 and negative_id["Content-Type"] == "application/json"
    for value in ("1.5", "0", str(2**63)):
        bad = api.get(f"/api/scores/?job={value}")
        assert bad.status_code == 400 and "job" in _shape(bad)["errors"], value


def test_null_characters_are_a_400_naming_the_field(api, platform):
    """PostgreSQL refuses NUL in text; it must never reach a lookup as a database error."""
    as_json = api.post("/api/evaluations/", {"runs": [platform["runs"]["agent-a"].name], "judge": "v7\x00"}, format="json")
    assert as_json.status_code == 400 and "judge" in _shape(as_json)["errors"]
    as_form = api.post("/api/evaluations/", {"runs": platform["runs"]["agent-a"].name, "judge": "v7\x00"}, format="multipart")
    assert as_form.status_code == 400
    assert _shape(as_form)["detail"] == "Null characters are not allowed (form field 'judge')."
    in_query = api.get("/api/comparisons/?baseline=a%00&candidate=b")
    assert in_query.status_code == 400 and _shape(in_query)["code"] == "null_characters_not_allowed"


def test_null_characters_in_pages_are_a_400(client, django_user_model):
    client.force_login(django_user_model.objects.create_user("nul", password="x"))
    response = client.get("/annotation/export/?annotator=a%00")
    assert response.status_code == 400 and b"query field 'annotator'" in response.content


@pytest.mark.parametrize("url", ["/api/evaluations/?ordering=rate_per_second", "/api/scores/?ordering=details",
                                 "/api/judge-configs/?ordering=has_api_key", "/api/gold/?ordering=steps",
                                 "/api/aggregates/?ordering=run_name", "/api/judge-decisions/?ordering=inputs"])
def test_ordering_by_a_column_a_list_does_not_offer_is_ignored(api, platform, url):
    JudgeConfigFactory(name="offline")  # a second judge configuration beside the platform's: an order to keep
    asked = api.get(url)
    assert asked.status_code == 200
    # The same rows in the same order as without the parameter: the list's own order.
    unasked = api.get(url.split("?")[0]).json()
    assert asked.json()["results"] == unasked["results"] and len(unasked["results"]) >= 2, unasked


def test_lists_order_by_the_columns_they_name(api, platform):
    scores = api.get("/api/scores/?ordering=-step_success,id").json()["results"]
    values = [score["step_success"] for score in scores if score["step_success"] is not None]
    assert values == sorted(values, reverse=True) and len(values) >= 4
    jobs = api.get("/api/evaluations/?ordering=created_at").json()["results"]
    assert [job["id"] for job in jobs] == sorted(job["id"] for job in jobs)
