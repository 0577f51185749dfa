"""Each published file, as in shared and as a copy with a quirk the full published file has:
what is read as meant is imported and reported, an entry or row that cannot be read is skipped
and named, and `--strict` refuses the file whole."""

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.urls import reverse
from rest_framework.test import APIClient

from tests.factories import AgentRunFactory, UserFactory
from trajectories.models import OutcomeGrade, Task, TaskResult, TaskSubset

pytestmark = pytest.mark.django_db
MORE = "more-benchmarks"


def _entries(shared_data, name: str) -> list:
    return json.loads((shared_data / MORE / name).read_text(encoding="utf-8"))


def _write(tmp_path, name: str, entries) -> str:
    path = tmp_path / name
    path.write_text(json.dumps(entries), encoding="utf-8")
    return str(path)


def _expected(entry: dict) -> dict:
    return next(item for item in entry["eval"] if item["evaluator"] == "AgentResponseEvaluator")["expected"]


# WebArena-Verified ----------------------------------------------------------------------------

def test_verified_excerpt_imports_without_a_report(shared_data, capsys):
    call_command("import_tasks", str(shared_data / MORE / "webarena-verified.excerpt.json"), "--strict")

    out = capsys.readouterr().out
    assert "8 webarena-verified tasks (8 created, 0 updated, 0 unchanged; 0 unachievable by design)" in out
    assert "skipped" not in out and "read as meant" not in out


def test_verified_absent_retrieved_data_of_a_not_found_answer_reads_as_null(shared_data, tmp_path, capsys):
    entries = _entries(shared_data, "webarena-verified.excerpt.json")
    _expected(entries[1]).clear()
    _expected(entries[1]).update({"task_type": "retrieve", "status": "NOT_FOUND_ERROR"})  # as task 319 upstream

    call_command("import_tasks", _write(tmp_path, "verified.json", entries), "--strict")

    out = capsys.readouterr().out
    assert "8 webarena-verified tasks (8 created, 0 updated, 0 unchanged; 1 unachievable by design)" in out
    assert "skipped" not in out and "read as meant" not in out
    task = Task.objects.get(benchmark="webarena-verified", task_id="3")
    assert task.unachievable
    assert _expected(task.config) == {"task_type": "retrieve", "status": "NOT_FOUND_ERROR", "retrieved_data": None}


def test_verified_successful_answer_without_retrieved_data_is_skipped_and_named(shared_data, tmp_path, capsys):
    entries = _entries(shared_data, "webarena-verified.excerpt.json")
    del _expected(entries[1])["retrieved_data"]
    path = _write(tmp_path, "verified.json", entries)

    with pytest.raises(CommandError, match="1 of 1 file"):
        call_command("import_tasks", path, "--strict")
    assert not Task.objects.exists()
    assert ("verified.json: 1 entry not read as written (refused by --strict), nothing imported:\n"
            "  task 3 (entry 2): field 'eval[0].expected.retrieved_data': missing") in capsys.readouterr().err

    call_command("import_tasks", path)

    out = capsys.readouterr().out
    assert "verified.json: 7 webarena-verified tasks (7 created" in out
    assert ("verified.json: 1 entry skipped, the rest imported:\n"
            "  task 3 (entry 2): field 'eval[0].expected.retrieved_data': missing (a successful answer names what it "
            "retrieved)") in out
    assert not Task.objects.filter(task_id="3").exists()


# WebArena-Lite --------------------------------------------------------------------------------

@pytest.fixture
def quirky_lite(shared_data, tmp_path):
    """The Lite excerpt with one `must_include` and one `fuzzy_match` written as a single string, as in
    the full file's task 81."""
    entries = _entries(shared_data, "webarena-lite.excerpt.json")
    entries[2]["eval"]["reference_answers"]["must_include"] = "yjlou"
    entries[3]["eval"]["reference_answers"]["fuzzy_match"] = "driving: 13min"
    return _write(tmp_path, "webarena-lite.json", entries)


def test_lite_excerpt_imports_without_a_report(shared_data, capsys):
    call_command("import_tasks", str(shared_data / MORE / "webarena-lite.excerpt.json"), "--strict")

    out = capsys.readouterr().out
    assert "5 webarena-lite tasks (5 created" in out and "subset webarena-lite: 5 tasks (created)" in out
    assert "read as meant" not in out


def test_lite_single_strings_read_as_one_item_lists_and_are_reported(quirky_lite, capsys):
    call_command("import_tasks", quirky_lite)

    out = capsys.readouterr().out
    assert "5 webarena-lite tasks (5 created" in out and "subset webarena-lite: 5 tasks (created)" in out
    assert ("webarena-lite.json: 2 values read as meant rather than as written:\n"
            "  task 2 (entry 3): field 'eval.reference_answers.must_include': a single string where a list of "
            "strings is expected: read as a one-item list\n"
            "  task 3 (entry 4): field 'eval.reference_answers.fuzzy_match': a single string") in out
    must_include = Task.objects.get(benchmark="webarena-lite", task_id="2")
    assert (must_include.requirements, must_include.requirements_source) == (["yjlou"], "must_include")
    assert must_include.eval_config["reference_answers"]["must_include"] == ["yjlou"]
    fuzzy = Task.objects.get(benchmark="webarena-lite", task_id="3")
    assert (fuzzy.requirements, fuzzy.unachievable) == (["driving: 13min"], False)


def test_lite_strict_refuses_the_single_strings(quirky_lite, capsys):
    with pytest.raises(CommandError, match="1 of 1 file"):
        call_command("import_tasks", quirky_lite, "--strict")

    err = capsys.readouterr().err
    assert "webarena-lite.json: 2 entries not read as written (refused by --strict), nothing imported" in err
    assert "task 2 (entry 3): field 'eval.reference_answers.must_include'" in err
    assert not Task.objects.exists() and not TaskSubset.objects.exists()


# WebArena and Mind2Web-Live -------------------------------------------------------------------

def test_webarena_single_string_sites_read_as_a_list(shared_data, tmp_path, capsys):
    entries = json.loads((shared_data / "webarena" / "test.raw.json").read_text(encoding="utf-8"))
    entries[17]["sites"] = "gitlab"

    call_command("import_tasks", _write(tmp_path, "test.raw.json", entries))

    out = capsys.readouterr().out
    assert "812 webarena tasks (812 created" in out
    assert "1 value read as meant rather than as written:\n  task 17 (entry 18): field 'sites'" in out
    assert Task.objects.get(task_id="17").sites == ["gitlab"]


def test_mind2web_live_excerpt_and_an_unreadable_key_node(shared_data, tmp_path, capsys):
    call_command("import_tasks", str(shared_data / MORE / "mind2web-live.excerpt.json"), "--strict")
    assert "3 mind2web-live tasks (3 created" in capsys.readouterr().out
    entries = _entries(shared_data, "mind2web-live.excerpt.json")
    entries[1]["evaluation"][0]["content"] = "https://example.com"

    call_command("import_tasks", _write(tmp_path, "live.json", entries))

    out = capsys.readouterr().out
    assert "live.json: 2 mind2web-live tasks (0 created, 0 updated, 2 unchanged" in out
    assert "live.json: 1 entry skipped, the rest imported:\n  task 1 (entry 2): field 'evaluation[0].content'" in out
    assert Task.objects.filter(benchmark="mind2web-live").count() == 3  # the stored version of task 1 is kept


# Subset id lists ------------------------------------------------------------------------------

def test_a_subset_list_with_a_bad_id_keeps_the_others(tmp_path, capsys):
    path = tmp_path / "hard.json"
    path.write_text(json.dumps({"name": "hard", "task_ids": [0, "3 ", 44]}))

    with pytest.raises(CommandError, match="refused by --strict"):
        call_command("import_subset", "verified-hard", str(path), "--strict")
    assert not TaskSubset.objects.exists()
    call_command("import_subset", "verified-hard", str(path))

    out = capsys.readouterr().out
    assert "subset verified-hard of webarena: 2 tasks (created)" in out
    assert "hard.json: 1 entry skipped, the rest imported:\n  task 3  (entry 2): field 'task_id'" in out
    assert TaskSubset.objects.get(name="verified-hard").task_ids == ["0", "44"]


# The same through the page and the API --------------------------------------------------------

@pytest.fixture
def admin(db):
    from django.contrib.auth.models import Group

    from accounts.roles import ADMIN
    user = UserFactory(username="adam")
    user.groups.add(Group.objects.get_or_create(name=ADMIN)[0])
    return user


def test_the_page_shows_what_was_read_as_meant_and_strict_refuses(client, admin, quirky_lite, tmp_path):
    client.force_login(admin)
    url = reverse("trajectories:task-import")
    data = open(quirky_lite, "rb").read()

    page = client.post(url, {"file": SimpleUploadedFile("lite.json", data)}).content.decode()
    refused = client.post(url, {"file": SimpleUploadedFile("lite.json", data), "strict": "on"}).content.decode()

    assert "2 values read as meant rather than as written" in page
    assert "<td>3</td><td>2</td><td><code>eval.reference_answers.must_include</code></td>" in page
    assert "Not imported: lite.json: 2 entries not read as written (refused by --strict)" in refused


def test_the_api_lists_skipped_entries_and_notes(admin, shared_data, quirky_lite):
    api = APIClient()
    api.force_authenticate(admin)
    url = reverse("api-task-import")
    entries = _entries(shared_data, "mind2web-live.excerpt.json")
    entries[2]["task"] = ""
    live = SimpleUploadedFile("live.json", json.dumps(entries).encode())

    body = api.post(url, {"file": live}, format="multipart").json()
    lite = api.post(url, {"file": open(quirky_lite, "rb")}, format="multipart").json()
    refused = api.post(url, {"file": open(quirky_lite, "rb"), "strict": "true"}, format="multipart")

    assert (body["created"], body["skipped"]) == (2, [{"entry": 3, "task_id": "2", "field": "task",
                                                        "message": "empty"}])
    assert [note["field"] for note in lite["notes"]] == ["eval.reference_answers.must_include",
                                                         "eval.reference_answers.fuzzy_match"]
    assert refused.status_code == 400 and "refused by --strict" in str(refused.json())


# Human outcome grades and per-task outcomes ---------------------------------------------------

@pytest.fixture
def grades_text(shared_data):
    return (shared_data / MORE / "agentoccam-human-grades.excerpt.csv").read_text(encoding="utf-8-sig")


def test_grades_with_a_win_rate_row_import_and_name_it(webarena_tasks, grades_text, tmp_path, capsys):
    AgentRunFactory(name="agentoccam")
    path = tmp_path / "grades.csv"
    summaries = "Win Rate,0.619458128,,0.591133005,,0.6,,\n,,,,,,,\nAverage,0.6,,0.6,,0.6,,\n"  # lines 22-24
    path.write_text(grades_text.rstrip("\n") + "\n" + summaries)

    call_command("import_grades", str(path), "--run", "agentoccam")

    out = capsys.readouterr().out
    assert "grades.csv: 60 grades of 20 tasks in run 'agentoccam'" in out
    assert "grades.csv: skipped 2 summary rows: line 22 (Win Rate), line 24 (Average)" in out
    assert OutcomeGrade.objects.count() == 60


def test_a_grade_out_of_range_on_a_task_row_still_refuses_the_file(webarena_tasks, grades_text, tmp_path):
    AgentRunFactory(name="agentoccam")
    path = tmp_path / "grades.csv"
    path.write_text(grades_text.rstrip("\n") + "\nWin Rate,0.6,,0.5,,0.6,,\n20,0.619458128,,1,,1,,\n")

    with pytest.raises(CommandError, match=r"grades.csv, line 23: .*grade '0.619458128' is not 1"):
        call_command("import_grades", str(path), "--run", "agentoccam")
    assert not OutcomeGrade.objects.exists()


def test_outcomes_with_summary_rows_import_and_name_them(webarena_tasks, shared_data, tmp_path, capsys):
    records = _entries(shared_data, "leaderboard-per-task.excerpt.json")
    records += [{"t": "All", "m": "jace", "s": 0.56}, {"t": "", "m": "", "s": 14}]
    path = _write(tmp_path, "leaderboard.json", records)

    call_command("import_outcomes", path)

    out = capsys.readouterr().out
    assert "run 'jace' created: 25 task verdicts (14 pass" in out
    assert "leaderboard.json: skipped 2 summary rows: item 26 (All), item 27 (no task id)" in out
    assert TaskResult.objects.count() == 25


def test_the_page_shows_skipped_ids_escaped(client, admin):
    client.force_login(admin)
    upload = SimpleUploadedFile("hard.json", b'[4, "<b>x</b>", 7]')

    page = client.post(reverse("trajectories:task-import"), {"file": upload, "subset": "hard"}).content.decode()

    assert "Subset <strong>hard</strong> of webarena: 2 task ids (created)" in page
    assert "<td>2</td><td>&lt;b&gt;x&lt;/b&gt;</td><td><code>task_id</code></td>" in page and "<b>x</b>" not in page


def test_the_outcomes_page_names_the_summary_rows(client, webarena_tasks):
    client.force_login(UserFactory(username="dev"))
    upload = SimpleUploadedFile("results.csv", b"run,task_id,success\nbeta,0,1\nbeta,1,0\nbeta,Total,1\n")

    page = client.post("/runs/import-outcomes/", {"file": upload, "benchmark": "webarena"}).content.decode()

    assert '<p id="summary-rows">Skipped 1 summary row: line 4 (Total).</p>' in page
    assert TaskResult.objects.count() == 2
