"""Who gold is imported under: an existing annotator, recorded with who imported it, when and from
which file; the web page creates no account and grants no role; nobody approves their own gold."""

import pytest
from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.urls import reverse
from rest_framework.test import APIClient

from annotation.content import GoldContent
from annotation.errors import GoldPermissionDenied
from annotation.gold_records import GoldStepRecord
from annotation.models import GoldStatus, GoldTrajectory
from accounts.roles import ANNOTATOR
from annotation.services.gold_editing import create_gold, save_gold
from annotation.services.gold_import import import_gold_file
from tests.factories import GoldStepFactory, GoldTrajectoryFactory, TaskFactory, UserFactory

pytestmark = pytest.mark.django_db

SHEET = b"Task No.,Step No.,Text\n1,1,Click on the 'Orders' link\n1,2,Scroll down\n"


@pytest.fixture
def task(db):
    return TaskFactory(task_id="1", number=1)


def _upload(client, **fields):
    return client.post(reverse("annotation:import"),
                       {"file": SimpleUploadedFile("orders.csv", SHEET), "status": "submitted", **fields})


def test_the_page_creates_no_account_and_grants_no_role(client, reviewer, task):
    outsider = UserFactory(username="rob")  # an account without the annotator role
    client.force_login(reviewer)

    unknown = _upload(client, annotator="new<script>")
    no_role = _upload(client, annotator="rob")

    assert "Not imported: no account named &#x27;new&lt;script&gt;&#x27;" in unknown.content.decode()
    assert "Not imported: &#x27;rob&#x27; does not hold the annotator role" in no_role.content.decode()
    assert not get_user_model().objects.filter(username="new<script>").exists()
    assert not outsider.groups.exists()
    assert GoldTrajectory.objects.count() == 0


def test_a_reviewer_imports_on_behalf_of_an_existing_annotator(client, reviewer, annotator, task):
    client.force_login(reviewer)

    page = _upload(client, annotator="alice", status="submitted")

    html = " ".join(page.content.decode().split())
    assert "As <strong>alice</strong>, imported by rita on behalf of alice" in html
    gold = GoldTrajectory.objects.get()
    assert (gold.annotator, gold.status, gold.source, gold.imported_by) == (annotator, "submitted", "orders.csv",
                                                                           reviewer)
    assert gold.imported_at is not None
    client.force_login(annotator)
    editor = " ".join(client.get(reverse("annotation:gold", args=[gold.pk])).content.decode().split())
    assert "imported from orders.csv by rita on behalf of alice on" in editor
    api = client.get(f"/api/gold/{gold.pk}/").json()
    assert (api["imported_by"], api["source"]) == ("rita", "orders.csv") and api["imported_at"]


def test_a_reviewer_cannot_approve_their_gold_by_importing_it_as_someone_elses(client, reviewer, annotator, task):
    """Approved with a reference on import, under another name, would be the importer's own approval."""
    api = APIClient()
    api.force_authenticate(reviewer)
    refused = api.post("/api/gold/import/", {"file": SimpleUploadedFile("orders.csv", SHEET), "annotator": "alice",
                                             "status": "approved", "reference": "true"}, format="multipart")
    assert refused.status_code == 403 and "only an admin approves gold on import" in refused.json()["detail"]
    assert not GoldTrajectory.objects.exists()
    client.force_login(reviewer)
    assert "only an admin approves gold on import" in _upload(client, annotator="alice", status="approved")\
        .content.decode()
    # By default it starts as submitted, and the importer may not review it: another reviewer does.
    imported = api.post("/api/gold/import/", {"file": SimpleUploadedFile("orders.csv", SHEET), "annotator": "alice"},
                        format="multipart")
    assert imported.status_code == 201, imported.content
    gold = GoldTrajectory.objects.get()
    assert gold.status == "submitted" and not gold.is_reference
    review = {"version": gold.version, "decision": "approved"}
    assert api.post(f"/api/gold/{gold.pk}/review/", review, format="json").status_code == 403
    second = UserFactory(username="rhea")
    second.groups.add(*reviewer.groups.all())
    api.force_authenticate(second)
    assert api.post(f"/api/gold/{gold.pk}/review/", review, format="json").status_code == 200


def test_an_admin_approves_on_import_recorded_as_their_review(admin_user, annotator, task, tmp_path):
    path = tmp_path / "orders.csv"
    path.write_bytes(SHEET)
    import_gold_file(path, annotator="alice", imported_by=admin_user, status=GoldStatus.APPROVED, reference=True)
    gold = GoldTrajectory.objects.get()
    assert gold.status == "approved" and gold.is_reference
    review = gold.reviews.get()
    assert (review.reviewer, review.decision, review.comment) == (admin_user, "approved",
                                                                  "Approved on import of orders.csv")


def test_a_reviewer_imports_under_their_own_name_without_approving_it(client, reviewer, task):
    client.force_login(reviewer)

    refused = _upload(client, status="approved")
    assert "Not imported: only an admin approves gold on import" in refused.content.decode()
    assert GoldTrajectory.objects.count() == 0

    _upload(client, status="submitted")
    gold = GoldTrajectory.objects.get()
    assert (gold.annotator, gold.imported_by, gold.status) == (reviewer, reviewer, "submitted")


def test_the_service_refuses_self_approval_and_imports_by_annotators(reviewer, annotator, admin_user, task, tmp_path):
    path = tmp_path / "orders.csv"
    path.write_bytes(SHEET)
    with pytest.raises(GoldPermissionDenied, match="only an admin approves gold on import"):
        import_gold_file(path, annotator="rita", imported_by=reviewer, status=GoldStatus.APPROVED)
    with pytest.raises(GoldPermissionDenied, match="importing gold needs the reviewer role"):
        import_gold_file(path, annotator="alice", imported_by=annotator, status=GoldStatus.SUBMITTED)
    assert GoldTrajectory.objects.count() == 0
    # Admins may approve their own gold, as on the review page.
    report = import_gold_file(path, annotator="adam", imported_by=admin_user, status=GoldStatus.APPROVED)
    assert report.imported_by == "adam" and GoldTrajectory.objects.get().status == "approved"


def test_the_command_imports_under_an_existing_annotator_unless_asked_to_create_one(annotator, task, tmp_path):
    path = tmp_path / "orders.csv"
    path.write_bytes(SHEET)
    with pytest.raises(CommandError):
        call_command("import_gold", str(path), "--annotator", "paper")
    assert not get_user_model().objects.filter(username="paper").exists()

    call_command("import_gold", str(path), "--annotator", "alice")
    call_command("import_gold", str(path), "--annotator", "paper", "--create-annotator")

    paper = get_user_model().objects.get(username="paper")
    assert paper.groups.filter(name=ANNOTATOR).exists() and not paper.has_usable_password()
    assert GoldTrajectory.objects.filter(imported_by__isnull=True, imported_at__isnull=False).count() == 2
    with pytest.raises(CommandError):
        call_command("import_gold", str(path), "--annotator", "bad name!", "--create-annotator")


def test_a_reviewer_does_not_change_their_own_approved_gold(reviewer, other_annotator):
    """Editing one's own gold after someone approved it would approve the change oneself."""
    other_reviewer = UserFactory(username="rhea")
    other_reviewer.groups.add(*reviewer.groups.all())
    gold = GoldTrajectoryFactory(annotator=reviewer, status="approved", version=3)
    GoldStepFactory(gold=gold, index=1, text="Scroll down")
    content = GoldContent(steps=[GoldStepRecord(text="Click on 'Sign in'")])
    with pytest.raises(GoldPermissionDenied):
        save_gold(gold.pk, user=reviewer, version=3, content=content)
    assert save_gold(gold.pk, user=other_reviewer, version=3, content=content).version == 4


def test_approving_ones_own_gold_is_refused_on_the_review_page_and_the_api(client, reviewer, task):
    own = create_gold(task, user=reviewer, content=GoldContent(steps=[GoldStepRecord(text="Scroll down")]),
                      submit=True)
    api = APIClient()
    api.force_authenticate(reviewer)
    answer = api.post(f"/api/gold/{own.pk}/review/", {"version": own.version, "decision": "approved"}, format="json")
    assert answer.status_code == 403
    client.force_login(reviewer)
    client.post(reverse("annotation:review", args=[own.pk]), {"version": own.version, "decision": "approved"})
    own.refresh_from_db()
    assert own.status == "submitted" and not own.reviews.exists()
