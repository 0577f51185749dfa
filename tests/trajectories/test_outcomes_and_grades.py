"""import_outcomes and import_grades against the real files of FORMATS.md section 5."""

import json

import pytest
from django.core.management import CommandError, call_command

from tests.factories import AgentRunFactory, TaskFactory, TrajectoryFactory, UserFactory
from trajectories.formats.verdict_files import VerdictFileError, parse_grades, parse_outcomes
from trajectories.models import AgentRun, OutcomeGrade, TaskResult
from trajectories.services.outcomes_and_grades import import_outcomes, record_grade


@pytest.fixture
def grades_file(shared_data):
    return shared_data / "more-benchmarks" / "agentoccam-human-grades.excerpt.csv"


@pytest.fixture
def leaderboard_file(shared_data):
    return shared_data / "more-benchmarks" / "leaderboard-per-task.excerpt.json"


def test_agentoccam_grades_are_read_without_options(grades_file):
    records = parse_grades(grades_file.name, grades_file.read_bytes()).records
    assert {record.grader for record in records} == {"Alice", "Bob", "Colin"}
    assert len(records) == 20 * 3
    task2 = {record.grader: record for record in records if record.task_id == "2"}
    assert (task2["Alice"].value, task2["Bob"].value, task2["Colin"].value) == (0.5, 0.5, 1.0)
    assert task2["Bob"].note == "product type refers to the general category not the products"
    assert task2["Alice"].note == ""
    assert {record.task_id for record in records} == {str(n) for n in range(20)}


def test_long_grades_in_json_lines():
    data = (b'{"task_id": 3, "grader": "ann", "grade": 0.5, "note": "half"}\n'
            b'{"task_id": 3, "grader": "ben", "grade": 1}\n')
    records = parse_grades("grades.jsonl", data).records
    assert [(r.task_id, r.grader, r.value, r.note, r.line) for r in records] == [
        ("3", "ann", 0.5, "half", 1), ("3", "ben", 1.0, "", 2)]


@pytest.mark.parametrize("data, message", [
    (b"Task ID,Alice\n1,0.7\n", r"grades.csv, line 2: Alice: grade '0.7' is not 1"),
    (b"Task ID,Alice\n1,1\n1,0\n", r"line 3: grader 'Alice' graded task 1 twice \(first on line 2\)"),
    (b"Name,Alice\nx,1\n", r"grades.csv: no task column"),
    (b"", r"grades.csv: the file is empty"),
])
def test_bad_grade_files_say_where(data, message):
    with pytest.raises(VerdictFileError, match=message):
        parse_grades("grades.csv", data)


def test_leaderboard_records_are_read_without_options(leaderboard_file):
    records = parse_outcomes(leaderboard_file.name, leaderboard_file.read_bytes()).records
    assert {record.run for record in records} == {"jace"}
    assert len(records) == 25 and sum(record.success for record in records) == 14
    assert records[0].task_id == "0" and records[0].success is True


def test_json_errors_name_the_item():
    with pytest.raises(VerdictFileError, match=r"r.json, item 2: s: 'x' is not a pass/fail verdict"):
        parse_outcomes("r.json", b'[{"t": 1, "m": "a", "s": 1}, {"t": 2, "m": "a", "s": "x"}]')


def test_outcome_columns_can_be_named_and_runs_picked():
    data = b"agent_name,tid,ok\nA,1,PASS\nB,1,fail\n"
    records = parse_outcomes("r.csv", data, run="B", run_column="agent_name", task_column="tid",
                             success_column="ok").records
    assert [(r.run, r.task_id, r.success) for r in records] == [("B", "1", False)]
    with pytest.raises(VerdictFileError, match="r.csv, line 2: ok: 'maybe' is not a pass/fail verdict"):
        parse_outcomes("r.csv", b"agent_name,tid,ok\nA,1,maybe\n", run_column="agent_name", task_column="tid",
                       success_column="ok")
    with pytest.raises(VerdictFileError, match="no run column"):
        parse_outcomes("r.csv", b"task_id,success\n1,1\n")
    assert parse_outcomes("r.csv", b"task_id,success\n1,1\n", run="mine").records[0].run == "mine"


def test_import_outcomes_creates_a_results_only_run(webarena_tasks, leaderboard_file):
    call_command("import_outcomes", str(leaderboard_file))
    run = AgentRun.objects.get(name="jace")
    assert run.trajectories.count() == 0
    results = TaskResult.objects.filter(run=run)
    assert results.count() == 25 and results.filter(success=True).count() == 14
    assert results.first().source_name == leaderboard_file.name
    call_command("import_outcomes", str(leaderboard_file))  # idempotent
    assert TaskResult.objects.filter(run=run).count() == 25


def test_a_row_naming_a_task_not_held_is_left_out_and_strict_refuses_the_file(webarena_tasks, tmp_path, capsys):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"t": 1, "m": "x", "s": 1}\n{"t": 99999, "m": "x", "s": 0}\n')
    with pytest.raises(CommandError, match="strict import refuses the file: line 2 \\(task_id '99999'\\): the task list "
                                           "of webarena .* has no such task; nothing was stored"):
        call_command("import_outcomes", str(path), "--strict")
    assert not AgentRun.objects.filter(name="x").exists()
    call_command("import_outcomes", str(path))
    assert "1 record left out:\n  line 2 (task_id '99999'): the task list of webarena" in capsys.readouterr().out
    assert list(TaskResult.objects.filter(run__name="x").values_list("task__task_id", flat=True)) == ["1"]
    path.write_text('{"t": 99999, "m": "y", "s": 0}\n')
    with pytest.raises(CommandError, match="no record can be stored: line 1 \\(task_id '99999'\\)"):
        call_command("import_outcomes", str(path))
    assert not AgentRun.objects.filter(name="y").exists()


def test_uniform_results_get_a_warning(webarena_tasks, tmp_path, capsys):
    path = tmp_path / "zeros.json"
    path.write_text(json.dumps([{"t": n, "m": "scraped", "s": 0} for n in range(150)]))
    report = import_outcomes(path.name, path.read_bytes())
    assert report.runs[0].uniform is False
    assert "Warning: every verdict is fail" in str(report)


def test_import_outcomes_refuses_another_users_run(webarena_tasks):
    owner, other = UserFactory(), UserFactory()
    AgentRunFactory(name="theirs", uploaded_by=owner)
    with pytest.raises(VerdictFileError, match="belongs to another account"):
        import_outcomes("r.csv", b"run,task_id,success\ntheirs,1,1\n", user=other)


def test_import_grades_attaches_to_trajectories_and_task_results(webarena_tasks, grades_file):
    from trajectories.models import Task
    run = AgentRunFactory(name="agentoccam")
    with_trajectory = TrajectoryFactory(run=run, task=Task.objects.get(benchmark="webarena", task_id="2"))
    call_command("import_grades", str(grades_file), "--run", "agentoccam")
    grades = OutcomeGrade.objects.filter(run=run)
    assert grades.count() == 60
    assert set(grades.filter(task__task_id="2").values_list("trajectory_id", flat=True)) == {with_trajectory.pk}
    assert grades.filter(trajectory__isnull=True).count() == 57
    # Tasks without a trajectory are listed among the run's task results, verdict unknown.
    assert TaskResult.objects.filter(run=run, success__isnull=True).count() == 19
    call_command("import_grades", str(grades_file), "--run", "agentoccam")
    assert OutcomeGrade.objects.filter(run=run).count() == 60


def test_import_grades_needs_a_known_run(grades_file, db):
    with pytest.raises(CommandError, match="no run named 'nope'; nothing was stored"):
        call_command("import_grades", str(grades_file), "--run", "nope")


def test_a_grader_grades_once_and_may_change_their_mind(db):
    trajectory = TrajectoryFactory(task=TaskFactory())
    user = UserFactory(username="ann")
    record_grade(trajectory, user, "1", "fine")
    grade = record_grade(trajectory, user, 0.5, " half ")
    assert OutcomeGrade.objects.count() == 1
    assert (grade.value, grade.note, grade.grader_name) == (0.5, "half", "ann")
    with pytest.raises(ValueError):
        record_grade(trajectory, user, 0.3)


def test_outcomes_upload_page(client, webarena_tasks, leaderboard_file):
    from django.core.files.uploadedfile import SimpleUploadedFile
    client.force_login(UserFactory(username="dev"))
    page = client.post("/runs/import-outcomes/", {
        "file": SimpleUploadedFile("results.csv", b"agent_name,tid,ok\nbeta,0,1\nbeta,1,0\nbeta,99999,1\n"),
        "run_column": "agent_name", "task_column": "tid", "success_column": "ok", "benchmark": "webarena",
    }).content.decode()
    assert "beta</a> created:" in page and "2 task verdicts, 1 pass" in page
    assert "Rows left out: 1" in page and "<td>4</td><td>task_id</td><td><code>&#x27;99999&#x27;</code></td>" in page
    refused = client.post("/runs/import-outcomes/", {
        "file": SimpleUploadedFile("bad.csv", b"task_id,success\n0,1\n"), "benchmark": "webarena",
    }).content.decode()
    assert "bad.csv: no run column" in refused and "nothing was stored" in refused


def test_a_grade_of_a_task_not_held_is_left_out_and_one_out_of_range_still_refuses_the_file(webarena_tasks):
    from trajectories.services.outcomes_and_grades import import_grades
    run = AgentRunFactory(name="agentoccam")
    report = import_grades(run, "grades.csv", b"task_id,grader,grade\n1,ann,1\n99999,ann,0\n")
    assert report.grades == 1 and [(item.line, item.value) for item in report.problems] == [(3, "'99999'")]
    assert "1 record left out:\n  line 3 (task_id '99999'): the task list of webarena" in str(report)
    with pytest.raises(VerdictFileError, match="line 2: grade: grade '3' is not 1"):
        import_grades(run, "scale.csv", b"task_id,grader,grade\n1,ann,3\n")
    assert OutcomeGrade.objects.filter(run=run).count() == 1


@pytest.mark.parametrize(("account", "panel"), [
    ("ANN", "PANEL"), ("Ann", "Panel "), ("\uff41nn", "\uff50anel"), ("ann\u200b", "panel\u200d"),
    ("a\u00adnn", "\ufeffpanel"),
])
def test_a_grader_name_differing_only_in_case_width_or_invisible_characters_is_the_same_grader(
        webarena_tasks, account, panel):
    from trajectories.services.outcomes_and_grades import import_grades
    run = AgentRunFactory(name="agentoccam", uploaded_by=UserFactory(username="owner"))
    UserFactory(username="ann")
    with pytest.raises(VerdictFileError, match="is another account's name"):
        import_grades(run, "g.csv", f"task_id,grader,grade\n1,{account},1\n".encode(), importer=run.uploaded_by)
    import_grades(run, "g.csv", b"task_id,grader,grade\n1,panel,1\n", importer=run.uploaded_by)
    report = import_grades(run, "g.csv", f"task_id,grader,grade\n1,{panel},0\n2,{panel},1\n".encode(),
                           importer=run.uploaded_by)
    assert report.graders == {"panel": 2} and (report.new, report.updated) == (1, 1)
    assert set(OutcomeGrade.objects.filter(run=run).values_list("grader_name", flat=True)) == {"panel"}


def test_one_file_naming_a_grader_in_two_spellings_grades_each_task_once():
    records = parse_grades("g.csv", b"task_id,grader,grade\n1,bo,1\n2,BO\xe2\x80\x8b,0\n").records
    assert [record.grader for record in records] == ["bo", "bo"]
    with pytest.raises(VerdictFileError, match="graded task 1 twice"):
        parse_grades("g.csv", b"task_id,grader,grade\n1,bo,1\n1,\xef\xbd\x82o,0\n")
    with pytest.raises(VerdictFileError, match="no visible name"):
        parse_grades("g.csv", b"task_id,grader,grade\n1,\xe2\x80\x8b,1\n")
