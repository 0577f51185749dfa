import pytest
from rest_framework.test import APIClient

from failures.models import AttributionSource, FailureAttribution, SourceKind
from failures.services.annotations import record_failure_annotation
from tests.factories import AgentRunFactory, StepFactory, TrajectoryFactory, UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def failed():
    trajectory = TrajectoryFactory(run=AgentRunFactory(name="team"), success=False, step_count=4)
    for index in range(1, 5):
        StepFactory(trajectory=trajectory, index=index, agent="A" if index % 2 else "B")
    return trajectory


def _client(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


def test_annotations_are_blind_until_one_annotates_over_the_api(failed, annotator, other_annotator):
    record_failure_annotation(failed, other_annotator, step=1, failure_type="looped", note="<b>x</b>")
    client, url = _client(annotator), f"/api/trajectories/{failed.pk}/failure-annotations/"

    assert client.get(url).json() == {"hidden": 1, "attributions": []}
    refused = client.post(url, {"step": 9, "failure_type": "looped"}, format="json")
    assert refused.status_code == 400 and "decisive step 9" in refused.json()["errors"]["annotation"]

    answer = client.post(url, {"step": 2, "failure_type": "wrong_value", "agent": "B"}, format="json").json()

    assert answer["hidden"] == 0
    assert [(a["annotator"], a["step"], a["agent"], a["note"]) for a in answer["attributions"]] == [
        ("bob", 1, "", "<b>x</b>"), ("alice", 2, "B", "")]
    assert FailureAttribution.objects.get(annotator=annotator).origin == "api"
    assert _client(UserFactory()).post(url, {"step": 1, "failure_type": "looped"}, format="json").status_code == 403


def test_the_attribution_table_over_the_api(failed, annotator):
    record_failure_annotation(failed, annotator, step=2, failure_type="looped", agent="B")
    judge = AttributionSource.objects.create(kind=SourceKind.JUDGE, name="step by step", model="m")
    FailureAttribution.objects.create(trajectory=failed, source=judge, step_index=3, agent="B")
    client = _client(UserFactory())

    body = client.get("/api/failures/attribution/", {"run": "team"}).json()

    assert body["reference"] == ""
    ceiling, source, floor = body["rows"]
    assert (ceiling["role"], ceiling["trajectories"], ceiling["exact"]["value"]) == ("ceiling", 0, None)
    assert source["source"] == {"kind": "judge", "name": "step by step", "model": "m"}
    assert (source["exact"]["value"], source["within_1"]["value"], source["agent"]["value"]) == (0.0, 1.0, 1.0)
    assert source["exact"]["n"] == 1 and source["exact"]["low"] == 0.0
    assert floor["role"] == "floor" and floor["exact"]["value"] == 0.25 and floor["agent"]["value"] == 0.5
    assert client.get("/api/failures/attribution/", {"reference": "human graders"}).json()["reference"] == (
        "human graders")
    unknown = client.get("/api/failures/attribution/", {"reference": "nobody"})
    assert unknown.status_code == 400 and "known: human graders" in unknown.json()["errors"]["reference"]
    assert client.get("/api/failures/attribution/", {"run": "none"}).status_code == 400
