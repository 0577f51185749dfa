"""Arbitrary Unicode, NUL and lone surrogates included, through every importer and API write: never a 5xx,
on SQLite and on PostgreSQL (CI runs these on PostgreSQL, whose text cannot hold NUL).

JSON spells a lone surrogate as `"\\ud800"`; nothing downstream (UTF-8, the database, a page) can hold
one, so the readers and the API's body parser replace it with U+FFFD at the edge.
"""

import itertools
import json
import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from hypothesis import HealthCheck, example, given, settings, strategies as st

from accounts.roles import ADMIN, ANNOTATOR, REVIEWER
from annotation.models import GoldTrajectory
from metrics.models import EvaluationJob
from tests.api.conftest import client_for, member
from tests.factories import AgentRunFactory, StepFactory, TaskFactory, TrajectoryFactory
from trajectories.formats.text import loads as load_json_text
from trajectories.models import AgentRun, OutcomeGrade, Task, TaskResult, TaskSubset, Trajectory
from trajectories.services.storable import storable_text

pytestmark = pytest.mark.django_db

# Half of the characters are surrogates (hypothesis leaves them out of text() by default).
ODD = st.lists(st.one_of(st.characters(exclude_categories=()), st.characters(categories=["Cs"])),
               max_size=12).map("".join)
# Always tried: what PostgreSQL's text cannot hold (NUL) and what UTF-8 cannot (a lone surrogate).
EVERY_DATABASE_REFUSES = "a\x00b\ud800"
EXAMPLES = settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def _json(value) -> bytes:
    return json.dumps(value).encode()  # ASCII, so a lone surrogate travels as its escape


def _file(name: str, value) -> SimpleUploadedFile:
    return SimpleUploadedFile(name, value if isinstance(value, bytes) else _json(value))


def _post_json(client, url: str, body):
    return client.post(url, _json(body), content_type="application/json")


def _trajectory(task_id: str, text: str) -> dict:
    return {"schema": "trajectory/v1", "task": {"task_id": task_id, "intent": text},
            "run": {"agent": text, "model": text, "meta": {text: [text], "k": text}},
            "steps": [{"index": 1, "action": "stop [N/A]", "reasoning": text, "url": text}],
            "final_answer": text, "outcome": {"status": "na"}}


@pytest.fixture
def world(db):
    task = TaskFactory(task_id="6", number=6)
    owner = member(REVIEWER, "owner")
    member(ANNOTATOR, "alice")
    run = AgentRunFactory(name="graded", uploaded_by=owner, benchmark=task.benchmark)
    trajectory = TrajectoryFactory(run=run, task=task)
    StepFactory(trajectory=trajectory, index=1)
    return {"task": task, "owner": owner, "client": client_for(owner), "run": run, "trajectory": trajectory,
            "admin": client_for(member(ADMIN, "adam"))}


def _ok(response) -> None:
    assert response.status_code < 500, response.content[:500]


def test_a_lone_surrogate_in_an_upload_is_replaced_and_reported(world):
    body = {"run": "lone", "trajectories": [_trajectory("6", "answer \ud800 and \udfff")]}
    response = _post_json(world["client"], reverse("api-run-import"), body)
    assert response.status_code in (200, 201, 202), response.content
    trajectory = Trajectory.objects.get(run__name="lone")
    assert trajectory.final_answer == "answer \ufffd and \ufffd"
    assert AgentRun.objects.get(name="lone").metadata["meta"]["k"] == "answer \ufffd and \ufffd"
    stored = _file("lone.json", _trajectory("6", "x\ud800"))
    report = world["client"].post(reverse("api-run-import"), {"run": "lone-file", "files": [stored]},
                                  format="multipart").json()
    assert report["counts"]["imported"] == 1
    assert any("lone UTF-16 surrogates" in note for note in report["files"][0]["notes"]), report


def _stored(text: str) -> str:
    """What the platform keeps of `text` sent as JSON: the input but for the characters its own replacements
    change at the edge (lone surrogates by its JSON loader, which joins a pair as JSON does; NUL before the
    database)."""
    return storable_text(load_json_text(json.dumps(text))[0])


RUN_NUMBERS = itertools.count()


@EXAMPLES
@given(text=ODD)
@example(text=EVERY_DATABASE_REFUSES)
def test_trajectory_uploads_keep_the_text_but_for_the_replaced_characters(world, text):
    client, url = world["client"], reverse("api-run-import")
    name = f"body-{next(RUN_NUMBERS)}"
    _ok(_post_json(client, url, {"run": f"{name}-odd-task", "trajectories": [_trajectory("6", text),
                                                                            _trajectory(text, text)]}))
    response = _post_json(client, url, {"run": name, "trajectories": [_trajectory("6", text)]})
    assert response.status_code in (200, 201, 202), response.content[:500]
    stored = _stored(text)
    trajectory = Trajectory.objects.get(run__name=name, task__task_id="6")
    assert (trajectory.final_answer, trajectory.steps.get().reasoning) == (stored, stored)
    assert AgentRun.objects.get(name=name).metadata["meta"] == {stored: [stored], "k": stored}
    files = [_file("a.json", _trajectory("6", text)), _file("odd-task.json", _trajectory(text, text)),
             _file("b.jsonl", _json(_trajectory("6", text)) + b"\n" + _json(_trajectory(text, "x")) + b"\n")]
    _ok(client.post(url, {"run": "files", "files": files}, format="multipart"))


@EXAMPLES
@given(text=ODD)
@example(text=EVERY_DATABASE_REFUSES)
def test_outcome_and_grade_imports_keep_the_text_but_for_the_replaced_characters(world, text):
    """Names and notes are read trimmed; a row whose task id names no task is reported, the other kept."""
    client, number, stored = world["client"], next(RUN_NUMBERS), _stored(text)
    # Numbered, as the database is kept between examples and a name like one known is read as it.
    agent = _stored(f"agent-{number}:{text}").strip()
    outcomes = [{"t": "6", "m": f"agent-{number}:{text}", "s": 1}, {"t": text, "m": "agent", "s": 0}]
    lines = b"\n".join(_json(row) for row in outcomes)
    for upload in (_file("outcomes.json", outcomes), _file("outcomes.jsonl", lines)):
        response = client.post(reverse("api-outcomes-import"), {"file": upload}, format="multipart")
        assert response.status_code == 200, response.content[:500]
        run = next(run for run in response.json()["runs"] if run["run"] == agent)
        assert (run["tasks"], run["passed"]) == (1, 1)
        assert TaskResult.objects.get(run__name=agent, task__task_id="6").success is True

    grader = _stored(f"panel-{number}:{text}").strip()
    grades = [{"task_id": "6", "grader": f"panel-{number}:{text}", "grade": 1, "note": text},
              {"task_id": text, "grader": "panel", "grade": 0}]
    response = client.post(reverse("api-run-grades-import", args=[world["run"].pk]),
                           {"file": _file("grades.json", grades)}, format="multipart")
    assert response.status_code == 200, response.content[:500]
    assert response.json()["graders"][grader] == 1
    grade = OutcomeGrade.objects.get(run=world["run"], task__task_id="6", grader_name=grader)
    assert (grade.value, grade.note) == (1.0, stored.strip())


def _gold_texts() -> list:
    return [(gold.pk, gold.final_answer, [step.text for step in gold.steps.all()])
            for gold in GoldTrajectory.objects.order_by("pk").prefetch_related("steps")]


@EXAMPLES
@given(text=ODD)
@example(text=EVERY_DATABASE_REFUSES)
@example(text=" \x85\x1f")  # blank once trimmed: every gold write refuses it
def test_gold_writes_keep_the_text_trimmed_or_refuse_a_blank_step(world, text):
    client, stored = world["client"], _stored(text)
    trimmed = stored.strip()
    gold_file = {"schema": "gold/v1", "gold": [{"task_id": "6", "steps": [{"text": text}], "final_answer": text}]}
    before = _gold_texts()
    imported = client.post(reverse("api-gold-import"), {"file": _file("gold.json", gold_file), "annotator": "alice"},
                           format="multipart")
    # A task of its own, as the database is kept between examples and one annotator has one gold per task.
    task_id = TaskFactory().task_id
    written = _post_json(client, reverse("api-gold-list"),
                         {"task_id": task_id, "steps": [{"text": text}], "final_answer": text})
    if trimmed:
        assert (imported.status_code, written.status_code) == (201, 201), (imported.content[:500], written.content)
        for gold_id in (imported.json()["gold"][0]["gold_id"], written.json()["id"]):
            gold = GoldTrajectory.objects.get(pk=gold_id)
            assert (gold.final_answer, [step.text for step in gold.steps.all()]) == (trimmed, [trimmed])
    else:
        assert imported.status_code == 400 and "gold[0].steps[0].text" in imported.json()["detail"]
        assert written.status_code == 400 and "steps[0].text" in written.json()["errors"]
        assert _gold_texts() == before

    before = _gold_texts()
    odd_task = _post_json(client, reverse("api-gold-list"), {"task_id": text, "steps": [{"text": "x"}]})
    if Task.objects.filter(task_id=trimmed).exists():  # made, or refused as the second gold of one annotator
        assert odd_task.status_code in (201, 409), odd_task.content[:500]
    else:
        assert odd_task.status_code in (400, 404) and odd_task.json()["detail"], odd_task.content[:500]
        assert _gold_texts() == before

    loaded = Task.objects.get(pk=world["task"].pk).requirements
    response = client.put(reverse("api-requirements", args=["webarena", "6"]),
                          _json({"requirements": [text], "expected": loaded}), content_type="application/json")
    assert response.status_code == 200, response.content[:500]
    phrase = " ".join(stored.split())  # trimmed, its whitespace runs made one space, a blank one dropped
    assert Task.objects.get(pk=world["task"].pk).requirements == ([phrase] if phrase else [])


@EXAMPLES
@given(text=ODD)
@example(text=EVERY_DATABASE_REFUSES)
@example(text=" \x85\x1f")
def test_grading_evaluating_and_task_files_keep_the_text_or_refuse_it(world, text):
    client, admin, stored = world["client"], world["admin"], _stored(text)
    trajectory = world["trajectory"]
    response = _post_json(client, reverse("api-trajectory-grades", args=[trajectory.pk]), {"grade": "1", "note": text})
    assert response.status_code == 200, response.content[:500]
    grade = OutcomeGrade.objects.get(trajectory=trajectory, grader=world["owner"])
    assert (grade.value, grade.note) == (1.0, stored.strip())

    # No run, judge or annotator is named by the text, and no evaluation parameter is called by it.
    for body in ({"runs": [text], "gold_policy": text, "judge": text},
                 {"runs": ["graded"], "gold_policy": f"annotator={text}", "parameters": {text: text}}):
        refused = _post_json(client, reverse("api-evaluations"), body)
        assert refused.status_code == 400 and refused.json()["detail"], refused.content[:500]
    assert not EvaluationJob.objects.exists()

    task_file = Task.objects.filter(task_id="900")
    before = list(task_file.values())
    tasks = [{"task_id": 900, "intent": text, "sites": ["shopping"], "start_url": text,
              "eval": {"eval_types": ["string_match"], "reference_answers": {"exact_match": text}}}]
    response = admin.post(reverse("api-task-import"), {"file": _file("tasks.json", tasks)}, format="multipart")
    if stored.strip():
        assert response.status_code == 200 and response.json()["total"] == 1, response.content[:500]
        task = task_file.get()
        assert (task.intent, task.start_url) == (stored.strip(), stored)
        assert task.eval_config["reference_answers"] == {"exact_match": stored}
    else:
        assert response.status_code == 400 and "field 'intent': empty" in response.json()["detail"]
        assert list(task_file.values()) == before

    response = admin.post(reverse("api-task-import"), {"file": _file("ids.json", [text, "6"]), "subset": "odd"},
                          format="multipart")
    assert response.status_code == 200, response.content[:500]
    an_id = re.fullmatch(r"[A-Za-z0-9_.:-]+", stored) is not None
    assert [problem["task_id"] for problem in response.json()["skipped"]] == ([] if an_id else [stored])
    assert TaskSubset.objects.get(name="odd").task_ids == list(dict.fromkeys([stored, "6"] if an_id else ["6"]))


def _replaced(response) -> int:
    """How many characters the answer says were replaced (its JSON body and its header agree)."""
    assert response.status_code < 500, response.content[:500]
    body = response.json()
    assert body["text_replaced"]["detail"].startswith("NUL characters and lone UTF-16 surrogates")
    assert response["Text-Replaced"] == str(body["text_replaced"]["count"])
    return body["text_replaced"]["count"]


def test_nul_and_lone_surrogates_are_replaced_and_reported_by_every_importer(world, shared_data):
    client, admin, run = world["client"], world["admin"], world["run"]
    tasks = [{"task_id": 901, "intent": "a\x00b", "sites": ["shopping"], "start_url": "u\ud800",
              "eval": {"eval_types": ["string_match"], "reference_answers": {"exact_match": "x"}}}]
    assert _replaced(admin.post(reverse("api-task-import"), {"file": _file("tasks.json", tasks)},
                                format="multipart")) == 2
    assert TaskFactory._meta.model.objects.get(task_id="901").intent == "a\ufffdb"
    ids = admin.post(reverse("api-task-import"), {"file": _file("ids.json", ["6", "x\x00y"]), "subset": "nul"},
                     format="multipart")
    assert _replaced(ids) == 1

    labels = json.loads((shared_data / "agent-outputs" / "online-mind2web" / "human_label.excerpt.json").read_text())
    labels[0]["confirmed_task"] = "find\x00 the store \ud800"
    assert _replaced(client.post("/api/verdicts/import/", {"file": [_file("human_label.json", labels)]},
                                 format="multipart")) == 2
    webjudge = {"task_id": "judged\ud800", "task": "t\x00", "final_result_response": "", "action_history": [],
                "thoughts": [], "image_judge_record": [], "key_points": "", "predicted_label": 1,
                "evaluation_details": {"response": "Status: success"}}
    response = client.post("/api/verdicts/import/", {"file": [_file("WebJudge_x_auto_eval_results.json", webjudge)],
                                                     "run": "graded"}, format="multipart")
    assert response.status_code < 500, response.content[:500]

    gold_json = {"schema": "gold/v1", "gold": [{"task_id": "6", "steps": [{"text": "click\x00 ok"}],
                                                "final_answer": "\ud800"}]}
    imported = client.post(reverse("api-gold-import"), {"file": _file("gold.json", gold_json)}, format="multipart")
    assert imported.status_code == 201 and _replaced(imported) == 2
    gold_csv = b"Task No.,Step No.,Text\n6,1,click\x00 it\n"
    imported = client.post(reverse("api-gold-import"), {"file": _file("gold.csv", gold_csv)}, format="multipart")
    assert imported.status_code == 201 and _replaced(imported) == 1
    assert _replaced(_post_json(client, reverse("api-gold-list"), {"task_id": "6\x00", "steps": [{"text": "x"}]})) == 1
    assert _replaced(_post_json(client, reverse("api-gold-quality"), {"benchmark": "a\x00b"})) == 1

    grades = b"task_id,grader,grade,note\n6,panel,1,fine\x00 really\n"
    assert _replaced(client.post(reverse("api-run-grades-import", args=[run.pk]), {"file": _file("g.csv", grades)},
                                 format="multipart")) == 1
    assert OutcomeGrade.objects.get(run=run, grader_name="panel").note == "fine\ufffd really"


def test_a_csv_cell_over_the_limit_is_refused_naming_its_line_and_column(world):
    client = world["client"]
    grades = b"task_id,grader,grade,note\n6,panel,1," + b"x" * 10_000_000 + b"\n"
    response = client.post(reverse("api-run-grades-import", args=[world["run"].pk]),
                           {"file": _file("g.csv", grades)}, format="multipart")
    assert response.status_code == 400, response.content[:300]
    assert "g.csv, line 2: note: a cell longer than 131072 characters" in response.json()["detail"]
    gold = b"Task No.,Step No.,Text\n6,1," + b"x" * 200_000 + b"\n"
    refused = client.post(reverse("api-gold-import"), {"file": _file("gold.csv", gold)}, format="multipart")
    assert refused.status_code == 400 and "line 2: Text: a cell longer than 131072 characters" in refused.json()[
        "detail"]
