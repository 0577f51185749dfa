"""The reference gold of a task (review, import, API) and the gold quality API."""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from rest_framework.test import APIClient

from annotation.models import GoldCheckJob, GoldFlag, GoldStatus, GoldTrajectory
from annotation.services.gold_import import import_gold_file
from annotation.services.gold_review import review_gold
from tests.annotation.sheets import block, excerpt_rows, relabel, sheet_bytes
from tests.factories import GoldTrajectoryFactory, TaskFactory

pytestmark = pytest.mark.django_db


def _client(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


def _reference(task) -> GoldTrajectory | None:
    return GoldTrajectory.objects.filter(task=task, is_reference=True).first()


def test_the_first_approval_makes_the_reference_a_later_one_does_not(annotator, other_annotator, reviewer):
    task = TaskFactory()
    first = GoldTrajectoryFactory(task=task, annotator=annotator, status="submitted")
    second = GoldTrajectoryFactory(task=task, annotator=other_annotator, status="submitted")

    review_gold(first.pk, reviewer=reviewer, version=first.version, decision="approved")
    review_gold(second.pk, reviewer=reviewer, version=second.version, decision="approved")

    assert _reference(task) == first
    first.refresh_from_db()
    review_gold(first.pk, reviewer=reviewer, version=first.version, decision="changes_requested",
                comment="step 3 belongs to another task")
    assert _reference(task) is None  # listed by evaluation until a reviewer chooses


def test_import_reference_makes_the_files_gold_the_reference(webarena_tasks, gold_xlsx, tmp_path):
    import_gold_file(gold_xlsx, annotator="paper", create_annotator=True)
    second = tmp_path / "second.xlsx"
    second.write_bytes(sheet_bytes(block(excerpt_rows(gold_xlsx), 27, 35)))  # task 82 again

    import_gold_file(second, annotator="other", create_annotator=True)
    assert _reference(GoldTrajectory.objects.get(source="second.xlsx").task).source != "second.xlsx"

    import_gold_file(second, annotator="other", create_annotator=True, reference=True)
    assert _reference(GoldTrajectory.objects.get(source="second.xlsx").task).source == "second.xlsx"
    # The file's first block of task 809 is the reference, not its second version.
    reference_809 = GoldTrajectory.objects.get(task__task_id="809", is_reference=True)
    assert reference_809.steps.get(index=6).text == "Type '03/01/2030' into the 'Select due date' textbox."
    with pytest.raises(ValueError, match="only approved gold can become the reference"):
        import_gold_file(second, annotator="other", create_annotator=True, reference=True,
                             status=GoldStatus.SUBMITTED)


def _sheet(gold_xlsx) -> SimpleUploadedFile:
    rows = excerpt_rows(gold_xlsx)
    content = sheet_bytes(block(rows, 9, 14) + relabel([rows[27]], task=1) + block(rows, 28, 35))
    return SimpleUploadedFile("anomalous.xlsx", content)


def test_the_import_api_answers_the_report_with_its_anomalies(webarena_tasks, gold_xlsx, reviewer, annotator):
    refused = _client(reviewer).post("/api/gold/import/", {"file": _sheet(gold_xlsx), "strict": "true"},
                                     format="multipart")
    assert refused.status_code == 400
    assert refused.data["detail"].startswith("anomalous.xlsx: 1 numbering anomaly (refused by --strict)")

    answer = _client(reviewer).post("/api/gold/import/", {"file": _sheet(gold_xlsx), "status": "submitted"},
                                    format="multipart")

    assert answer.status_code == 201, answer.data
    assert (answer.data["gold_trajectories"], answer.data["steps"], answer.data["annotator"]) == (2, 15, "rita")
    [anomaly] = answer.data["anomalies"]
    assert (anomaly["task_id"], anomaly["rows"], anomaly["kind"]) == ("82", [8], "first_step_of_next_task")
    assert _client(annotator).post("/api/gold/import/", {"file": _sheet(gold_xlsx)},
                                   format="multipart").status_code == 403


def test_the_reference_and_quality_api(webarena_tasks, gold_xlsx, reviewer, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        import_gold_file(gold_xlsx, annotator="paper", create_annotator=True)
    client = _client(reviewer)
    second_809 = GoldTrajectory.objects.filter(task__task_id="809").order_by("-pk").first()

    answer = client.post(f"/api/gold/{second_809.pk}/reference/")

    assert answer.status_code == 200 and answer.data["is_reference"] is True
    quality = client.get("/api/gold/quality/", {"benchmark": "webarena"}).data
    assert quality["job"]["status"] == "done"
    assert {(flag["task_id"], flag["kind"]) for flag in quality["flags"]} == {("1", "duplicate"), ("2", "duplicate")}
    flag_id = quality["flags"][0]["id"]
    assert client.post(f"/api/gold/flags/{flag_id}/dismiss/", {"reason": ""}, format="json").status_code == 400
    dismissed = client.post(f"/api/gold/flags/{flag_id}/dismiss/", {"reason": "two tasks, one path"}, format="json")
    assert (dismissed.status_code, dismissed.data["dismissed_by"]) == (200, "rita")
    with django_capture_on_commit_callbacks(execute=True):
        started = client.post("/api/gold/quality/", {"benchmark": "webarena"}, format="json")
    assert started.status_code == 202
    assert client.get(f"/api/gold/checks/{started.data['id']}/").data["status"] == "done"
    assert len(client.get("/api/gold/quality/").data["flags"]) == 1
    assert GoldFlag.objects.get(pk=flag_id).dismiss_reason == "two tasks, one path"
    assert GoldCheckJob.objects.filter(kind="quality").count() == 2
