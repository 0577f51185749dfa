"""import_verdicts: the published verdict files of ../shared, counted by hand, and AgentRewardBench's layout."""

import html
import json
import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.urls import reverse

from metrics.verdict_sources import verdicts_of
from tests.factories import AgentRunFactory, TaskFactory, TrajectoryFactory, UserFactory
from trajectories.formats.verdict_files import VerdictFileError
from trajectories.models import AgentRun, Task, TaskResult, Verdict
from trajectories.selectors import source_rates
from trajectories.services.verdict_import import import_verdicts

pytestmark = pytest.mark.django_db


def text(response) -> str:
    assert response.status_code == 200
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", response.content.decode())))

# Counted by hand from human_label.excerpt.json: {agent: (1, 0, 2)} over its 30 tasks.
HUMAN_LABELS = {"Operator": (23, 4, 3), "Agent-E": (15, 15, 0), "Browser Use": (18, 12, 0),
                "Claude Computer Use 3.5": (13, 17, 0), "Claude Computer Use 3.7": (25, 5, 0), "SeeAct": (21, 9, 0)}
ANNOTATIONS = """annotator_name,benchmark,task_id,model_name,exp_name,trajectory_success,trajectory_side_effect,\
trajectory_optimality,trajectory_looping
ann1,webarena,webarena.1,gpt-4o,GenericAgent-gpt-4o,Successful,No,4. Optimal,No
ann2,webarena,webarena.1,gpt-4o,GenericAgent-gpt-4o,Unsuccessful,Yes,2. Suboptimal,Yes
ann1,webarena,webarena.2,gpt-4o,GenericAgent-gpt-4o,Unsure,No,1. Complete Failure,No
ann1,webarena,webarena.1,claude-3.7,GenericAgent-claude,Unsuccessful,No,3. Somewhat Optimal,No
"""


@pytest.fixture
def om2w(shared_data):
    return shared_data / "agent-outputs" / "online-mind2web"


def _counts(run: AgentRun, source_name: str) -> tuple[int, int, int]:
    verdicts = Verdict.objects.filter(run=run, source__name=source_name)
    return (verdicts.filter(success=True).count(), verdicts.filter(success=False).count(),
            verdicts.filter(label="not_executable").count())


def test_human_labels_make_one_run_per_agent_with_not_executable_stored(om2w):
    path = om2w / "human_label.excerpt.json"
    call_command("import_verdicts", str(path))
    assert set(AgentRun.objects.values_list("name", flat=True)) == set(HUMAN_LABELS)
    for name, counts in HUMAN_LABELS.items():
        run = AgentRun.objects.get(name=name)
        assert run.benchmark == "online-mind2web"
        assert _counts(run, "Online-Mind2Web human labels") == counts
        assert TaskResult.objects.filter(run=run).count() == 30  # listed with the run, no harness verdict
    first = json.loads(path.read_text())[0]
    assert Task.objects.get(benchmark="online-mind2web", task_id=first["task_id"]).intent == first["confirmed_task"]
    operator = source_rates(AgentRun.objects.get(name="Operator"))[0]
    assert (operator.passed, operator.count, operator.unsaid) == (23, 30, 0)  # not executable counts as a failure
    report = import_verdicts(path.name, path.read_bytes())
    assert (report.new, report.changed, report.unchanged) == (0, 0, 180)


def test_300_tasks_of_six_agents_give_success_over_all_300(om2w):
    excerpt = json.loads((om2w / "human_label.excerpt.json").read_text())
    rows = [{**excerpt[number % 30], "task_id": f"task{number:03d}"} for number in range(300)]
    rows.append({"task_id": "Win Rate", **{key: "61.3%" for key in excerpt[0] if key.endswith("_human_label")}})
    report = import_verdicts("human_label.json", json.dumps(rows).encode())
    assert len(report.runs) == 6 and all(run.created and run.verdicts == 300 for run in report.runs)
    assert report.summary_rows == ["item 301 (Win Rate)"]
    rate = source_rates(AgentRun.objects.get(name="Operator"))[0]
    assert (rate.passed, rate.count) == (230, 300)
    assert Task.objects.filter(benchmark="online-mind2web").count() == 300


def test_webjudge_lines_attach_to_the_run_given_and_need_it(om2w):
    path = next(om2w.glob("WebJudge_*"))
    with pytest.raises(VerdictFileError, match="give the run"):
        import_verdicts(path.name, path.read_bytes())
    run = AgentRunFactory(name="browser-use-cloud", benchmark="online-mind2web")
    report = import_verdicts(path.name, path.read_bytes(), run=run.name)
    verdict = Verdict.objects.get(run=run)
    assert (verdict.source.name, verdict.source.model, verdict.source.threshold) == (
        "WebJudge gpt-4o-mini", "gpt-4o-mini", 3.0)
    assert verdict.success is True and "Key points" in verdict.explanation
    assert report.runs[0].matched == "given"


def test_browser_use_judge_scores_against_the_threshold(om2w):
    run = AgentRunFactory(name="browser-use-cloud", benchmark="online-mind2web")
    files = sorted((om2w / "browser_use_cloud").glob("*/result.json"))
    for path in files:
        import_verdicts(path.name, path.read_bytes(), run=run.name)
    assert _counts(run, "browser-use judge") == (14, 1, 0)  # 14 scored 100, one 0
    stricter = next(path for path in files if path.parent.name.startswith("0059adc6"))
    import_verdicts(stricter.name, stricter.read_bytes(), run=run.name, source_name="browser-use judge strict",
                    threshold=101)
    assert _counts(run, "browser-use judge strict") == (0, 1, 0)


def test_agent_e_records_give_humans_and_the_judge(shared_data):
    path = shared_data / "agent-outputs" / "agent-e" / "vision_final_eval_gpt4o.excerpt.json"
    run = AgentRunFactory(name="agent-e-vision", benchmark="webvoyager")
    report = import_verdicts(path.name, path.read_bytes(), run=run.name)
    assert _counts(run, "Agent-E human evaluators") == (21, 9, 0)
    assert _counts(run, "Agent-E GPT-4o judge") == (7, 8, 0)
    assert any("without a judge score" in note for note in report.notes)


def test_agent_reward_bench_annotations_keep_both_annotators_and_match_runs():
    matched = AgentRunFactory(name="gpt-4o on webarena", benchmark="webarena", model="gpt-4o")
    one, two = TaskFactory(benchmark="webarena", task_id="1"), TaskFactory(benchmark="webarena", task_id="2")
    trajectory = TrajectoryFactory(run=matched, task=one)
    report = import_verdicts("annotations.csv", ANNOTATIONS.encode())
    assert {(run.run, run.matched) for run in report.runs} == {
        ("gpt-4o on webarena", "benchmark and model"), ("GenericAgent-claude", "created")}
    both = Verdict.objects.filter(run=matched, task=one).order_by("grader")
    assert [(v.grader, v.success, v.labels["side_effect"], v.trajectory_id) for v in both] == [
        ("ann1", True, "No", trajectory.pk), ("ann2", False, "Yes", trajectory.pk)]
    unsure = Verdict.objects.get(run=matched, task=two)
    assert (unsure.success, unsure.label, unsure.labels["optimality"]) == (None, "unsure", "1. Complete Failure")
    assert AgentRun.objects.get(name="GenericAgent-claude").model == "claude-3.7"
    assert len([v for v in verdicts_of([matched.pk]) if v.source.name == "AgentRewardBench experts"]) == 3


def test_a_bad_row_refuses_the_file_and_stores_nothing():
    TaskFactory(benchmark="webarena", task_id="1")
    bad = ANNOTATIONS.replace("Unsure", "Maybe")
    with pytest.raises(VerdictFileError, match="line 4.*Maybe"):
        import_verdicts("annotations.csv", bad.encode())
    assert not Verdict.objects.exists() and not AgentRun.objects.exists()


def test_a_second_verdict_of_the_same_grader_refuses_the_file():
    TaskFactory(benchmark="webarena", task_id="1"), TaskFactory(benchmark="webarena", task_id="2")
    duplicate = ANNOTATIONS + "ann1,webarena,webarena.1,gpt-4o,GenericAgent-gpt-4o,Successful,No,4. Optimal,No\n"
    with pytest.raises(VerdictFileError, match="line 6.*second verdict.*first at line 2"):
        import_verdicts("annotations.csv", duplicate.encode())
    assert not Verdict.objects.exists() and not AgentRun.objects.exists()


def test_listed_benchmarks_and_strict_refuse_unknown_tasks(om2w):
    path = om2w / "human_label.excerpt.json"
    with pytest.raises(VerdictFileError, match="no task online-mind2web"):
        import_verdicts(path.name, path.read_bytes(), strict=True)
    assert not AgentRun.objects.exists()
    TaskFactory(benchmark="webarena", task_id="1")  # a task list of webarena: its tasks are not made from files
    with pytest.raises(VerdictFileError, match="no task webarena 2: import the task configs first"):
        import_verdicts("annotations.csv", ANNOTATIONS.encode())
    assert not AgentRun.objects.exists() and not Verdict.objects.exists()


def test_one_agent_column_with_run(om2w):
    path = om2w / "human_label.excerpt.json"
    report = import_verdicts(path.name, path.read_bytes(), run="SeeAct")
    assert [run.run for run in report.runs] == ["SeeAct"]
    with pytest.raises(VerdictFileError, match="no column of agent 'Nobody'"):
        import_verdicts(path.name, path.read_bytes(), run="Nobody")


def test_plain_tables_go_the_way_of_import_outcomes_and_import_grades():
    TaskFactory(benchmark="webarena", task_id="5")
    outcomes = import_verdicts("outcomes.csv", b"run,task_id,success\nagent-x,5,1\n,Average,1\n")
    assert outcomes.format == "outcomes" and TaskResult.objects.get(run__name="agent-x").success is True
    grades = import_verdicts("grades.csv", b"task_id,grader,grade\n5,ann,0.5\n", run="agent-x")
    assert grades.format == "grades" and grades.table.grades == 1


def test_command_reports_each_file_and_fails_on_a_bad_one(om2w, tmp_path, capsys):
    bad = tmp_path / "bad.csv"
    bad.write_text(ANNOTATIONS.replace("Unsure", "Maybe"))
    with pytest.raises(CommandError, match="1 of 2 files not imported"):
        call_command("import_verdicts", str(om2w / "human_label.excerpt.json"), str(bad))
    out = capsys.readouterr()
    assert "180 verdicts" in out.out and "nothing was stored" in out.err
    assert AgentRun.objects.count() == 6


def test_the_page_imports_each_file_and_says_which_were_refused(client, om2w):
    client.force_login(UserFactory())
    labels = om2w / "human_label.excerpt.json"
    with labels.open("rb") as good:
        response = client.post("/runs/import-verdicts/", {
            "files": [good, SimpleUploadedFile("bad.csv", ANNOTATIONS.replace("Unsure", "Maybe").encode())]})
    page = response.content.decode()
    assert response.status_code == 200
    assert "bad.csv, line 4" in page and "nothing was stored" in page
    assert "180 new, 0 changed, 0 unchanged" in page and "Operator" in page
    assert Verdict.objects.count() == 180


def test_labels_show_on_the_trajectory_page_with_the_grader_and_are_counted_on_the_run_page(client):
    run = AgentRunFactory(name="gpt-4o on webarena", benchmark="webarena", model="gpt-4o")
    one = TaskFactory(benchmark="webarena", task_id="1")
    TaskFactory(benchmark="webarena", task_id="2")
    trajectory = TrajectoryFactory(run=run, task=one)
    import_verdicts("annotations.csv", ANNOTATIONS.encode())
    client.force_login(UserFactory())
    page = text(client.get(reverse("metrics:trajectory-detail", args=[trajectory.pk])))
    assert "AgentRewardBench experts: by ann1 PASS side effect: No · optimality: 4. Optimal · looping: No" in page
    assert "AgentRewardBench experts: by ann2 FAIL side effect: Yes · optimality: 2. Suboptimal · looping: Yes" in page
    page = text(client.get(reverse("metrics:run-detail", args=[run.pk])))
    assert ("AgentRewardBench experts: side effect No 2 , Yes 1 ; optimality 1. Complete Failure 1 , 2. Suboptimal 1 , "
            "4. Optimal 1 ; looping No 2 , Yes 1") in page


def test_labels_show_in_the_order_they_are_asked_whatever_order_is_stored():
    verdict = Verdict(labels={"looping": "No", "extra": "x", "optimality": "3", "side_effect": "Yes"})
    assert verdict.shown_labels == [("side effect", "Yes"), ("optimality", "3"), ("looping", "No"), ("extra", "x")]
