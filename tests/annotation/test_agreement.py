from dataclasses import replace

import pytest
from django.urls import reverse

from annotation.agreement import GoldSide, TaskAgreement, by_site, most_disagreeing, pair_agreement
from annotation.selectors import agreement_report
from annotation.models import GoldCheckJob, GoldTrajectory
from judges.models import JudgeConfig
from tests.factories import GoldStepFactory, GoldTrajectoryFactory, TaskFactory

A = GoldSide(1, "alice", 3)
B = GoldSide(2, "bob", 2)


def test_pair_agreement_matches_greedily_like_step_success():
    # alice's step 1 and 3 both resemble bob's step 1; it can be matched once only.
    scores = [[0.9, 0.1], [0.2, 0.75], [0.95, 0.0]]

    pair = pair_agreement(A, B, scores, tau=0.7)

    assert (pair.matched, pair.agreement, pair.first_coverage, pair.second_coverage) == (2, 0.8, 2 / 3, 1.0)
    assert pair.matched_steps == ((1, 1, 0.9), (2, 2, 0.75))
    assert pair.length_difference == 1
    assert pair_agreement(A, B, scores, tau=0.8).matched == 1


def test_pair_agreement_edge_cases():
    empty = GoldSide(3, "carol", 0, cannot_complete=True)
    assert pair_agreement(empty, GoldSide(4, "dan", 0, cannot_complete=True), [], tau=0.7).agreement == 1.0
    one_sided = pair_agreement(empty, B, [], tau=0.7)
    assert (one_sided.agreement, one_sided.first_coverage, one_sided.second_coverage) == (0.0, None, 0.0)
    failed = pair_agreement(A, B, [[None, None]] * 3, tau=0.7, error="timeout")
    assert (failed.agreement, failed.error) == (None, "timeout")


def _task(task_id: str, site: str, *agreements: float) -> TaskAgreement:
    pair = pair_agreement(A, B, [[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]], tau=0.7)
    pairs = tuple(replace(pair, agreement=value) for value in agreements)
    return TaskAgreement(int(task_id), "webarena", task_id, "intent", site, pairs)


def test_groups_and_the_most_disagreeing_tasks():
    tasks = [_task("1", "gitlab", 1.0), _task("2", "gitlab", 0.5, 0.3), _task("3", "map", 0.2)]

    sites = {group.name: group for group in by_site(tasks)}

    assert sites["gitlab"].agreement == pytest.approx((1.0 + 0.4) / 2)
    assert (sites["map"].tasks, sites["map"].agreement, sites["map"].length_difference) == (1, 0.2, 1)
    assert [task.task_id for task in most_disagreeing(tasks, limit=2)] == ["3", "2"]


@pytest.fixture
def two_golds_per_task(db, annotator, other_annotator):
    task = TaskFactory(task_id="1", number=1, sites=["shopping_admin"])
    for annotator_, texts in ((annotator, ["Click on the 'REPORTS' link", "Scroll down", "Click 'Go'"]),
                              (other_annotator, ["click on the 'reports' link.", "Scroll down"])):
        gold = GoldTrajectoryFactory(task=task, annotator=annotator_, status="submitted")
        for index, text in enumerate(texts, start=1):
            GoldStepFactory(gold=gold, index=index, text=text)
    lonely = GoldTrajectoryFactory(task=TaskFactory(task_id="2", number=2), status="approved")
    GoldStepFactory(gold=lonely)
    GoldTrajectoryFactory(task=lonely.task, status="draft")  # drafts are not compared
    return task


def test_agreement_report_uses_the_chosen_judge(two_golds_per_task):
    report = agreement_report(judge_config=JudgeConfig(name="exact", backend="exact"), tau=0.7)

    assert report.judge == "exact"
    [task] = report.tasks
    [pair] = task.pairs
    assert (task.task_id, task.site, task.gold_count) == ("1", "shopping_admin", 2)
    assert (pair.first.annotator, pair.second.annotator, pair.matched, pair.agreement) == ("alice", "bob", 2, 0.8)
    assert (report.overall.tasks, report.overall.agreement, report.sites[0].name) == (1, 0.8, "shopping_admin")


def test_agreement_page(client, reviewer, two_golds_per_task, django_capture_on_commit_callbacks):
    client.force_login(reviewer)

    JudgeConfig.objects.create(name="exact", backend="exact")
    before = client.get(reverse("annotation:agreement"), {"judge": "exact"}).content.decode()
    assert "No agreement report for these settings yet" in before

    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(reverse("annotation:agreement"), {"judge": "exact", "tau": "0.7"})

    assert response.status_code == 302
    html = client.get(response.url).content.decode()
    assert "judge <strong>exact</strong>" in html
    assert GoldCheckJob.objects.get(kind="agreement").status == "done"
    golds = {gold.annotator.username: gold.pk for gold in GoldTrajectory.objects.filter(task=two_golds_per_task)}
    assert f"alice, web editor (#{golds['alice']})</a> vs <a" in html and ">0.80<" in html
    unknown = client.get(reverse("annotation:agreement"), {"judge": "nope"})
    assert "No judge named" in unknown.content.decode()


def test_agreement_page_is_for_reviewers(client, annotator):
    client.force_login(annotator)
    assert client.get(reverse("annotation:agreement")).status_code == 403


def test_disagreeing_pairs_are_flagged_and_a_dismissal_survives_recomputing(
        client, reviewer, annotator, other_annotator, django_capture_on_commit_callbacks):
    from annotation.models import GoldFlag

    task = TaskFactory(task_id="3", number=3)
    for annotator_, texts in ((annotator, ["Click on the 'REPORTS' link", "Type '2022' into 'Year'"]),
                              (other_annotator, ["Scroll down", "Click 'Go'", "Press Enter"])):
        gold = GoldTrajectoryFactory(task=task, annotator=annotator_, status="submitted", source="gold.xlsx")
        for index, text in enumerate(texts, start=1):
            GoldStepFactory(gold=gold, index=index, text=text)
    JudgeConfig.objects.create(name="exact", backend="exact")
    client.force_login(reviewer)
    settings_ = {"judge": "exact", "tau": "0.7"}
    with django_capture_on_commit_callbacks(execute=True):
        client.post(reverse("annotation:agreement"), settings_)
    flag = GoldFlag.objects.get(kind="disagreement")
    page = client.get(reverse("annotation:agreement"), settings_).content.decode()
    assert "agreement 0.00 with gold" in page and "alice, gold.xlsx block 1" in page

    client.post(reverse("annotation:dismiss-flag", args=[flag.pk]), {"reason": "two valid paths"})
    with django_capture_on_commit_callbacks(execute=True):
        client.post(reverse("annotation:agreement"), settings_)

    flag.refresh_from_db()
    assert (flag.dismiss_reason, flag.active) == ("two valid paths", True)
    page = client.get(reverse("annotation:agreement"), settings_).content.decode()
    assert f'id="flag-{flag.pk}"' not in page and "two valid paths" in page
