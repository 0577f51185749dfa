"""WebArena-Verified, WebArena-Lite and Mind2Web-Live tasks through the command, the web upload and the API."""

import pytest
from django.contrib.auth.models import Group
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.urls import reverse
from rest_framework.test import APIClient

from accounts.roles import ADMIN
from tests.factories import AgentRunFactory, TaskFactory, TrajectoryFactory, UserFactory
from trajectories import selectors
from trajectories.models import Task, TaskSubset
from trajectories.services.tasks import import_task_file

pytestmark = pytest.mark.django_db
MORE = "more-benchmarks"
EXCERPTS = ("webarena-verified.excerpt.json", "webarena-lite.excerpt.json", "mind2web-live.excerpt.json")


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def excerpts(shared_data):
    return [shared_data / MORE / name for name in EXCERPTS]


@pytest.fixture
def admin(db):
    user = UserFactory(username="adam")
    user.groups.add(Group.objects.get_or_create(name=ADMIN)[0])
    return user


def _state():
    tasks = list(Task.objects.order_by("pk").values_list("benchmark", "task_id", "updated_at", "intent", "key_nodes"))
    subsets = list(TaskSubset.objects.values_list("name", "task_ids", "updated_at"))
    return tasks, subsets


def test_the_excerpts_import_through_the_command_and_again_change_nothing(excerpts, capsys):
    call_command("import_tasks", *map(str, excerpts))
    first = _state()
    call_command("import_tasks", *map(str, excerpts))
    out = capsys.readouterr().out
    assert "8 webarena-verified tasks (8 created" in out and "8 unchanged" in out
    assert "subset webarena-lite: 5 tasks (created)" in out and "subset webarena-lite: 5 tasks (unchanged)" in out
    assert "3 mind2web-live tasks (0 created, 0 updated, 3 unchanged" in out
    assert _state() == first
    verified = Task.objects.get(benchmark="webarena-verified", task_id="44")
    assert verified.revision == 2 and verified.start_url == "__GITLAB__"
    live = Task.objects.get(benchmark="mind2web-live", task_id="2")
    assert live.reference_length == 8 and len(live.key_nodes) == 5


def test_verified_report_lists_changes_against_the_stored_webarena_tasks(shared_data, excerpts, capsys):
    call_command("import_tasks", str(excerpts[0]))
    assert "changed against WebArena: 0 of 0 tasks" in capsys.readouterr().out
    import_task_file(shared_data / "webarena" / "test.raw.json")
    report = import_task_file(excerpts[0])
    assert report.compared == 8
    changed = {(change["task_id"], change["field"]) for change in report.changes}
    assert ("0", "intent") in changed and ("3", "expected answer") in changed
    assert ("0", "expected answer") not in changed
    assert Task.objects.filter(task_id="0").count() == 2  # one task id, two benchmark versions


def test_a_broken_entry_is_skipped_naming_file_entry_and_field_and_strict_refuses_the_file(tmp_path, shared_data,
                                                                                             capsys):
    text = (shared_data / MORE / "mind2web-live.excerpt.json").read_text(encoding="utf-8")
    broken = tmp_path / "live.json"
    broken.write_text(text.replace('"task": "Compare available plans', '"task": 7, "x": "', 1))
    with pytest.raises(CommandError, match="1 of 1 file"):
        call_command("import_tasks", str(broken), "--strict")
    assert not Task.objects.exists()

    call_command("import_tasks", str(broken))

    out = capsys.readouterr().out
    assert "live.json: 2 mind2web-live tasks (2 created" in out
    assert "live.json: 1 entry skipped, the rest imported:\n  task 1 (entry 2): field 'task': expected a string" in out
    assert sorted(Task.objects.values_list("task_id", flat=True)) == ["0", "2"]


def test_subsets_from_id_lists(tmp_path, capsys):
    hard = tmp_path / "verified-hard.json"
    hard.write_text("[0, 3, 44]")
    call_command("import_subset", "verified-hard", str(hard), "--description", "Verified hard")
    call_command("import_subset", "verified-hard", str(hard), "--description", "Verified hard")
    out = capsys.readouterr().out
    assert "subset verified-hard of webarena: 3 tasks (created)" in out and "(unchanged)" in out
    subset = TaskSubset.objects.get(name="verified-hard")
    assert subset.task_ids == ["0", "3", "44"] and subset.benchmarks == ("webarena", "webarena-verified")
    hard.write_text('["x y"]')
    with pytest.raises(CommandError, match=r"verified-hard.json: 1 invalid task entry"):
        call_command("import_subset", "verified-hard", str(hard))
    assert TaskSubset.objects.get(name="verified-hard").task_ids == ["0", "3", "44"]


def test_a_run_on_webarena_tasks_counts_for_the_lite_subset(excerpts):
    import_task_file(excerpts[1])
    run = AgentRunFactory()
    for task_id in ("4", "7", "8"):
        TrajectoryFactory(run=run, task=TaskFactory(task_id=task_id, number=int(task_id)), success=task_id == "4")
    ((subset, count),) = selectors.subsets_of_run(run)
    assert (subset.name, count) == ("webarena-lite", 2)
    lite_task = Task.objects.get(benchmark="webarena-lite", task_id="0")
    assert [task.task_id for task in selectors.task_versions(lite_task)] == ["4"]
    assert [item.name for item in selectors.task_subsets(Task.objects.get(benchmark="webarena", task_id="7"))] == [
        "webarena-lite"]


def test_web_upload_imports_for_admins_only(client, admin, excerpts):
    url = reverse("trajectories:task-import")
    client.force_login(UserFactory(username="nobody"))
    assert client.get(url).status_code == 403
    client.force_login(admin)
    upload = SimpleUploadedFile(excerpts[0].name, excerpts[0].read_bytes())
    page = client.post(url, {"file": upload})
    assert page.status_code == 200
    assert b"8 webarena-verified tasks (8 created" in page.content
    lite = SimpleUploadedFile("lite.txt", b"4\n7\n15")
    page = client.post(url, {"file": lite, "subset": "my-lite", "subset_benchmark": "webarena"})
    assert b"Subset <strong>my-lite</strong> of webarena: 3 task ids (created)" in page.content
    bad = SimpleUploadedFile("bad.json", b'[{"index": 1, "task": "", "reference_task_length": 3, "evaluation": []}]')
    page = client.post(url, {"file": bad})
    assert b"Not imported: bad.json: " in page.content
    assert b"(entry 1): field &#x27;task&#x27;: empty" in page.content
    assert b"(entry 1): field &#x27;evaluation&#x27;: expected a non-empty list of key nodes" in page.content


def test_api_imports_tasks_and_subsets_for_admins(admin, excerpts):
    api = APIClient()
    api.force_authenticate(UserFactory(username="nobody"))
    url = reverse("api-task-import")
    assert api.post(url, {"file": excerpts[2].open("rb")}, format="multipart").status_code == 403
    api.force_authenticate(admin)
    body = api.post(url, {"file": excerpts[2].open("rb")}, format="multipart").json()
    assert (body["kind"], body["created"]) == ("mind2web-live", 3)
    again = api.post(url, {"file": excerpts[2].open("rb")}, format="multipart").json()
    assert (again["created"], again["unchanged"]) == (0, 3)
    body = api.post(url, {"file": excerpts[1].open("rb")}, format="multipart").json()
    assert body["subsets"] == [{"name": "webarena-lite", "tasks": 5, "outcome": "created"}]
    refused = api.post(url, {"file": SimpleUploadedFile("x.json", b"[1]")}, format="multipart")
    assert refused.status_code == 400 and "x.json" in str(refused.json())
    listed = api.get(reverse("api-subsets")).json()
    assert [item["name"] for item in listed["results"]] == ["webarena-lite"]


def test_task_page_shows_both_versions_and_the_network_requirements(client, admin, shared_data, excerpts):
    import_task_file(shared_data / "webarena" / "test.raw.json")
    import_task_file(excerpts[0])
    client.force_login(admin)
    verified = Task.objects.get(benchmark="webarena-verified", task_id="102")
    page = client.get(reverse("trajectories:task-detail", args=[verified.pk])).content.decode()
    assert "Navigate to the page showing the list of open issues" in page
    assert "Display the list of issues in the a11yproject/a11yproject.com repository" in page  # WebArena's intent
    assert "Network requirements" in page and "^__GITLAB__/byteblaze/a11y-syntax-highlighting/-/issues.*$" in page
    assert "Revision" in page
    webarena = Task.objects.get(benchmark="webarena", task_id="102")
    page = client.get(reverse("trajectories:task-detail", args=[webarena.pk])).content.decode()
    assert 'id="version-webarena-verified"' in page
    listed = client.get(reverse("trajectories:task-list"), {"benchmark": "webarena-verified"}).content.decode()
    assert listed.count('href="/tasks/') == 8 + 2  # the tasks, the import page and the navigation's Tasks


def test_trajectory_page_explains_a_structured_answer_mismatch_field_by_field(client, admin, excerpts):
    import_task_file(excerpts[0])
    task = Task.objects.get(benchmark="webarena-verified", task_id="3")
    answer = ('{"task_type": "RETRIEVE", "status": "SUCCESS", '
              '"retrieved_data": ["Quest Lumaflex Band", "<b>Sprite Yoga Mat</b>"]}')
    trajectory = TrajectoryFactory(task=task, final_answer=answer)
    client.force_login(admin)
    page = client.get(reverse("metrics:trajectory-detail", args=[trajectory.pk])).content.decode()
    assert 'id="answer-check"' in page and "does not match" in page
    assert "not in the answer: &quot;Sprite Stasis Ball 65 cm&quot; or" in page
    assert "&lt;b&gt;Sprite Yoga Mat&lt;/b&gt;" in page and "<b>Sprite" not in page
    assert "Expected answer" in page and "Revision" in page
