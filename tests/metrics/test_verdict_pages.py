"""Every success shown names its source, and the three sources can disagree visibly."""

import html
import re

import pytest
from django.urls import reverse

from metrics.selectors.jobs_and_scores import trajectory_evaluation
from metrics.selectors.verdicts_per_task import one_run, trajectory_verdicts
from tests.factories import UserFactory
from tests.metrics.verdict_data import grader, three_voices
from trajectories.models import AgentRun, TaskResult, Verdict, VerdictKind, VerdictSource
from trajectories.selectors import task_grades, task_verdicts_by_source

pytestmark = pytest.mark.django_db


@pytest.fixture
def voices(django_capture_on_commit_callbacks):
    return three_voices(django_capture_on_commit_callbacks)


def text(response) -> str:
    assert response.status_code == 200
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", response.content.decode())))


def test_trajectory_page_names_every_source_and_their_disagreement(client, voices):
    client.force_login(voices["gina"])
    page = text(client.get(reverse("metrics:trajectory-detail", args=[voices["disputed"].pk])))
    assert "harness: FAIL (merged_log.txt)" in page
    assert "offline check: PASS (string_match)" in page
    assert "human graders: PASS (mean grade 1.00 of 2 graders)" in page
    assert "The sources disagree: harness vs offline check; harness vs human graders." in page
    # The evaluation box says which verdict its task success is, and shows the check beside it.
    assert "Task success (harness, else offline check) no the harness's verdict; the offline check says yes" in page
    assert "Offline check (string/url match) yes string_match" in page


def test_grades_are_blind_until_one_has_graded(client, voices):
    newcomer = grader("ivan")
    client.force_login(newcomer)
    url = reverse("metrics:trajectory-detail", args=[voices["disputed"].pk])
    page = text(client.get(url))
    assert "2 grades, hidden until you grade" in page and "answer is right" not in page
    assert "vs human graders" not in page  # the disagreement would give the consensus away
    response = client.post(reverse("trajectories:grade", args=[voices["disputed"].pk]), {"grade": "0.5", "note": "meh"})
    assert response.status_code == 302 and response.url.endswith("#grading")
    page = text(client.get(url))
    assert "answer is right" in page and "Your grade: partially correct" in page
    assert "mean grade 0.83 of 3 graders" in page


def test_only_annotators_and_reviewers_grade(client, voices):
    client.force_login(UserFactory(username="developer"))
    url = reverse("metrics:trajectory-detail", args=[voices["disputed"].pk])
    assert 'id="grade-form"' not in client.get(url).content.decode()
    assert client.post(reverse("trajectories:grade", args=[voices["disputed"].pk]), {"grade": "1"}).status_code == 403


def test_a_bad_grade_is_refused_with_a_message(client, voices):
    client.force_login(voices["gina"])
    response = client.post(reverse("trajectories:grade", args=[voices["agreed"].pk]), {"grade": "0.3"}, follow=True)
    assert "Grade not saved: grade '0.3' is not 1 (correct)" in text(response)


def test_run_list_names_each_success_rate_by_source(client, voices):
    client.force_login(voices["gina"])
    page = text(client.get(reverse("metrics:run-list")))
    assert "harness 0.000 (0 of 2) · offline check 0.500 (1 of 2) · human graders 0.500 (1 of 2)" in page


def test_run_page_counts_disagreements_and_links_to_them(client, voices):
    client.force_login(voices["gina"])
    url = reverse("metrics:run-detail", args=[voices["run"].pk])
    page = text(client.get(url))
    assert "1 task where harness and offline check disagree" in page
    assert "1 task where harness and human graders disagree" in page
    assert "0 where offline check and human graders disagree" in page
    listed = text(client.get(url + "?disagree=harness-check"))
    assert "1 trajectory where harness and offline check disagree" in listed
    assert f"webarena/{voices['disputed'].task.task_id}" in listed
    assert f"webarena/{voices['agreed'].task.task_id}" not in listed


def test_agreement_page(client, voices):
    client.force_login(voices["hugo"])
    page = text(client.get(reverse("metrics:verdict-agreement", args=[voices["run"].pk])))
    # Marks: task A (1, 1), task B (0, 0.5). Coincidences o(1,1)=2, o(0,.5)=o(.5,0)=1; n_0=1, n_.5=1, n_1=2;
    # d(0,.5)=1, d(.5,1)=2.25, d(0,1)=6.25; alpha = 1 - 3 * 2 / (2 * (1 + 4.5 + 12.5)) = 0.833.
    assert "Krippendorff's alpha (ordinal) 0.833" in page
    assert "gina · hugo 2 50.0 %" in page
    # Consensus: A success (1.0), B not (0.25). Harness: FAIL, FAIL -> one FN, one TN.
    assert "harness 2 0.500 — 0.000 0.000 0 · 0 · 1 · 1" in page
    assert "offline check 2 1.000 1.000 1.000 1.000 1 · 0 · 0 · 1" in page
    assert "shopping" in page and "gitlab" in page


def test_agreement_page_reads_named_sources_against_the_graders_too(client, voices):
    """A published judge says yes on task A and no on B: it agrees with the graders' consensus on both."""
    judge = VerdictSource.objects.create(kind=VerdictKind.LLM_JUDGE, name="WebJudge", model="o4-mini")
    mind = VerdictSource.objects.create(kind=VerdictKind.AGENT_SELF_REPORT, name="agent self-report")
    for trajectory, said in ((voices["disputed"], True), (voices["agreed"], False)):
        Verdict.objects.create(run=voices["run"], task=trajectory.task, trajectory=trajectory, source=judge,
                               success=said)
        Verdict.objects.create(run=voices["run"], task=trajectory.task, trajectory=trajectory, source=mind,
                               success=True)
    client.force_login(voices["hugo"])
    page = text(client.get(reverse("metrics:verdict-agreement", args=[voices["run"].pk])))
    assert "WebJudge (o4-mini) 2 1.000 1.000 1.000 1.000 1 · 0 · 0 · 1" in page
    # The self-report says yes on both: one true positive, one false positive, kappa 0.
    assert "agent self-report 2 0.500 0.500 1.000 0.000 1 · 1 · 0 · 0" in page


@pytest.fixture
def results_only(webarena_tasks, shared_data):
    from trajectories.services.outcomes_and_grades import import_outcomes
    path = shared_data / "more-benchmarks" / "leaderboard-per-task.excerpt.json"
    import_outcomes(path.name, path.read_bytes())
    return AgentRun.objects.get(name="jace")


def test_leaderboard_success_names_its_source_and_switches(client, voices):
    client.force_login(voices["gina"])
    url = reverse("metrics:leaderboard")
    page = text(client.get(url))
    assert "Success ↓ from harness, else offline check" in page
    row = text(client.get(url)).split("three-voices", 1)[1]
    # METRICS.md's success (the harness's FAIL twice) with the sources that differ beside it.
    assert row.lstrip().startswith("test-agent · test-model")
    assert "0.000 n=2 offline check 0.500 human graders 0.500" in row
    by_check = text(client.get(url + "?success_source=check"))
    assert "from offline check" in by_check and "0.500 n=2 harness 0.000" in by_check
    by_human = text(client.get(url + "?success_source=human&site=shopping"))
    assert "from human graders" in by_human and "1.000 n=1" in by_human


def test_leaderboard_export_says_which_success_it_holds(client, voices):
    client.force_login(voices["gina"])
    response = client.get(reverse("metrics:export", args=["leaderboard", "json"]) + "?success_source=check")
    import json
    [record] = json.loads(response.content)
    assert record["success_from"] == "check" and record["success"] == 0.5
    assert (record["success_harness"], record["success_check"], record["success_human"]) == (0.0, 0.5, 0.5)
    assert record["results_only"] is False


def test_results_only_run_on_the_leaderboard(client, voices, results_only):
    client.force_login(voices["gina"])
    page = text(client.get(reverse("metrics:leaderboard")))
    row = page.split("jace", 1)[1].split("three-voices", 1)[0] if page.index("jace") < page.index("three-voices") \
        else page.split("jace", 1)[1]
    assert "results only" in row and "0.560 n=25" in row and "not available" in row and "imported verdicts" in row
    assert page.index("jace") < page.index("three-voices")  # 0.560 above 0.000
    by_site = text(client.get(reverse("metrics:leaderboard") + "?site=shopping_admin"))
    assert "jace" in by_site


def test_results_only_run_on_a_subset_counts_the_subsets_tasks_only(client, voices, results_only):
    from trajectories.models import TaskResult, TaskSubset

    passed = list(TaskResult.objects.filter(run=results_only, success=True).values_list("task__task_id", flat=True))
    failed = list(TaskResult.objects.filter(run=results_only, success=False).values_list("task__task_id", flat=True))
    TaskSubset.objects.create(name="three-tasks", benchmark="webarena", task_ids=passed[:2] + failed[:1])
    client.force_login(voices["gina"])
    page = text(client.get(reverse("metrics:leaderboard") + "?subset=three-tasks"))
    row = page.split("jace", 1)[1]
    assert "results only" in row and "0.667 n=3" in row


def test_run_page_of_a_results_only_run(client, results_only):
    client.force_login(grader("rev", "reviewer"))  # a reviewer may evaluate any run, but not this one
    page = text(client.get(reverse("metrics:run-detail", args=[results_only.pk])))
    assert "harness 0.560 (14 of 25)" in page and "results only" in page
    assert "Tasks without a trajectory" in page and "webarena/24" in page
    assert "A results-only run" in page and 'action="/runs/' not in page


@pytest.fixture
def webarena_tasks(db, shared_data):
    from trajectories.services.tasks import import_task_file
    import_task_file(shared_data / "webarena" / "test.raw.json")


def test_results_only_run_in_a_paired_comparison_of_success(client, voices, results_only):
    from trajectories.models import Task, Trajectory
    # The disputed trajectory's task becomes one of jace's tasks, so the two runs share one task.
    Trajectory.objects.filter(pk=voices["disputed"].pk).update(task=Task.objects.get(benchmark="webarena", task_id="0"))
    client.force_login(voices["gina"])
    page = text(client.get(reverse("metrics:compare"), {"baseline": "three-voices", "candidate": "jace"}))
    assert "run 'jace' is results-only (per-task verdicts, no agent steps): only success is compared" in page
    assert "harness 1 0.000 1.000 +1.000" in page  # task 0: FAIL in three-voices, PASS in jace
    assert "Per metric" not in page


def test_database_counts_agree_with_the_task_by_task_verdicts(voices, results_only):
    """The leaderboard counts in the database what the pages read task by task: the same numbers."""
    from metrics.selectors.latest_evaluations import latest_evaluations
    from metrics.selectors.verdicts_per_task import run_verdicts, success_counts
    from trajectories.models import OutcomeGrade, TaskResult, Task
    from trajectories.services.tallies import refresh_tallies
    from trajectories.verdict_agreement import SOURCE_LABELS
    # A task result beside a trajectory without a harness verdict, and grades of a task without a trajectory.
    TaskResult.objects.create(run=voices["run"], task=voices["agreed"].task, success=True)
    voices["agreed"].__class__.objects.filter(pk=voices["agreed"].pk).update(success=None)
    OutcomeGrade.objects.create(run=results_only, task=Task.objects.get(benchmark="webarena", task_id="3"),
                                grader_name="zoe", value=0.5)
    run_ids = [voices["run"].pk, results_only.pk]
    evaluations = latest_evaluations(run_ids)
    refresh_tallies(run_ids)  # a bulk update, as services write, recounts explicitly
    tables, counts = run_verdicts(run_ids), success_counts(run_ids, evaluations)
    for run_id in run_ids:
        for site in ["", "shopping", "gitlab", "shopping_admin"]:
            for source in SOURCE_LABELS:
                if source == "combined" and run_id in evaluations:
                    continue  # an evaluated run's combined success is its stored aggregate
                assert counts[run_id].summary(source, site) == tables[run_id].summary(source, site), (run_id, site,
                                                                                                     source)
        assert counts[run_id].results_only == tables[run_id].results_only


def test_grades_upload_on_the_agreement_page(client, webarena_tasks, shared_data):
    from django.core.files.uploadedfile import SimpleUploadedFile
    run = AgentRun.objects.create(name="agentoccam")
    path = shared_data / "more-benchmarks" / "agentoccam-human-grades.excerpt.csv"
    url = reverse("metrics:import-grades", args=[run.pk])
    client.force_login(UserFactory(username="stranger"))
    assert client.post(url, {"file": SimpleUploadedFile(path.name, path.read_bytes())}).status_code == 403
    client.force_login(grader("rita", "reviewer"))
    page = text(client.post(url, {"file": SimpleUploadedFile(path.name, path.read_bytes())}, follow=True))
    assert "60 grades of 20 tasks in run 'agentoccam' by Alice (20), Bob (20), Colin (20)" in page
    assert "20 of 20 tasks graded by 3 graders (Alice, Bob, Colin)" in page
    assert "Alice · Bob 20" in page
    refused = text(client.post(url, {"file": SimpleUploadedFile("g.csv", b"Task ID,Alice\n0,2\n")}, follow=True))
    assert "g.csv, line 2: Alice: grade '2' is not 1" in refused and "nothing was stored" in refused


def test_alpha_not_defined_says_what_it_needs(client):
    from tests.factories import StepFactory, TrajectoryFactory
    from trajectories.services.outcomes_and_grades import record_grade

    only = grader("olga")
    trajectory = TrajectoryFactory()
    StepFactory(trajectory=trajectory, index=1)
    client.force_login(only)
    page = text(client.get(reverse("metrics:verdict-agreement", args=[trajectory.run.pk])))
    assert "Krippendorff's alpha (ordinal) not defined: it needs marks from at least two graders, and no one has graded so far" in page
    record_grade(trajectory, only, "1", "")
    page = text(client.get(reverse("metrics:verdict-agreement", args=[trajectory.run.pk])))
    assert "1 of 1 task graded by 1 grader (olga)" in page
    assert "not defined: it needs marks from at least two graders, and only olga has graded so far" in page


def test_a_trajectory_page_says_what_the_run_page_says_of_its_task(voices):
    """The trajectory page builds its task's verdicts from what it has read (its score, grades and named
    verdicts); the run's table reads them all again: they agree, down to a task result standing in for a
    trajectory without a harness verdict."""
    run, agreed = voices["run"], voices["agreed"]
    agreed.success = None
    agreed.save(update_fields=["success"])
    TaskResult.objects.create(run=run, task=agreed.task, success=True, source_name="results.json")
    source = VerdictSource.objects.create(kind=VerdictKind.LLM_JUDGE, name="WebJudge", model="o4-mini")
    Verdict.objects.create(run=run, task=voices["disputed"].task, trajectory=voices["disputed"], source=source,
                           success=True)
    table = one_run(run)
    for trajectory in (voices["disputed"], agreed):
        evaluation = trajectory_evaluation(trajectory, viewer=voices["hugo"])
        shown = trajectory_verdicts(trajectory, evaluation.score, grades=task_grades(trajectory),
                                    verdicts=task_verdicts_by_source(trajectory.run_id, trajectory.task_id))
        assert shown == table.tasks[trajectory.task_id]
    assert table.tasks[agreed.task_id].harness_source == "results.json"
