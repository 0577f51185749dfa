"""Verdicts from named sources, tokens, cost and time, and tasks of benchmarks without a task list,
stored by the import with their trajectory: whole or not at all, and idempotently."""

import json

import pytest
from django.core.management import call_command

from tests.factories import AgentRunFactory, TaskFactory
from tests.trajectories.verdict_samples import BENCHMARK, CLICK_CHECKBOXES, CLICK_DIALOG, write_verdict_run
from trajectories.models import Step, Task, Trajectory, Verdict, VerdictSource
from trajectories.services.built_in_sources import CHECK_SOURCE, HARNESS_SOURCE, HUMAN_GRADERS_SOURCE
from trajectories.services.ingest import import_paths
from trajectories.services.tasks import import_task_bytes

pytestmark = pytest.mark.django_db
# The sources every run has, made by the migrations.
BUILT_IN = [name for _, name, _ in (HARNESS_SOURCE, CHECK_SOURCE, HUMAN_GRADERS_SOURCE)]


@pytest.fixture
def folder(tmp_path):
    return write_verdict_run(tmp_path / "run")


def _verdicts(run) -> dict:
    return {(v.task.task_id, v.source.kind, v.source.name, v.source.model): (v.success, v.label, v.score, v.explanation)
            for v in Verdict.objects.filter(run=run).select_related("task", "source")}


def test_verdicts_usage_and_the_harness_source_are_stored(folder):
    run = AgentRunFactory(name="r")
    report = import_paths([folder], run)

    assert report.counts() == {"imported": 2, "unchanged": 0, "replaced": 0, "failed": 0, "skipped": 0}
    dialog = Trajectory.objects.get(run=run, task__task_id="click-dialog")
    assert (dialog.success, dialog.success_by, dialog.success_source) == (True, "BrowserGym reward", "run/click-dialog.json")
    # totals the file does not give are the sums of its steps'
    assert (dialog.tokens_in, dialog.tokens_out, dialog.cost, dialog.duration) == (2500, 100, pytest.approx(0.004), 5.0)
    first = Step.objects.get(trajectory=dialog, index=1)
    assert (first.tokens_in, first.tokens_out, first.cost, first.duration) == (1200, 80, 0.0021, 3.5)
    outcome_only = Trajectory.objects.get(run=run, task__task_id="click-checkboxes")
    assert outcome_only.step_count == 0 and outcome_only.success is None and outcome_only.success_by == ""
    assert (outcome_only.tokens_in, outcome_only.tokens_out, outcome_only.cost, outcome_only.duration) == (
        900, None, 0.5, 12.0)
    assert _verdicts(run) == {
        ("click-dialog", "agent_self_report", "agent self-report", ""): (True, "", None, ""),
        ("click-checkboxes", "human", "expert graders", ""): (
            False, "", None, "<img src=x onerror=alert(1)> The box was ticked."),
        ("click-checkboxes", "llm_judge", "WebJudge", "o4-mini"): (True, "", 4.0, "Key points met."),
        ("click-checkboxes", "agent_self_report", "agent self-report", ""): (None, "not_executable", None, ""),
    }
    assert VerdictSource.objects.exclude(name__in=BUILT_IN).count() == 3
    assert VerdictSource.objects.get(name="WebJudge").threshold == 3
    assert set(Verdict.objects.values_list("source_name", flat=True)) == {"run/click-dialog.json", "run/click-checkboxes.json"}
    assert all(verdict.trajectory.task_id == verdict.task_id for verdict in Verdict.objects.select_related("trajectory"))


def test_tasks_of_a_benchmark_without_a_task_list_are_made_from_the_files(folder):
    report = import_paths([folder], AgentRunFactory())

    tasks = {task.task_id: task for task in Task.objects.filter(benchmark=BENCHMARK)}
    assert set(tasks) == {"click-dialog", "click-checkboxes"}
    assert tasks["click-dialog"].intent == 'Close the dialog box by clicking the "x".'
    assert not any(task.from_task_list for task in tasks.values())
    notes = [note for entry in report.files for note in entry.notes]
    assert "task miniwob/click-dialog created from this file: the platform holds no task list of miniwob" in notes

    # a second run on the same benchmark finds them, and a task of it the first run did not have is made too
    other = json.loads(json.dumps(CLICK_DIALOG))
    other["task"]["task_id"] = "click-button"
    (folder / "click-button.json").write_text(json.dumps(other))
    second = import_paths([folder], AgentRunFactory(name="second"))
    assert second.counts()["imported"] == 3
    assert Task.objects.filter(benchmark=BENCHMARK).count() == 3


def test_a_task_list_imported_later_takes_the_made_tasks_over(folder, shared_data):
    made = {**CLICK_DIALOG, "task": {"benchmark": "later-listed", "task_id": "0", "intent": "From the run."}}
    (folder / "made.json").write_text(json.dumps(made))
    import_paths([folder / "made.json"], AgentRunFactory())
    assert not Task.objects.get(benchmark="later-listed", task_id="0").from_task_list

    entry = json.loads((shared_data / "webarena" / "test.raw.json").read_text())[0]
    import_task_bytes(json.dumps([entry]).encode(), "later-listed.json", benchmark="later-listed")
    task = Task.objects.get(benchmark="later-listed", task_id="0")
    assert task.from_task_list and task.intent == entry["intent"]
    # the benchmark's list is held now: an id it does not have is refused, not made
    unknown = {**made, "task": {"benchmark": "later-listed", "task_id": "7"}}
    (folder / "unknown.json").write_text(json.dumps(unknown))
    report = import_paths([folder / "unknown.json"], AgentRunFactory(name="later"))
    assert report.files[0].status == "failed"
    assert report.files[0].reason == "task later-listed/7 is not imported (run manage.py import_tasks)"
    assert not Task.objects.filter(benchmark="later-listed", task_id="7").exists()


def test_a_listed_benchmark_refuses_unknown_task_ids(tmp_path):
    TaskFactory(benchmark="webarena", task_id="1")
    document = {**CLICK_DIALOG, "task": {"benchmark": "webarena", "task_id": "99999"}}
    path = tmp_path / "t.json"
    path.write_text(json.dumps(document))
    report = import_paths([path], AgentRunFactory())
    assert report.files[0].reason == "task webarena/99999 is not imported (run manage.py import_tasks)"
    assert not Task.objects.filter(task_id="99999").exists()


def test_importing_again_changes_nothing(folder):
    run = AgentRunFactory()
    import_paths([folder], run)
    before = list(Verdict.objects.order_by("pk").values_list("pk", "created_at", "success", "trajectory_id"))
    tasks = list(Task.objects.order_by("pk").values_list("pk", "updated_at"))

    report = import_paths([folder], run)

    assert report.counts()["unchanged"] == 2 and report.counts()["imported"] == 0
    assert list(Verdict.objects.order_by("pk").values_list("pk", "created_at", "success", "trajectory_id")) == before
    assert list(Task.objects.order_by("pk").values_list("pk", "updated_at")) == tasks
    assert VerdictSource.objects.exclude(name__in=BUILT_IN).count() == 3


def test_a_replaced_trajectory_replaces_its_verdicts(folder, tmp_path):
    run = AgentRunFactory()
    import_paths([folder], run)
    changed = json.loads(json.dumps(CLICK_CHECKBOXES))
    changed["verdicts"] = [{"kind": "human", "name": "expert graders", "success": True}]
    (folder / "click-checkboxes.json").write_text(json.dumps(changed))

    refused = import_paths([folder / "click-checkboxes.json"], run)
    assert refused.files[0].status == "failed" and "--replace" in refused.files[0].reason
    assert len(_verdicts(run)) == 4

    report = import_paths([folder / "click-checkboxes.json"], run, replace=True)

    assert report.files[0].status == "replaced"
    assert _verdicts(run) == {
        ("click-dialog", "agent_self_report", "agent self-report", ""): (True, "", None, ""),
        ("click-checkboxes", "human", "expert graders", ""): (True, "", None, ""),
    }


def test_a_record_that_fails_leaves_no_verdict_task_or_source(tmp_path):
    """The second record fails as it is stored (two verdicts of one source), after its task was
    made from the file: it fails alone, and leaves nothing behind; the first is stored."""
    twice = [{"kind": "human", "name": "second graders", "success": True}] * 2
    lines = [json.dumps(CLICK_CHECKBOXES), json.dumps({**CLICK_DIALOG, "verdicts": twice})]
    path = tmp_path / "run.jsonl"
    path.write_text("\n".join(lines) + "\n")
    run = AgentRunFactory()

    report = import_paths([path], run)

    assert [entry.status for entry in report.files] == ["imported", "failed"]
    assert list(Trajectory.objects.values_list("task__task_id", flat=True)) == ["click-checkboxes"]
    assert list(Task.objects.values_list("task_id", flat=True)) == ["click-checkboxes"]
    assert {verdict.source.name for verdict in Verdict.objects.all()} == {
        "expert graders", "WebJudge", "agent self-report"}
    assert set(VerdictSource.objects.exclude(name__in=BUILT_IN).values_list("name", flat=True)) == {
        "expert graders", "WebJudge", "agent self-report"}


def test_the_command_imports_the_folder_and_again_changes_nothing(folder, capsys):
    call_command("import_trajectories", str(folder), "--run", "genericagent")
    assert "run genericagent: 2 imported, 0 unchanged, 0 replaced, 0 failed, 0 skipped" in capsys.readouterr().out
    call_command("import_trajectories", str(folder), "--run", "genericagent", "--json", verbosity=0)
    report = json.loads(capsys.readouterr().out)
    assert report["counts"]["unchanged"] == 2 and report["ok"] is True
    assert Verdict.objects.count() == 4


def test_a_new_run_is_on_the_benchmark_of_its_first_trajectory(folder):
    run = AgentRunFactory()
    assert run.benchmark == "webarena"
    import_paths([folder], run)
    run.refresh_from_db()
    assert run.benchmark == BENCHMARK


def test_two_verdicts_of_one_source_fail_the_file_naming_the_second(tmp_path):
    document = json.loads(json.dumps(CLICK_CHECKBOXES))
    document["verdicts"].append({"kind": "llm_judge", "name": "WebJudge", "model": "o4-mini", "success": False})
    path = tmp_path / "twice.json"
    path.write_text(json.dumps(document))
    report = import_paths([path], AgentRunFactory())
    entry = report.files[0]
    assert (entry.status, entry.where) == ("failed", "verdicts[3]")
    assert entry.reason == "a second verdict of source 'WebJudge' (llm_judge, o4-mini); verdicts[1] is the first"
    assert not Trajectory.objects.exists() and not Verdict.objects.exists()


def test_a_named_sources_verdict_on_a_task_is_its_graders_majority():
    from trajectories.selectors import named_majorities

    run = AgentRunFactory()
    tasks = [TaskFactory(task_id=str(number)) for number in range(4)]
    experts = VerdictSource.objects.create(kind="human", name="expert graders")
    judge = VerdictSource.objects.create(kind="llm_judge", name="WebJudge", model="o4-mini")
    for task, marks in zip(tasks, ([True, True, False], [True, False], [None, False], [None])):
        for grader, success in enumerate(marks):
            Verdict.objects.create(run=run, task=task, source=experts, grader=f"g{grader}", success=success,
                                   label="not_executable" if success is None and grader == 0 else "")
    Verdict.objects.create(run=run, task=tasks[0], source=judge, success=False)
    number = {task.pk: position for position, task in enumerate(tasks)}
    said = {(verdict.source_id, number[verdict.task_id]): verdict.success for verdict in named_majorities([run.pk])}
    # 2 yes of 3; a split is left out; not executable is a no; one voice is its own majority
    assert said == {(experts.pk, 0): True, (experts.pk, 2): False, (experts.pk, 3): False, (judge.pk, 0): False}
    assert {verdict.source_id for verdict in named_majorities([run.pk], leave_out_kinds=["human"])} == {judge.pk}
