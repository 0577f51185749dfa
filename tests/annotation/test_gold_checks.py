"""The gold quality checks as a job after every import, and on the page (the checks themselves:
tests/annotation/quality/)."""

import pytest
from django.urls import reverse

from annotation import quality
from annotation.formats import read_gold_bytes
from annotation.models import GoldCheckJob, GoldFlag, GoldStatus, GoldTrajectory
from annotation.quality.fit import gold_gist
from annotation.services.gold_checks import run_gold_check, start_gold_check
from annotation.services.gold_import import import_gold
from tests.annotation.sheets import excerpt_rows, misplaced_gold_sheet, sheet_bytes
from tests.factories import GoldStepFactory, GoldTrajectoryFactory, TaskFactory


@pytest.fixture
def misplaced_import(db, webarena_tasks, gold_xlsx, django_capture_on_commit_callbacks):
    parsed = read_gold_bytes(sheet_bytes(misplaced_gold_sheet(excerpt_rows(gold_xlsx))), "xlsx", name="gold.xlsx")
    with django_capture_on_commit_callbacks(execute=True):
        import_gold(parsed, file_name="gold.xlsx", annotator="paper", create_annotator=True)
    return {gold.task.task_id: gold for gold in GoldTrajectory.objects.select_related("task").order_by("-pk")}


def _open(kind: str) -> set[str]:
    flags = GoldFlag.objects.filter(kind=kind, active=True, dismissed_at__isnull=True).select_related("gold__task")
    return {flag.gold.task.task_id for flag in flags}


def test_an_import_runs_the_checks_in_the_background(misplaced_import):
    job = GoldCheckJob.objects.get(kind="quality")

    assert (job.status, job.benchmark, job.done, job.total) == ("done", "webarena", 9, 9)
    assert (job.result["flags"]["other_task"], job.result["flags"]["sibling_values"]) == (1, 1)
    assert _open("other_task") == {"811"} and _open("sibling_values") == {"83"}
    assert GoldFlag.objects.get(kind="other_task").confidence > 0.9
    assert _open("duplicate") == {"1", "2", "82", "83"}


def test_a_later_job_in_a_fresh_process_reads_the_vectors_it_needs(misplaced_import, monkeypatch):
    from annotation.models import SentenceVector
    from trajectories.models import Task

    gists = {gold_gist(tuple(gold.steps.values_list("text", flat=True)))
             for gold in GoldTrajectory.objects.all()}
    assert SentenceVector.objects.count() == len(set(Task.objects.values_list("intent", flat=True)) | gists)
    monkeypatch.setattr("judges.embeddings.sentence_encoder", lambda: 1 / 0)  # no model to load

    job = run_gold_check(start_gold_check(GoldCheckJob.Kind.QUALITY, benchmark="webarena").pk)

    assert job.status == "done" and _open("other_task") == {"811"}


def test_a_dismissed_flag_stays_dismissed_and_a_fixed_one_goes_inactive(misplaced_import, reviewer):
    from annotation.services.gold_checks import dismiss_flag

    flag = GoldFlag.objects.get(kind="duplicate", gold__task__task_id="1")
    dismiss_flag(flag.pk, user=reviewer, reason="tasks 1 and 2 really share their steps")
    GoldStepFactory(gold=misplaced_import["83"], index=10, text="Click the 'Go' button")  # no longer a copy

    run_gold_check(start_gold_check(GoldCheckJob.Kind.QUALITY, benchmark="webarena").pk)

    flag.refresh_from_db()
    assert (flag.dismiss_reason, flag.active) == ("tasks 1 and 2 really share their steps", True)
    assert _open("duplicate") == {"2"}
    assert not GoldFlag.objects.get(kind="duplicate", gold__task__task_id="83").active


def test_the_quality_page_lists_flags_with_their_actions(misplaced_import, reviewer, client,
                                                         django_capture_on_commit_callbacks):
    client.force_login(reviewer)
    html = client.get(reverse("annotation:quality"), {"benchmark": "webarena"}).content.decode()

    assert "Belongs to another task (1)" in html and "Duplicate of another task&#x27;s gold (4)" in html
    assert "Types a template sibling&#x27;s values (1)" in html
    moved = misplaced_import["811"]
    assert f'href="/annotation/gold/{moved.pk}/"' in html and "fits task 529 better" in html
    flag = GoldFlag.objects.get(kind="other_task", gold=moved)

    refused = client.post(reverse("annotation:dismiss-flag", args=[flag.pk]), {"reason": " "}, follow=True)
    assert "say why this flag is not a problem" in refused.content.decode()
    client.post(reverse("annotation:dismiss-flag", args=[flag.pk]), {"reason": "checked by hand"})
    client.post(reverse("annotation:review", args=[moved.pk]),
                {"decision": "changes_requested", "comment": "belongs to task 529", "version": moved.version,
                 "next": reverse("annotation:quality")})
    with django_capture_on_commit_callbacks(execute=True):
        assert client.post(reverse("annotation:quality"), {"benchmark": "webarena"}).status_code == 302

    moved.refresh_from_db()
    assert moved.status == GoldStatus.CHANGES_REQUESTED and not moved.is_reference
    flag.refresh_from_db()
    assert flag.dismiss_reason == "checked by hand"
    assert GoldCheckJob.objects.filter(kind="quality").count() == 2


def test_the_quality_page_is_for_reviewers(client, annotator):
    client.force_login(annotator)
    assert client.get(reverse("annotation:quality")).status_code == 403


def test_a_failing_job_says_why(db, monkeypatch):
    job = GoldCheckJob.objects.create(kind="quality", benchmark="webarena")
    monkeypatch.setattr(quality, "check_gold", lambda *args, **kwargs: 1 / 0)

    run_gold_check(job.pk)

    job.refresh_from_db()
    assert (job.status, job.error) == ("failed", "ZeroDivisionError: division by zero")


def test_set_as_reference_from_the_review_page(db, reviewer, client):
    task = TaskFactory()
    first = GoldTrajectoryFactory(task=task, status="approved")
    second = GoldTrajectoryFactory(task=task, status="approved")
    assert GoldTrajectory.objects.get(is_reference=True) == first
    client.force_login(reviewer)

    assert "Set as reference gold" in client.get(reverse("annotation:gold", args=[second.pk])).content.decode()
    client.post(reverse("annotation:set-reference", args=[second.pk]))

    assert GoldTrajectory.objects.get(is_reference=True) == second
    assert "reference gold of this task" in client.get(reverse("annotation:gold", args=[second.pk])).content.decode()


def test_check_jobs_are_background_jobs_the_sweeper_sends_again(db):
    from infrastructure import jobs

    assert GoldCheckJob in jobs.job_models()
    job = GoldCheckJob.objects.create(kind="quality", benchmark="webarena", status="running")

    jobs.dispatch_now(job)  # what the sweeper does with a job whose message was lost

    job.refresh_from_db()
    assert job.status == "done"


def test_the_page_and_the_api_give_the_surest_flags_first(db, reviewer, client):
    from rest_framework.test import APIClient

    unsure, sure = TaskFactory(intent="Show me the <b>blue</b> kettle"), TaskFactory(intent="Show me the red teapot")
    flags = [GoldFlag.objects.create(gold=GoldTrajectoryFactory(task=task, status="submitted"), kind="poor_fit",
                                     message=f"fits its own task {task.task_id} poorly", confidence=confidence,
                                     related_task=sure)
             for task, confidence in ((unsure, 0.55), (sure, 0.97))]
    GoldStepFactory(gold=flags[0].gold, index=1, text="Click on the '<script>alert(1)</script>' link")
    client.force_login(reviewer)

    html = client.get(reverse("annotation:quality"), {"benchmark": "webarena"}).content.decode()

    assert html.index(f'id="flag-{flags[1].pk}"') < html.index(f'id="flag-{flags[0].pk}"')
    assert "97% sure" in html and "55% sure" in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html and "<script>alert(1)" not in html
    assert "Show me the &lt;b&gt;blue&lt;/b&gt; kettle" in html and "Closest task" in html
    api = APIClient()
    api.force_authenticate(reviewer)
    listed = api.get("/api/gold/quality/", {"benchmark": "webarena"}).data["flags"]
    assert [(flag["id"], flag["confidence"]) for flag in listed] == [(flags[1].pk, 0.97), (flags[0].pk, 0.55)]
