"""import_verdicts: the published verdict files of ../shared, counted by hand, and AgentRewardBench's layout."""

import html
import json
import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.urls import reverse

from metrics.selectors.verdicts_per_source import verdicts_of
from tests.factories import AgentRunFactory, TaskFactory, TrajectoryFactory, UserFactory
from tests.trajectories.verdict_samples import GPT_WORKARENA, WORKARENA_IDS, annotations_csv
from trajectories.formats.published_verdicts import SourceRef, VerdictFile, VerdictRecord
from trajectories.formats.verdict_files import VerdictFileError
from trajectories.models import AgentRun, Task, TaskResult, Verdict, VerdictSource
from trajectories.selectors import source_rates
from trajectories.services.verdict_import import NewRun, VerdictFileRead, import_verdicts

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
    for path in files:  # a browser-use result names no benchmark: its tasks are made in the one given
        import_verdicts(path.name, path.read_bytes(), run=run.name, benchmark="online-mind2web")
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
    assert _counts(run, "Agent-E vision GPT-4o judge") == (7, 8, 0)  # named as import_trajectories names it
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


def test_a_second_verdict_of_the_same_grader_is_left_out_naming_the_first():
    TaskFactory(benchmark="webarena", task_id="1"), TaskFactory(benchmark="webarena", task_id="2")
    duplicate = ANNOTATIONS + "ann1,webarena,webarena.1,gpt-4o,GenericAgent-gpt-4o,Unsuccessful,No,4. Optimal,No\n"
    report = import_verdicts("annotations.csv", duplicate.encode())
    assert [(item.line, item.field, item.value) for item in report.problems] == [(6, "task_id", "'webarena.1'")]
    assert report.problems[0].reason == ("a second verdict of AgentRewardBench experts by ann1 on this task of run "
                                         "'GenericAgent-gpt-4o' (the first at line 2): left out")
    assert Verdict.objects.get(run__name="GenericAgent-gpt-4o", task__task_id="1", grader="ann1").success is True
    with pytest.raises(VerdictFileError, match="1 record cannot be stored, and a strict import refuses the file: "
                                               "line 6 \\(task_id 'webarena.1'\\): a second verdict"):
        import_verdicts("again.csv", duplicate.replace("Successful,No,4", "Unsuccessful,No,4").encode(), strict=True)
    assert Verdict.objects.get(run__name="GenericAgent-gpt-4o", task__task_id="1", grader="ann1").success is True


def test_listed_benchmarks_and_strict_leave_unknown_tasks_out(om2w):
    path = om2w / "human_label.excerpt.json"
    with pytest.raises(VerdictFileError, match="180 records cannot be stored, and a strict import refuses the file: "
                                               "item 1 \\(task_id '.*'\\), item 2 .* and 170 more: the platform "
                                               "holds no online-mind2web task of this id, and a strict import makes "
                                               "none$"):
        import_verdicts(path.name, path.read_bytes(), strict=True)
    assert not AgentRun.objects.exists()
    TaskFactory(benchmark="webarena", task_id="1")  # a task list of webarena: its tasks are not made from files
    report = import_verdicts("annotations.csv", ANNOTATIONS.encode())
    assert [(item.line, item.value, item.reason) for item in report.problems] == [
        (4, "'webarena.2'", "the task list of webarena (imported with manage.py import_tasks) has no task of this id")]
    assert Verdict.objects.count() == 3 and not Task.objects.filter(task_id="2").exists()


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


def test_the_page_reads_each_file_then_imports_it_and_says_which_were_refused(client, om2w):
    client.force_login(UserFactory())
    labels = om2w / "human_label.excerpt.json"
    with labels.open("rb") as good:
        response = client.post("/runs/import-verdicts/", {
            "files": [good, SimpleUploadedFile("bad.csv", ANNOTATIONS.replace("Unsure", "Maybe").encode())]})
    page = text(response)
    assert "bad.csv, line 4" in page and "nothing was stored" in page
    assert "Step 2 of 2" in page and "180 verdicts of Online-Mind2Web human labels (180)" in page
    assert "Operator: 30 verdicts of 30 tasks of online-mind2web" in page
    assert "No run matches: a new run named Operator would be made." in page
    assert not Verdict.objects.exists()
    token = re.search(r'name="token" value="([^"]+)"', response.content.decode())[1]
    choices = {f"file0-agent{number}-{name}": value for number in range(6)
               for name, value in (("choice", "new"), ("new", list(HUMAN_LABELS)[number]))}
    page = text(client.post("/runs/import-verdicts/", {"token": token, **choices}))
    assert "180 new, 0 changed, 0 unchanged" in page and "Operator created (results only)" in page
    assert Verdict.objects.count() == 180
    again = text(client.post("/runs/import-verdicts/", {"token": token, **choices}))
    assert "no longer kept" in again and Verdict.objects.count() == 180


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


def test_workarena_task_ids_of_up_to_106_characters_are_made_from_the_file():
    TaskFactory(benchmark="webarena", task_id="310")
    report = import_verdicts("annotations.csv", annotations_csv().encode())
    assert report.problems == [] and (report.new, len(report.runs)) == (7, 3)
    # `workarena.` names the benchmark and is dropped: ids of 80, 96 and 106 characters are stored with 70, 86, 96.
    made = Task.objects.filter(benchmark="workarena")
    assert sorted(len(task.task_id) for task in made) == [70, 86, 96]
    assert not any(task.from_task_list for task in made)
    assert "3 tasks created from this file: the platform holds no task of these ids in workarena" in report.notes
    run = AgentRun.objects.get(name=GPT_WORKARENA)
    assert (run.benchmark, run.model) == ("workarena", "gpt-4o-2024-11-20")
    # By hand, its five rows: yes (ann1, 80), no (ann2, 80), no (ann1, 96), unsure (ann1, 106), yes (ann2, 106).
    assert _counts(run, "AgentRewardBench experts") == (2, 2, 0)
    assert Verdict.objects.get(run=run, task__task_id=WORKARENA_IDS[2][len("workarena."):], grader="ann1").label == (
        "unsure")
    assert import_verdicts("annotations.csv", annotations_csv().encode()).unchanged == 7


def test_a_task_that_cannot_be_had_names_its_id_and_why():
    TaskFactory(benchmark="webarena", task_id="1")  # webarena's task list is held: its tasks are not made from files
    too_long = "workarena." + "x" * 300
    rows = annotations_csv() + f"ann1,workarena,{too_long},gpt-4o-2024-11-20,{GPT_WORKARENA},Successful,No,4,No\n"
    report = import_verdicts("annotations.csv", rows.encode())
    assert [(item.line, item.field, item.reason) for item in report.problems] == [
        (7, "task_id", "the task list of webarena (imported with manage.py import_tasks) has no task of this id"),
        (9, "task_id", "a task id of 300 characters; the platform keeps task ids of up to 255")]
    assert report.problems[1].value == repr(too_long)[:80]
    assert report.new == 6 and Task.objects.filter(benchmark="workarena").count() == 3
    assert "import the task configs first" not in str(report)


@pytest.fixture
def browser_use_cloud(om2w):
    """The browser-use cloud run, its 15 trajectories imported with the judge's verdicts they carry."""
    call_command("import_trajectories", str(om2w / "browser_use_cloud"), "--run", "browser-use-cloud")
    return AgentRun.objects.get(name="browser-use-cloud")


def test_the_same_judge_verdicts_again_are_unchanged_whatever_the_file_is_called(browser_use_cloud, om2w):
    files = sorted((om2w / "browser_use_cloud").glob("*/result.json"))
    stored = {verdict.pk: verdict.source_name for verdict in Verdict.objects.filter(run=browser_use_cloud)}
    assert len(stored) == 15  # stored with the trajectories, named by their path in the folder
    for name in (lambda path: path.name, lambda path: str(path)):
        reports = [import_verdicts(name(path), path.read_bytes(), run=browser_use_cloud.name) for path in files]
        assert [(report.new, report.changed, report.unchanged) for report in reports] == [(0, 0, 1)] * 15
    # Nothing changed: the rows still say they came from the trajectories' files.
    assert {verdict.pk: verdict.source_name for verdict in Verdict.objects.filter(run=browser_use_cloud)} == stored
    changed = json.loads(files[0].read_text())
    changed["judge"]["reasoning"] += " On second thought, yes."
    report = import_verdicts(files[0].name, json.dumps(changed).encode(), run=browser_use_cloud.name)
    assert (report.new, report.changed, report.unchanged) == (0, 1, 0)


def test_a_judge_files_own_task_goes_into_a_benchmark_only_when_named(browser_use_cloud):
    custom = json.dumps({"task_id": "browser_use_search_flights", "task": "Find flights from Zurich to Lisbon.",
                         "final_result_response": "Found 3.", "judge": {"score": 100, "reasoning": "Listed."}})
    with pytest.raises(VerdictFileError, match="task_id 'browser_use_search_flights'\\): run 'browser-use-cloud' is of "
                                               "online-mind2web, which holds no task of this id, and the file names "
                                               "no benchmark to make it in: give the benchmark"):
        import_verdicts("result.json", custom.encode(), run=browser_use_cloud.name)
    assert not Task.objects.filter(task_id="browser_use_search_flights").exists()
    report = import_verdicts("result.json", custom.encode(), run=browser_use_cloud.name, benchmark="browser-use-evals")
    assert report.new == 1 and Task.objects.get(task_id="browser_use_search_flights").benchmark == "browser-use-evals"
    assert AgentRun.objects.get(pk=browser_use_cloud.pk).benchmark == "online-mind2web"
    assert report.runs[0].tasks_not_held == ["browser_use_search_flights"]


def test_a_failed_import_stores_nothing_not_even_a_run(om2w, monkeypatch):
    browser_use = next((om2w / "browser_use_cloud").glob("*/result.json"))
    with pytest.raises(VerdictFileError, match="the file names no benchmark for its tasks and run 'fresh' is new"):
        import_verdicts("result.json", browser_use.read_bytes(), mapping={"": NewRun("fresh")})
    TaskFactory(benchmark="webarena", task_id="1")
    with pytest.raises(VerdictFileError, match="no record can be stored"):
        import_verdicts("annotations.csv", annotations_csv().replace("workarena", "webarena").encode())
    with pytest.raises(VerdictFileError, match="a strict import refuses the file"):
        import_verdicts("annotations.csv", ANNOTATIONS.encode(), strict=True)  # task 2 is not held
    assert not AgentRun.objects.exists()

    def broken(*args, **kwargs):
        raise RuntimeError("the database went away")

    monkeypatch.setattr(Verdict.objects, "bulk_create", broken)
    with pytest.raises(RuntimeError):
        import_verdicts("annotations.csv", annotations_csv().encode())
    assert not AgentRun.objects.exists() and not Task.objects.filter(benchmark="workarena").exists()


def _webjudge_file(method: str, screenshots: float) -> VerdictFile:
    """A WebJudge method's verdicts as the reader gives them: the method in the source's name, its screenshot
    threshold beside."""
    ref = SourceRef("llm_judge", f"{method} gpt-4o-mini", "gpt-4o-mini", screenshot_threshold=screenshots)
    return VerdictFile("webjudge", [VerdictRecord(ref, "t1", 1, True), VerdictRecord(ref, "t2", 2, False)])


def test_each_webjudge_method_and_screenshot_threshold_is_a_source_of_its_own():
    run = AgentRunFactory(name="browser-use-cloud", benchmark="online-mind2web")
    methods = ("AgentTrek", "Autonomous", "WebVoyager", "WebJudge_general", "WebJudge_Online_Mind2Web")
    for method in methods + methods[:1]:  # the first file twice
        VerdictFileRead(f"{method}_eval.json", b"", run.name, _webjudge_file(method, 3)).store()
    assert VerdictSource.objects.filter(name__endswith="gpt-4o-mini").count() == 5
    report = VerdictFileRead("AgentTrek_4.json", b"", run.name, _webjudge_file("AgentTrek", 4)).store()
    assert report.sources == ["AgentTrek gpt-4o-mini, screenshots scored 4 or more count (2)"]
    sources = VerdictSource.objects.filter(name="AgentTrek gpt-4o-mini").order_by("screenshot_threshold")
    assert [(source.screenshot_threshold, source.threshold) for source in sources] == [(3, None), (4, None)]
    assert Verdict.objects.filter(run=run).count() == 12  # 6 sources, 2 tasks each


def test_the_screenshot_threshold_is_shown_with_the_source(client):
    run = AgentRunFactory(name="browser-use-cloud", benchmark="online-mind2web")
    trajectory = TrajectoryFactory(run=run, task=TaskFactory(benchmark="online-mind2web", task_id="t1"))
    VerdictFileRead("AgentTrek_eval.json", b"", run.name, _webjudge_file("AgentTrek", 3)).store()
    client.force_login(UserFactory())
    page = text(client.get(reverse("metrics:trajectory-detail", args=[trajectory.pk])))
    assert "AgentTrek gpt-4o-mini (screenshots scored 3 or more count) : PASS" in page
    sources = client.get(f"/api/trajectories/{trajectory.pk}/").json()["verdicts"]
    assert [(source["name"], source["screenshot_threshold"]) for source in sources] == [("AgentTrek gpt-4o-mini", 3)]
