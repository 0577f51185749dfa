"""The agents of a verdict file mapped to runs: what a file holds before it is stored, and the command's, the
API's and the page's mapping of each agent to an existing run, a new run or nowhere."""

import html
import json
import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.files.storage import default_storage
from django.core.management import CommandError, call_command

from tests.api.conftest import client_for, member
from tests.factories import AgentRunFactory, TaskFactory, TaskResultFactory, TrajectoryFactory, UserFactory
from tests.trajectories.verdict_samples import CLAUDE_WORKARENA, GPT_WEBARENA, GPT_WORKARENA, annotations_csv
from trajectories.formats.verdict_files import VerdictFileError
from trajectories.models import AgentRun, Task, Verdict
from trajectories.services.staged_uploads import FOLDER
from trajectories.services.verdict_import import (
    NewRun, RunMatch, import_verdicts, mapping_of_pairs, parse_mapping, read_verdicts,
)

pytestmark = pytest.mark.django_db

AGENTS = ["Operator", "Agent-E", "Browser Use", "Claude Computer Use 3.5", "Claude Computer Use 3.7", "SeeAct"]


@pytest.fixture
def labels(shared_data):
    return shared_data / "agent-outputs" / "online-mind2web" / "human_label.excerpt.json"


@pytest.fixture
def held(labels):
    """The 30 tasks of the excerpt, `Operator` holding trajectories of the first 10, `op-rerun` task results of
    the first 5."""
    rows = json.loads(labels.read_text())
    tasks = [TaskFactory(benchmark="online-mind2web", task_id=row["task_id"], number=None) for row in rows]
    operator = AgentRunFactory(name="Operator", benchmark="online-mind2web")
    rerun = AgentRunFactory(name="op-rerun", benchmark="online-mind2web")
    for task in tasks[:10]:
        TrajectoryFactory(run=operator, task=task)
    for task in tasks[:5]:
        TaskResultFactory(run=rerun, task=task)
    return tasks


def test_a_look_shows_each_agent_its_tasks_and_the_runs_holding_them(labels, held):
    look = read_verdicts(labels.name, labels.read_bytes()).look()
    assert (look.format, look.verdicts, look.sources) == (
        "online_mind2web_human_labels", 180, ["Online-Mind2Web human labels (180)"])
    assert [(agent.agent, agent.verdicts, agent.tasks, agent.benchmark) for agent in look.agents] == [
        (name, 30, 30, "online-mind2web") for name in AGENTS]
    operator, seeact = look.agents[0], look.agents[5]
    runs = dict(AgentRun.objects.values_list("name", "pk"))
    assert (operator.run, operator.matched, operator.match, operator.others) == (
        "Operator", "named in the file", RunMatch("Operator", runs["Operator"], 10),
        [RunMatch("op-rerun", runs["op-rerun"], 5)])
    assert (seeact.run, seeact.matched, seeact.match) == ("SeeAct", "created", None)
    assert [(run.run, run.held) for run in seeact.others] == [("Operator", 10), ("op-rerun", 5)]
    assert not Verdict.objects.exists() and AgentRun.objects.count() == 2


def test_a_mapping_sends_each_column_to_a_run_a_new_run_or_nowhere(labels, held):
    mapping = {"Operator_human_label": "op-rerun", "SeeAct": None, "Browser Use": NewRun("bu-2025")}
    report = import_verdicts(labels.name, labels.read_bytes(), mapping=mapping)
    runs = {run.run: run for run in report.runs}
    assert set(runs) == {"op-rerun", "bu-2025", "Agent-E", "Claude Computer Use 3.5", "Claude Computer Use 3.7"}
    assert (runs["op-rerun"].matched, runs["op-rerun"].created, runs["op-rerun"].agents) == (
        "mapped", False, ["Operator"])
    # op-rerun held results of the first 5 of the 30 tasks: the other 25 are listed.
    assert runs["op-rerun"].tasks_not_held == sorted(task.task_id for task in held[5:])
    assert (runs["bu-2025"].matched, runs["bu-2025"].created) == ("mapped", True)
    assert AgentRun.objects.get(name="bu-2025").benchmark == "online-mind2web"
    assert [(agent.agent, agent.verdicts) for agent in report.skipped] == [("SeeAct", 30)]
    assert report.new == 150 and not AgentRun.objects.filter(name="SeeAct").exists()
    assert not Verdict.objects.filter(run__name="Operator").exists()
    assert "left out by the mapping: SeeAct (30 verdicts)" in str(report)
    assert "run 'op-rerun' held no trajectory or result of 25 tasks of the file" in str(report)
    operator = AgentRun.objects.get(name="Operator")
    by_id = import_verdicts(labels.name, labels.read_bytes(), mapping={"Operator": str(operator.pk), "SeeAct": None})
    assert {run.run: run.tasks_not_held for run in by_id.runs}["Operator"] == sorted(task.task_id for task in held[10:])


def test_a_mapping_that_does_not_fit_refuses_the_file(labels, held):
    owner, other = UserFactory(), UserFactory()
    AgentRunFactory(name="theirs", uploaded_by=owner)
    for mapping, message in (
            ({"Operator": NewRun("op-rerun")}, "Operator: a run named 'op-rerun' exists; map to it by name"),
            ({"Operator": "nobody"}, "Operator: no run 'nobody'; a new run is mapped as {\"new\": name}"),
            ({"Operator": "theirs"}, "run 'theirs' belongs to another account")):
        with pytest.raises(VerdictFileError, match=re.escape(message)):
            import_verdicts(labels.name, labels.read_bytes(), mapping=mapping, user=other)
    assert not Verdict.objects.exists() and AgentRun.objects.count() == 3


def test_a_file_naming_no_agent_maps_its_verdicts_as_one(shared_data):
    webjudge = next((shared_data / "agent-outputs" / "online-mind2web").glob("WebJudge_*"))
    look = read_verdicts(webjudge.name, webjudge.read_bytes()).look()
    assert [(agent.agent, agent.run, agent.match) for agent in look.agents] == [("", "", None)]
    report = import_verdicts(webjudge.name, webjudge.read_bytes(), mapping={"": NewRun("webjudge-only")})
    run = AgentRun.objects.get(name="webjudge-only")
    assert (report.runs[0].created, run.benchmark, run.verdicts.count()) == (True, "online-mind2web", report.new)
    agent_e = shared_data / "agent-outputs" / "agent-e" / "text_main_chat_eval_gpt4o.excerpt.json"
    with pytest.raises(VerdictFileError, match="give the run \\(--run\\), or map them to one"):
        import_verdicts(agent_e.name, agent_e.read_bytes())
    AgentRunFactory(name="agent-e-text", benchmark="webvoyager")
    report = import_verdicts(agent_e.name, agent_e.read_bytes(), mapping={"": "agent-e-text"})
    assert report.runs[0].run == "agent-e-text" and report.runs[0].matched == "mapped"


def test_agent_reward_bench_experiments_map_to_runs_and_a_choice_settles_two_of_one_model():
    TaskFactory(benchmark="webarena", task_id="310")
    AgentRunFactory(name="gpt-4o workarena a", benchmark="workarena", model="gpt-4o-2024-11-20")
    AgentRunFactory(name="gpt-4o workarena b", benchmark="workarena", model="gpt-4o-2024-11-20")
    read = read_verdicts("annotations.csv", annotations_csv().encode())
    assert read.agents == [GPT_WORKARENA, GPT_WEBARENA, CLAUDE_WORKARENA]
    look = read.look()
    assert [(agent.agent, agent.verdicts, agent.tasks, agent.benchmark, agent.run) for agent in look.agents] == [
        (GPT_WORKARENA, 5, 3, "workarena", ""),  # two runs of its benchmark and model: the choice is the user's
        (GPT_WEBARENA, 1, 1, "webarena", GPT_WEBARENA), (CLAUDE_WORKARENA, 1, 1, "workarena", CLAUDE_WORKARENA)]
    with pytest.raises(VerdictFileError, match="2 workarena runs of model 'gpt-4o-2024-11-20'"):
        read.store()
    report = read.store(mapping={GPT_WORKARENA: "gpt-4o workarena b", CLAUDE_WORKARENA: None})
    assert [(run.run, run.verdicts, run.created) for run in report.runs] == [
        ("gpt-4o workarena b", 5, False), (GPT_WEBARENA, 1, True)]
    assert AgentRun.objects.get(name="gpt-4o workarena b").verdicts.count() == 5


def test_mappings_as_the_command_and_the_api_write_them():
    AgentRunFactory(name="op-rerun")
    assert mapping_of_pairs(["Operator=op-rerun", "SeeAct=", "Browser Use = bu-2025"]) == {
        "Operator": "op-rerun", "SeeAct": None, "Browser Use": NewRun("bu-2025")}
    with pytest.raises(ValueError, match="expected AGENT=RUN"):
        mapping_of_pairs(["Operator"])
    assert parse_mapping({"Operator": "op-rerun", "SeeAct": None, "Agent-E": 7, "Browser Use": {"new": "bu"}}) == {
        "Operator": "op-rerun", "SeeAct": None, "Agent-E": 7, "Browser Use": NewRun("bu")}
    for wrong in ([], {"Operator": 3.5}, {"Operator": {"new": ""}}, {"Operator": {"run": "x"}}, {"Operator": True}):
        with pytest.raises(ValueError):
            parse_mapping(wrong)


def test_the_command_maps_agents_across_files_and_refuses_an_agent_no_file_holds(labels, tmp_path, capsys):
    rows = json.loads(labels.read_text())
    first, second = tmp_path / "first.json", tmp_path / "second.json"
    first.write_text(json.dumps(rows[:15]))
    second.write_text(json.dumps(rows[15:]))
    with pytest.raises(CommandError, match="--map: no file holds the agent 'Nobody' of the mapping; the files' "
                                           "agents: Agent-E, Browser Use, .*Nothing was stored"):
        call_command("import_verdicts", str(first), str(second), "--map", "Nobody=x")
    assert not AgentRun.objects.exists()
    call_command("import_verdicts", str(first), str(second), "--map", "Operator_human_label=operators",
                 "--map", "SeeAct=")
    out = capsys.readouterr().out
    assert "left out by the mapping: SeeAct (15 verdicts)" in out
    # The first file makes the run `operators`; the second's Operator column goes to it.
    assert AgentRun.objects.get(name="operators").verdicts.count() == 30
    assert set(AgentRun.objects.values_list("name", flat=True)) == {
        "operators", "Agent-E", "Browser Use", "Claude Computer Use 3.5", "Claude Computer Use 3.7"}


def test_the_api_takes_a_mapping_as_json(labels, held):
    owner = member(None, "owner")
    AgentRun.objects.filter(name="op-rerun").update(uploaded_by=owner)

    def post(mapping):
        return client_for(owner).post("/api/verdicts/import/", {
            "file": [SimpleUploadedFile(labels.name, labels.read_bytes())], "mapping": mapping}, format="multipart")

    wrong = post(json.dumps({"Operator": 3.5}))
    assert wrong.status_code == 400 and "Operator: 3.5 is not a run's name or id" in wrong.json()["errors"]["mapping"]
    unknown = post(json.dumps({"Nobody": None}))
    assert unknown.status_code == 400 and "no file holds the agent 'Nobody'" in unknown.json()["errors"]["mapping"]
    assert not Verdict.objects.exists()
    response = post(json.dumps({"Operator_human_label": "op-rerun", "SeeAct": None, "Browser Use": {"new": "bu-2025"},
                                "Agent-E": None, "Claude Computer Use 3.5": None, "Claude Computer Use 3.7": None}))
    assert response.status_code == 200, response.content
    report = response.json()["imported"][0]
    assert [(run["run"], run["matched"], len(run["tasks_not_held"])) for run in report["runs"]] == [
        ("op-rerun", "mapped", 25), ("bu-2025", "mapped", 0)]
    assert [agent["agent"] for agent in report["skipped"]] == ["Agent-E", "Claude Computer Use 3.5",
                                                               "Claude Computer Use 3.7", "SeeAct"]
    assert AgentRun.objects.get(name="bu-2025").uploaded_by == owner and report["problems"] == []


def _token(response) -> str:
    return re.search(r'name="token" value="([^"]+)"', response.content.decode())[1]


def test_the_page_shows_each_agent_and_imports_with_the_choices_made(client, labels, held):
    user = UserFactory()
    AgentRun.objects.filter(name="op-rerun").update(uploaded_by=user)
    client.force_login(user)
    with labels.open("rb") as upload:
        first = client.post("/runs/import-verdicts/", {"files": [upload]})
    page = html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", first.content.decode())))
    assert "Operator: 30 verdicts of 30 tasks of online-mind2web" in page
    # Operator is another account's run (made by the factory, no owner): not offered; op-rerun is the user's.
    assert ("No run is found (run 'Operator' is another account's): choose where these verdicts go. Other runs "
            "holding these tasks: op-rerun (5)") in page
    assert '<option value="op-rerun">' in first.content.decode()
    choices = {f"file0-agent{number}-choice": "new" for number in range(6)}
    choices.update({f"file0-agent{number}-new": f"{name} (mine)" for number, name in enumerate(AGENTS)})
    choices.update({"file0-agent0-choice": "run", "file0-agent0-run": "", "file0-agent5-choice": "skip"})
    unnamed = client.post("/runs/import-verdicts/", {"token": _token(first), **choices})
    assert "Name the run." in unnamed.content.decode() and not Verdict.objects.exists()
    choices["file0-agent0-run"] = "op-rerun"
    done = client.post("/runs/import-verdicts/", {"token": _token(unnamed), **choices})
    page = html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", done.content.decode())))
    assert "150 new, 0 changed, 0 unchanged" in page and "Left out: SeeAct (30 verdicts)." in page
    assert "25 tasks of the file the run held no trajectory or result of" in page
    assert AgentRun.objects.get(name="op-rerun").verdicts.count() == 30
    assert AgentRun.objects.get(name="Agent-E (mine)").uploaded_by == user
    assert default_storage.listdir(FOLDER) == ([], [])  # the kept files are gone


def test_the_page_refuses_a_file_it_cannot_show(client, labels):
    client.force_login(UserFactory())
    with labels.open("rb") as upload:
        response = client.post("/runs/import-verdicts/", {"files": [upload], "run": "Nobody"})
    assert response.status_code == 200
    assert "no column of agent &#x27;Nobody&#x27;; agents: Agent-E" in response.content.decode()
    assert 'name="token"' not in response.content.decode() and not AgentRun.objects.exists()


def test_the_page_escapes_what_a_file_names(client):
    TaskFactory(benchmark="webarena", task_id="310")
    hostile = "<script>alert(1)</script>"
    rows = annotations_csv().replace(GPT_WEBARENA, hostile).replace("webarena.310", "webarena.310<b>")
    client.force_login(UserFactory())
    response = client.post("/runs/import-verdicts/", {"files": [SimpleUploadedFile("a<i>.csv", rows.encode())]})
    body = response.content.decode()
    assert hostile not in body and "&lt;script&gt;alert(1)&lt;/script&gt;" in body
    assert "<b>" not in body and "a&lt;i&gt;.csv" in body
    assert Task.objects.filter(benchmark="webarena").count() == 1
