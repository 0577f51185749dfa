import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from annotation.models import Assignment, GoldStatus, GoldTrajectory
from annotation.selectors import QueueFilters, next_task, task_queue
from tests.factories import GoldStepFactory, GoldTrajectoryFactory, TaskFactory, UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def tasks():
    return [
        TaskFactory(task_id="1", number=1, sites=["shopping_admin"], intent="Top product in 2022"),
        TaskFactory(task_id="2", number=2, sites=["shopping"], intent="Status of my latest order"),
        TaskFactory(task_id="3", number=3, sites=["shopping_admin", "map"], intent="Drive to the airport"),
        TaskFactory(task_id="4", number=4, sites=["gitlab"], benchmark="webarena-lite", intent="Open an issue"),
    ]


def _ids(queryset) -> list[str]:
    return [task.task_id for task in queryset]


def test_queue_filters(annotator, tasks):
    GoldTrajectoryFactory(task=tasks[0], annotator=annotator, status=GoldStatus.DRAFT)
    GoldTrajectoryFactory(task=tasks[1], annotator=annotator, status=GoldStatus.SUBMITTED)
    GoldTrajectoryFactory(task=tasks[2], status=GoldStatus.APPROVED)  # someone else's
    Assignment.objects.create(task=tasks[2], annotator=annotator)

    def queue(**filters):
        return _ids(task_queue(annotator, QueueFilters(**filters)))

    assert queue() == ["1", "2", "3", "4"]
    assert queue(site="shopping") == ["2"]
    assert queue(site="shopping_admin") == ["1", "3"]
    assert queue(benchmark="webarena-lite") == ["4"]
    assert queue(status="none") == ["3", "4"]
    assert queue(status="draft") == ["1"]
    assert queue(assigned=True) == ["3"]
    assert queue(search="3") == ["3"]
    assert queue(search="ORDER") == ["2"]
    row = task_queue(annotator, QueueFilters(site="map")).get()
    assert (row.my_status, row.done_gold, row.assigned) == (None, 1, True)


def test_next_task_prefers_assigned_then_follows_the_queue(annotator, tasks):
    GoldTrajectoryFactory(task=tasks[1], annotator=annotator, status=GoldStatus.APPROVED)
    everything = QueueFilters()

    assert next_task(annotator, everything).task_id == "1"
    assert next_task(annotator, everything, after=tasks[0]).task_id == "3"  # 2 is done
    assert next_task(annotator, everything, after=tasks[3]).task_id == "1"  # wraps around
    Assignment.objects.create(task=tasks[3], annotator=annotator)
    assert next_task(annotator, everything, after=tasks[0]).task_id == "4"
    assert next_task(annotator, QueueFilters(site="shopping")) is None


def test_queue_page_and_next_button(client, annotator, tasks):
    client.force_login(annotator)

    page = client.get(reverse("annotation:queue"), {"site": "shopping_admin"})
    assert page.status_code == 200
    assert b"webarena/1" in page.content and b"webarena/2" not in page.content
    # "Next task" follows the filters the queue was last shown with.
    response = client.get(reverse("annotation:next"), {"after": tasks[0].pk})
    assert response.url == reverse("annotation:task", args=[tasks[2].pk])


def test_next_with_nothing_left_goes_back_to_the_queue(client, annotator):
    client.force_login(annotator)
    response = client.get(reverse("annotation:next"), follow=True)
    assert b"Nothing left to annotate" in response.content


def test_next_with_nothing_left_under_a_search_shows_the_filtered_queue(client, annotator, tasks):
    GoldTrajectoryFactory(task=tasks[2], annotator=annotator, status=GoldStatus.SUBMITTED)
    client.force_login(annotator)
    client.get(reverse("annotation:queue"), {"q": "airport"})
    response = client.get(reverse("annotation:next"), {"after": tasks[2].pk})
    assert response.url == reverse("annotation:queue") + "?q=airport"
    page = client.get(response.url).content.decode()
    assert "Nothing left to annotate under these filters." in page
    assert "1 task." in page and "webarena/1<" not in page


def test_next_skips_tasks_with_approved_gold_unless_assigned_or_started(annotator, other_annotator, tasks):
    GoldTrajectoryFactory(task=tasks[0], annotator=other_annotator, status=GoldStatus.APPROVED)
    assert next_task(annotator, QueueFilters()).task_id == "2"
    GoldTrajectoryFactory(task=tasks[0], annotator=annotator, status=GoldStatus.DRAFT)
    assert next_task(annotator, QueueFilters()).task_id == "1"  # their own draft is still theirs to finish
    GoldTrajectory.objects.filter(task=tasks[0], annotator=annotator).delete()
    Assignment.objects.create(task=tasks[0], annotator=annotator)
    assert next_task(annotator, QueueFilters()).task_id == "1"  # asked for a second gold


def test_next_skips_tasks_without_text_unless_assigned_and_the_queue_says_they_have_none(client, annotator, tasks):
    tasks[0].intent = ""
    tasks[0].save()
    assert next_task(annotator, QueueFilters()).task_id == "2"
    assert next_task(annotator, QueueFilters(), after=tasks[3]).task_id == "2"  # wrapping around skips it too
    client.force_login(annotator)
    queue = client.get(reverse("annotation:queue")).content.decode()
    assert queue.count("no task text: the files name this task without saying what it asks") == 1
    Assignment.objects.create(task=tasks[0], annotator=annotator)
    assert next_task(annotator, QueueFilters()).task_id == "1"  # someone asked for it


def test_pages_need_the_right_role(client, tasks):
    assert client.get(reverse("annotation:queue")).url.startswith(reverse("login"))
    client.force_login(UserFactory())
    assert client.get(reverse("annotation:queue")).status_code == 403
    assert client.get(reverse("annotation:review-queue")).status_code == 403


def test_the_editor_renders_task_and_gold_escaped(client, annotator):
    task = TaskFactory(intent="Find <script>alert(1)</script> orders",
                       eval_config={"reference_answers": {"must_include": ["<b>bold</b>"]}},
                       requirements=["<b>bold</b>"], requirements_source="must_include")
    gold = GoldTrajectoryFactory(task=task, annotator=annotator)
    GoldStepFactory(gold=gold, index=1, text="Type '</script><img src=x onerror=alert(1)>' into the box")
    client.force_login(annotator)

    page = client.get(reverse("annotation:task", args=[task.pk]))

    html = page.content.decode()
    assert "<script>alert(1)</script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "<b>bold</b>" not in html
    assert "</script><img" not in html
    data = json.loads(html.split('id="gold-editor-data" type="application/json">')[1].split("</script>")[0])
    assert data["gold"]["steps"][0]["text"] == "Type '</script><img src=x onerror=alert(1)>' into the box"
    assert data["requirements"] == ["<b>bold</b>"]
    assert data["urls"]["next"] == f"/annotation/next/?after={task.pk}"


def test_the_editor_shows_others_gold_only_after_submitting(client, annotator, other_annotator):
    task = TaskFactory()
    mine = GoldTrajectoryFactory(task=task, annotator=annotator, status=GoldStatus.DRAFT)
    theirs = GoldTrajectoryFactory(task=task, annotator=other_annotator, status=GoldStatus.SUBMITTED)
    client.force_login(annotator)

    assert client.get(reverse("annotation:gold", args=[theirs.pk])).status_code == 404
    assert b"Other gold for this task" not in client.get(reverse("annotation:task", args=[task.pk])).content

    mine.status = GoldStatus.SUBMITTED
    mine.save()
    assert b"Other gold for this task" in client.get(reverse("annotation:task", args=[task.pk])).content
    assert client.get(reverse("annotation:gold", args=[theirs.pk])).status_code == 200


def test_review_form(client, annotator, reviewer):
    gold = GoldTrajectoryFactory(annotator=annotator, status=GoldStatus.SUBMITTED, version=3)
    GoldStepFactory(gold=gold)
    client.force_login(reviewer)

    queue = client.get(reverse("annotation:review-queue"))
    assert reverse("annotation:gold", args=[gold.pk]).encode() in queue.content
    editor = client.get(reverse("annotation:gold", args=[gold.pk]))
    assert b'id="approve-button"' in editor.content

    refused = client.post(reverse("annotation:review", args=[gold.pk]),
                          {"version": 3, "decision": "changes_requested"}, follow=True)
    assert "Review not recorded: asking for changes needs a comment that says what should change." in \
        refused.content.decode()
    stale = client.post(reverse("annotation:review", args=[gold.pk]), {"version": 2, "decision": "approved"},
                        follow=True)
    assert b"saved by someone else" in stale.content
    done = client.post(reverse("annotation:review", args=[gold.pk]), {"version": 3, "decision": "approved"})
    assert done.url == reverse("annotation:review-queue")
    gold.refresh_from_db()
    assert gold.status == GoldStatus.APPROVED


@pytest.mark.parametrize(("fmt", "content_type"), [("xlsx", "spreadsheetml"), ("csv", "text/csv"),
                                                   ("json", "application/json")])
def test_export_download_holds_only_visible_gold(client, annotator, other_annotator, fmt, content_type):
    GoldStepFactory(gold=GoldTrajectoryFactory(annotator=annotator), text="mine")
    GoldStepFactory(gold=GoldTrajectoryFactory(annotator=other_annotator), text="hidden")
    client.force_login(annotator)

    response = client.get(reverse("annotation:export"), {"format": fmt})

    assert content_type in response["Content-Type"]
    assert response["Content-Disposition"] == f'attachment; filename="gold.{fmt}"'
    if fmt != "xlsx":
        assert "mine" in response.content.decode() and "hidden" not in response.content.decode()
    assert client.get(reverse("annotation:export"), {"format": "pdf"}).status_code == 404


def test_gold_import_page(client, reviewer, annotator, gold_xlsx):
    for number in (1, 2, 3):
        TaskFactory(task_id=str(number), number=number)
    client.force_login(reviewer)
    assert b"Import gold" in client.get(reverse("annotation:queue")).content

    with gold_xlsx.open("rb") as upload:
        page = client.post(reverse("annotation:import"),
                           {"file": upload, "annotator": "alice", "status": "submitted"})

    html = " ".join(page.content.decode().split())
    assert "3 tasks, 3 gold trajectories, 18 steps (3 created, 0 updated, 0 unchanged)" in html
    assert "Tasks not found in benchmark webarena: 809, 82, 96, 529" in html
    assert "<td>row 2</td><td>task 809 does not exist in benchmark &#x27;webarena&#x27;</td>" in html
    assert GoldTrajectory.objects.filter(annotator=annotator, imported_by=reviewer, status="submitted").count() == 3

    bad = SimpleUploadedFile("gold.csv", b"Task,Step\n")
    assert "Not imported: gold.csv: line 1: header must have columns" in client.post(
        reverse("annotation:import"), {"file": bad}).content.decode()
    client.force_login(annotator)
    assert client.get(reverse("annotation:import")).status_code == 403


def test_the_gold_schema_is_published(client):
    response = client.get(reverse("annotation:gold-schema"))
    assert response["Content-Type"] == "application/schema+json"
    assert json.loads(b"".join(response.streaming_content))["$id"] == "gold/v1"
