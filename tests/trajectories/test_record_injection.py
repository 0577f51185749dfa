"""One record of each tool's shared sample with something odd injected (a sentinel, a missing
optional field, an unknown extra field, a string where a list is expected, a 300-character id, a
NUL, a lone surrogate): the file's or upload's other records import; the odd one is imported as
meant (NUL and surrogate replaced and reported) or fails alone, named by its field; the command
exits 0 when nothing failed and 1 when something did."""

import json
import re
import shutil
import zipfile

import pytest
from django.core.management import CommandError, call_command

from tests.factories import AgentRunFactory
from tests.trajectories.verdict_samples import CLICK_CHECKBOXES, CLICK_DIALOG
from trajectories.formats.agent_e import read_task_id
from trajectories.formats.readers import NOT_UTF8
from trajectories.formats.text import UNSTORABLE_REPLACED
from trajectories.models import Task, Trajectory, Verdict
from trajectories.services.verdict_import import import_verdicts

pytestmark = pytest.mark.django_db

LONG_ID = "x" * 300
IMPORTED, FAILED = "imported", "failed"


def _read(path):
    return json.loads(path.read_text(encoding="utf-8"))


def _write(path, document):
    # ensure_ascii writes a lone surrogate as its `\ud800` escape, as a tool's JSON writer does.
    path.write_text(json.dumps(document), encoding="utf-8")


# Each tool: how its records are laid out for one upload, the record that is changed, and how
# each injection changes it: (change, expected status, the field a failure must name).

def _agent_e(shared, folder):
    records = _read(shared / "agent-e" / "text_main_chat_eval_gpt4o.excerpt.json")[:4]
    path = folder / "text_main_chat_eval_gpt4o.json"
    _write(path, records)
    return path, 4


def _agent_e_change(folder, change):
    path = folder / "text_main_chat_eval_gpt4o.json"
    records = _read(path)
    change(records[1])
    _write(path, records)


def _online_mind2web(shared, folder):
    for source in sorted((shared / "online-mind2web" / "abp_run").iterdir())[:3]:
        (folder / "abp_run" / source.name).mkdir(parents=True)
        shutil.copy(source / "result.json", folder / "abp_run" / source.name / "result.json")
    return folder, 3


def _online_mind2web_change(folder, change):
    path = sorted((folder / "abp_run").iterdir())[1] / "result.json"
    document = _read(path)
    change(document)
    _write(path, document)


def _browser_use(shared, folder):
    source = shared / "browser-use" / "webarena-infinity-gmail" / "task_e1"
    for task_id in ("task_e1", "task_e2"):
        shutil.copytree(source, folder / task_id, ignore=shutil.ignore_patterns("conversations"))
        result = _read(folder / task_id / "result.json")
        _write(folder / task_id / "result.json", {**result, "task_id": task_id})
    return folder, 2


def _browser_use_change(name):
    def change_file(folder, change):
        path = folder / "task_e2" / name
        document = _read(path)
        change(document)
        _write(path, document)
    return change_file


def _webvoyager(shared, folder):
    for task_id in ("GitHub--0", "GitHub--1"):
        shutil.copytree(shared / "webvoyager" / "taskGitHub--0", folder / f"task{task_id}")
    return folder, 2


def _webvoyager_change(folder, change):
    path = folder / "taskGitHub--1" / "interact_messages.json"
    messages = _read(path)
    change(messages)
    _write(path, messages)


def _trajectory_v1(shared, folder):
    third = {**CLICK_CHECKBOXES, "task": {**CLICK_CHECKBOXES["task"], "task_id": "click-button"}}
    path = folder / "run.jsonl"
    path.write_text("\n".join(json.dumps(document) for document in (CLICK_DIALOG, CLICK_CHECKBOXES, third)))
    return path, 3


def _trajectory_v1_change(folder, change):
    path = folder / "run.jsonl"
    documents = [json.loads(line) for line in path.read_text().splitlines()]
    change(documents[1])
    path.write_text("\n".join(json.dumps(document) for document in documents))


def _trajectory_v1_list(shared, folder):
    jsonl, records = _trajectory_v1(shared, folder)
    path = folder / "trajectories.json"
    path.write_text(json.dumps([json.loads(line) for line in jsonl.read_text().splitlines()]))
    jsonl.unlink()
    return path, records


def _trajectory_v1_list_change(folder, change):
    documents = _read(folder / "trajectories.json")
    change(documents[1])
    _write(folder / "trajectories.json", documents)


def _agentlab(shared, folder):
    for episode in sorted((shared / "browsergym-agentlab").glob("2025-*")):
        shutil.copytree(episode, folder / episode.name)
    return folder, 2


def _agentlab_change(folder, change):
    path = sorted(folder.glob("2025-*"))[1] / "summary_info.json"
    summary = _read(path)
    change(summary)
    _write(path, summary)


def _render(shared, folder):
    for source in sorted((shared.parent / "trajectory-samples").glob("*.html")):
        shutil.copy(source, folder / source.name)
    return folder, 3


def _render_change(folder, change):
    path = folder / "llama3-8b_render_6.html"
    path.write_bytes(change(path.read_bytes()))


def _replace(old: bytes, new: bytes, count: int = 1):
    def change(data: bytes) -> bytes:
        assert old in data
        return data.replace(old, new, count)
    return change


def _set(**values):
    return lambda document: document.update(values)


def _drop(*names):
    def change(document):
        for name in names:
            document.pop(name, None)
    return change


def _history(position, **values):
    return lambda document: document["history"][position]["model_output"].update(values)


def _thought(text):
    def change(messages):
        messages[2]["content"] = messages[2]["content"].replace("Thought: ", f"Thought: {text} ", 1)
    return change


def _message_extra(messages):
    messages[2]["extra"] = {"x": 1}


def _message_list(messages):
    messages[4]["content"] = [messages[4]["content"]]


TOOLS = {
    "agent-e": (_agent_e, _agent_e_change, {
        "sentinel": (_set(compute_cost={"cost": -1, "total_tokens": -1}, score=-0.1), IMPORTED, ""),
        "missing optional": (_drop("pred_score", "pred_reason", "tct", "compute_cost"), IMPORTED, ""),
        "extra field": (_set(reviewer={"name": "n"}), IMPORTED, ""),
        "string for list": (_set(compute_cost="unknown"), FAILED, "compute_cost"),
        "long id": (_set(task_id=LONG_ID), FAILED, "task_id"),
        "nul": (_set(last_statement="done\x00 here"), IMPORTED, ""),
        "surrogate": (_set(last_statement="done \ud800 here"), IMPORTED, ""),
    }),
    "online-mind2web": (_online_mind2web, _online_mind2web_change, {
        "sentinel": (_set(final_result_response=None), IMPORTED, ""),
        "missing optional": (_drop("thoughts", "result_status"), IMPORTED, ""),
        "extra field": (_set(reviewer=[1, 2]), IMPORTED, ""),
        "string for list": (_set(action_history="Click at (1, 2)"), FAILED, "action_history"),
        "long id": (_set(task_id=LONG_ID), FAILED, "task_id"),
        "nul": (_set(final_result_response="done\x00 here"), IMPORTED, ""),
        "surrogate": (_set(final_result_response="done \ud800 here"), IMPORTED, ""),
    }),
    "browser-use": (_browser_use, None, {
        "sentinel": (("result.json", _set(elapsed=-1)), IMPORTED, ""),
        "missing optional": (("result.json", _drop("difficulty", "elapsed", "final_result")), IMPORTED, ""),
        "extra field": (("history.json", _history(0, reviewer="n")), IMPORTED, ""),
        "string for list": (("history.json", _history(1, action="click")), FAILED, "history[1].model_output.action"),
        "long id": (("result.json", _set(task_id=LONG_ID)), FAILED, "result.json.task_id"),
        "nul": (("history.json", _history(1, next_goal="go\x00 on")), IMPORTED, ""),
        "surrogate": (("history.json", _history(1, next_goal="go \ud800 on")), IMPORTED, ""),
    }),
    "webvoyager": (_webvoyager, _webvoyager_change, {
        "sentinel": (_thought("N/A"), IMPORTED, ""),
        "missing optional": (lambda messages: messages.pop(0), IMPORTED, ""),
        "extra field": (_message_extra, IMPORTED, ""),
        "string for list": (_message_list, IMPORTED, ""),
        "long id": (None, FAILED, "task"),
        "nul": (_thought("look\x00 here"), IMPORTED, ""),
        "surrogate": (_thought("look \ud800 here"), IMPORTED, ""),
    }),
    "trajectory/v1": (_trajectory_v1, _trajectory_v1_change, {
        "sentinel": (_set(cost=-1), FAILED, "cost"),
        "missing optional": (_drop("final_answer", "tokens_in", "cost", "duration"), IMPORTED, ""),
        "extra field": (_set(reviewer="n"), FAILED, "reviewer"),
        "string for list": (_set(steps="click [1]"), FAILED, "steps"),
        "long id": (lambda document: document["task"].update(task_id=LONG_ID), FAILED, "task.task_id"),
        "nul": (_set(final_answer="done\x00 here"), IMPORTED, ""),
        "surrogate": (_set(final_answer="done \ud800 here"), IMPORTED, ""),
    }),
    "trajectory/v1 list": (_trajectory_v1_list, _trajectory_v1_list_change, {}),
    # A render file has no types: what it may lack or add, its ids and its text.
    "webarena-render": (_render, _render_change, {
        "missing optional": (lambda data: re.sub(rb"<img src='data:[^']*'[^>]*>", b"", data), IMPORTED, ""),
        "extra field": (_replace(b"<div class='prev_action'", b"<div class='reviewer'>n</div><div class='prev_action'"),
                        IMPORTED, ""),
        "long id": (_replace(b"task_id: 6", b"task_id: " + LONG_ID.encode()), FAILED, "task"),
        "nul": (_replace(b"<div class='state_obv'><pre>", b"<div class='state_obv'><pre>\x00"), IMPORTED, ""),
        "surrogate": (_replace(b"<div class='state_obv'><pre>", b"<div class='state_obv'><pre>\xed\xa0\x80"),
                      IMPORTED, ""),
    }),
    "agentlab": (_agentlab, _agentlab_change, {
        "sentinel": (_set(**{"stats.cum_cost": -1, "stats.cum_input_tokens": -1}), IMPORTED, ""),
        "missing optional": (_drop("stats.cum_cost", "err_msg", "stack_trace"), IMPORTED, ""),
        "extra field": (_set(reviewer="n"), IMPORTED, ""),
    }),
}
TOOLS["trajectory/v1 list"][2].update(TOOLS["trajectory/v1"][2])  # a JSON list of the same documents
CASES = [(tool, kind) for tool, (_, _, kinds) in TOOLS.items() for kind in kinds]


def _inject(tool: str, kind: str, folder):
    _, change_record, kinds = TOOLS[tool]
    change, _, _ = kinds[kind]
    if tool == "browser-use":
        name, change = change
        _browser_use_change(name)(folder, change)
    elif tool == "webvoyager" and kind == "long id":  # a name longer than a file system's: in a zip
        with zipfile.ZipFile(folder / "run.zip", "w") as archive:
            for path in sorted(folder.rglob("*")):
                if path.is_file() and path.suffix != ".zip":
                    name = path.relative_to(folder).as_posix()
                    archive.write(path, name.replace("taskGitHub--1/", f"task{LONG_ID}/"))
        for task in folder.glob("task*"):
            shutil.rmtree(task)
    else:
        change_record(folder, change)


def _stored_text(trajectory: Trajectory) -> str:
    steps = trajectory.steps.values_list("reasoning", "observation", "action", "model_output")
    return " ".join([trajectory.final_answer or "", *(text for step in steps for text in step)])


@pytest.mark.parametrize("tool, kind", CASES)
def test_one_odd_record_is_read_as_meant_or_fails_alone_named(shared_data, tmp_path, capsys, tool, kind, request):
    if tool == "webarena-render":
        request.getfixturevalue("webarena_tasks")
    build, _, kinds = TOOLS[tool]
    _, expected, field = kinds[kind]
    folder = tmp_path / "upload"
    folder.mkdir()
    path, records = build(shared_data / "agent-outputs", folder)
    _inject(tool, kind, folder)

    arguments = ["import_trajectories", str(path), "--run", "odd", "--json"]
    if expected == FAILED:
        with pytest.raises(CommandError, match=r"^1 of \d+ entries failed: "):
            call_command(*arguments, verbosity=0)
    else:
        call_command(*arguments, verbosity=0)
    report = json.loads(capsys.readouterr().out)

    entries = [entry for entry in report["files"] if entry["kind"] == "trajectory"]
    assert [entry["status"] for entry in entries].count(IMPORTED) == records - (expected == FAILED)
    assert Trajectory.objects.filter(run__name="odd").count() == records - (expected == FAILED)
    if expected == FAILED:
        [failed] = report["failures"]
        assert field in failed["record"] or field in failed["reason"], failed
        assert not Task.objects.filter(task_id=LONG_ID).exists()
        return
    assert report["ok"] is True and report["failures"] == []
    notes = [note for entry in entries for note in entry["notes"]]
    if kind in ("nul", "surrogate"):
        assert any(("\ufffd" in _stored_text(trajectory)) for trajectory in Trajectory.objects.all())
        said = NOT_UTF8 if tool == "webarena-render" and kind == "surrogate" else UNSTORABLE_REPLACED
        assert any(note.startswith(said) for note in notes), notes


@pytest.mark.parametrize("tool", ["agent-e", "online-mind2web", "trajectory/v1"])
def test_a_file_whose_format_is_wrong_still_fails_whole(tmp_path, tool):
    """Not JSON at all: no record can be told apart, and the file fails as before."""
    path = tmp_path / ("run.jsonl" if tool == "trajectory/v1" else "records.json")
    path.write_text("[{" if tool != "trajectory/v1" else "{\"schema\": ")
    with pytest.raises(CommandError, match="1 of 1 entries failed"):
        call_command("import_trajectories", str(path), "--run", "odd", verbosity=0)
    assert not Trajectory.objects.exists()


def test_both_readers_of_agent_e_read_one_record_alike(shared_data, tmp_path):
    """`import_trajectories` and `import_verdicts` on the same records (one with unknown cost and
    tokens and a human score of -0.1) store the same verdicts, on the same tasks, and both report
    the score off the scale."""
    records = _read(shared_data / "agent-outputs" / "agent-e" / "text_main_chat_eval_gpt4o.excerpt.json")[:5]
    records[2] = {**records[2], "score": -0.1, "compute_cost": {"cost": -1, "total_tokens": -1}}
    path = tmp_path / "text_main_chat_eval_gpt4o.json"
    _write(path, records)

    call_command("import_trajectories", str(path), "--run", "by-trajectories", verbosity=0)
    AgentRunFactory(name="by-verdicts", benchmark="webvoyager")
    report = import_verdicts(path.name, path.read_bytes(), mapping={"": "by-verdicts"})

    def stored(run: str) -> set:
        return {(verdict.task.task_id, verdict.source.name, verdict.success, verdict.label)
                for verdict in Verdict.objects.filter(run__name=run).select_related("task", "source")}

    assert stored("by-trajectories") == stored("by-verdicts")
    assert len(stored("by-verdicts")) == 5 + sum(record.get("pred_score") is not None for record in records)
    unsure = Trajectory.objects.get(run__name="by-trajectories", task__task_id=read_task_id(records[2]))
    assert (unsure.task.task_id, "Agent-E human evaluators", None, "score -0.1") in stored("by-verdicts")
    assert (unsure.cost, unsure.tokens_in) == (None, None)
    said = "score: -0.1 is neither 1 (success) nor 0 (failure): read as unsure"
    assert any(said in note for note in report.notes)


def test_both_readers_of_browser_use_judge_scores_read_one_off_the_scale_alike(shared_data, tmp_path, capsys):
    """Online-Mind2Web's results with browser-use's judge (0 to 100): a score of 150 is unsure for
    `import_trajectories` and `import_verdicts` alike, and both say so."""
    folder = tmp_path / "browser_use_cloud"
    sources = sorted((shared_data / "agent-outputs" / "online-mind2web" / "browser_use_cloud").iterdir())[:3]
    for source in sources:
        (folder / source.name).mkdir(parents=True)
        shutil.copy(source / "result.json", folder / source.name / "result.json")
    odd = folder / sources[1].name / "result.json"
    document = _read(odd)
    _write(odd, {**document, "judge": {**document["judge"], "score": 150}})

    call_command("import_trajectories", str(folder), "--run", "by-trajectories", "--json", verbosity=0)
    entries = json.loads(capsys.readouterr().out)["files"]
    AgentRunFactory(name="by-verdicts", benchmark="online-mind2web")
    reports = [import_verdicts(path.name, path.read_bytes(), run="by-verdicts")
               for path in sorted(folder.glob("*/result.json"))]

    def stored(run: str) -> set:
        return {(verdict.task.task_id, verdict.source.name, verdict.success, verdict.label, verdict.score)
                for verdict in Verdict.objects.filter(run__name=run).select_related("task", "source")}

    assert stored("by-trajectories") == stored("by-verdicts")
    assert (sources[1].name, "browser-use judge", None, "score 150", 150.0) in stored("by-verdicts")
    said = "judge.score: 150 is outside the scale 0 to 100: read as unsure"
    assert [any(said in note for note in report.notes) for report in reports] == [False, True, False]
    assert {entry["task_id"]: (entry["status"], said in entry["notes"]) for entry in entries} == {
        source.name: ("imported", source == sources[1]) for source in sources}
