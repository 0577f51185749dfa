"""A task without text: its gold cannot be approved (nobody could check it), only sent back."""

import pytest
from django.test import Client
from rest_framework.test import APIClient

from annotation.content import GoldContent
from annotation.errors import TaskWithoutText
from annotation.gold_records import GoldStepRecord
from annotation.models import GoldStatus
from annotation.services.gold_editing import create_gold
from annotation.services.gold_review import review_gold
from tests.factories import TaskFactory

pytestmark = pytest.mark.django_db

NO_TEXT = "has no task text, so nobody can check this gold against what it asks"


def _submitted(annotator, intent: str, task_id: str = "AgentHistoryList"):
    task = TaskFactory(benchmark="browser-use", task_id=task_id, intent=intent)
    return create_gold(task, user=annotator, content=GoldContent(steps=[GoldStepRecord(text="Click Search")]),
                       submit=True)


@pytest.mark.parametrize("intent", ["", "   "])
def test_approving_gold_for_a_task_without_text_is_refused_sending_it_back_is_not(annotator, reviewer, intent):
    gold = _submitted(annotator, intent)
    with pytest.raises(TaskWithoutText, match=f"task AgentHistoryList {NO_TEXT}"):
        review_gold(gold.pk, reviewer=reviewer, version=1, decision="approved")
    gold.refresh_from_db()
    assert (gold.status, gold.version, gold.is_reference) == (GoldStatus.SUBMITTED, 1, False)
    review_gold(gold.pk, reviewer=reviewer, version=1, decision="changes_requested", comment="which task is this?")
    gold.refresh_from_db()
    assert gold.status == GoldStatus.CHANGES_REQUESTED


def test_the_api_refuses_with_its_own_code(annotator, reviewer):
    gold = _submitted(annotator, "")
    client = APIClient()
    client.force_authenticate(reviewer)
    response = client.post(f"/api/gold/{gold.pk}/review/", {"version": 1, "decision": "approved"}, format="json")
    assert response.status_code == 400
    assert response.json()["code"] == "no_task_text"
    assert NO_TEXT in response.json()["detail"]


def test_the_page_says_why_and_the_editor_says_no_task_text(annotator, reviewer):
    gold = _submitted(annotator, "")
    client = Client()
    client.force_login(reviewer)
    editor = client.get(f"/annotation/gold/{gold.pk}/").content.decode()
    assert 'id="approve-button" disabled' in editor
    assert "Not approved while the task has no task text" in editor
    readable = client.get(f"/annotation/gold/{_submitted(annotator, 'Open the orders', 'orders').pk}/").content.decode()
    assert 'id="approve-button">' in readable and "Not approved while" not in readable
    response = client.post(f"/annotation/gold/{gold.pk}/review/", {"version": 1, "decision": "approved"}, follow=True)
    text = response.content.decode()
    assert f"Review not recorded: task AgentHistoryList {NO_TEXT}" in text
    assert "no task text" in text
    gold.refresh_from_db()
    assert gold.status == GoldStatus.SUBMITTED
