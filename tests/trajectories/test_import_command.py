import json

import pytest
from django.core.management import CommandError, call_command

from tests.trajectories.expectations import assert_samples_imported
from trajectories.models import AgentRun, Task, Trajectory

pytestmark = pytest.mark.django_db


def test_import_then_reimport_from_the_command_line(webarena_tasks, samples, capsys):
    call_command("import_trajectories", str(samples), "--run", "llama", "--agent", "cot", "--model", "Llama-3-8B",
                 "--paradigm", "step_by_step")
    out = capsys.readouterr().out
    assert "run llama: 3 imported, 0 unchanged, 0 replaced, 0 failed, 1 skipped" in out
    assert "skipped   trajectory-samples/SOURCES.md: not a trajectory, result log or run description file" in out
    run = AgentRun.objects.get(name="llama")
    assert (run.agent, run.model) == ("cot", "Llama-3-8B")
    assert_samples_imported(run)

    call_command("import_trajectories", str(samples), "--run", "llama", "--json", verbosity=0)
    report = json.loads(capsys.readouterr().out)
    assert report["counts"]["unchanged"] == 3 and report["ok"] is True


def test_failures_are_listed_and_make_the_command_fail(webarena_tasks, samples, tmp_path, capsys):
    broken = tmp_path / "render_5.html"
    broken.write_text("<html><body>nothing here</body></html>")
    with pytest.raises(CommandError, match="1 of 2 entries failed"):
        call_command("import_trajectories", str(broken), str(samples / "gpt4turbo_render_0.html"), "--run", "r",
                     verbosity=0)
    out = capsys.readouterr().out
    assert "failed    render_5.html: not a WebArena render file" in out
    assert Trajectory.objects.filter(run__name="r").count() == 1


def test_replacing_needs_the_flag(webarena_tasks, samples, tmp_path, capsys):
    call_command("import_trajectories", str(samples / "llama3-8b_render_6.html"), "--run", "r", verbosity=0)
    changed = tmp_path / "llama3-8b_render_6.html"
    changed.write_text((samples / "llama3-8b_render_6.html").read_text().replace("stop ['N/A']", "stop [42]"))
    with pytest.raises(CommandError):
        call_command("import_trajectories", str(changed), "--run", "r", verbosity=0)
    assert "--replace" in capsys.readouterr().out
    call_command("import_trajectories", str(changed), "--run", "r", "--replace", verbosity=0)
    assert "1 replaced" in capsys.readouterr().out
    assert Trajectory.objects.get(run__name="r").final_answer == "42"


def test_an_invalid_run_is_a_command_error():
    with pytest.raises(CommandError, match="needs a name"):
        call_command("import_trajectories", "x.html", "--run", " ", verbosity=0)


def test_a_record_failing_as_it_is_stored_fails_alone_and_leaves_nothing_behind(db, tmp_path, capsys):
    """Its task (made from the file) and its run description are undone with it; the file's other
    records are stored, and the command names the record and exits 1."""
    def document(task_id, agent, verdicts=()):
        return {"schema": "trajectory/v1", "run": {"agent": agent},
                "task": {"task_id": task_id, "benchmark": "miniwob", "intent": f"click {task_id}"},
                "outcome": {"status": "no_stop"}, "steps": [{"index": 1, "action": "click [1]"}],
                "verdicts": list(verdicts)}

    twice = [{"kind": "human", "name": "me", "success": True}] * 2
    path = tmp_path / "three.json"
    path.write_text(json.dumps([document("a", ""), document("b", "bad-agent", twice), document("c", "")]))

    with pytest.raises(CommandError, match=r"1 of 3 entries failed: three.json, \[1\].verdicts\[1\]$"):
        call_command("import_trajectories", str(path), "--run", "r", verbosity=0)
    out = capsys.readouterr().out
    assert "run r: 2 imported, 0 unchanged, 0 replaced, 1 failed, 0 skipped" in out
    assert "failed    three.json, [1].verdicts[1]: a second verdict of source 'me'" in out
    run = AgentRun.objects.get(name="r")
    assert sorted(run.trajectories.values_list("task__task_id", flat=True)) == ["a", "c"]
    assert run.agent == "" and not Task.objects.filter(task_id="b").exists()
