"""An agent acting by screen coordinates, evaluated offline and by an LLM judge that sees its screenshots
(the project's scripted OpenAI-compatible server): what each metric is, or why it is null."""

import json
import re

import pytest
from django.urls import reverse
from PIL import Image, ImageDraw
from rest_framework.test import APIClient

from judges.elements import CROP_HEIGHT, CROP_WIDTH
from judges.local_llm import LocalLLMServer, Reply, well_formed_reply
from judges.models import JudgeDecision
from metrics import exports
from metrics.definitions.element_accuracy import BY_COORDINATES, NO_SCREENSHOT_AT_POINT
from metrics.definitions.final_answer import NOT_GROUNDED_KNOWN, NOT_OBSERVED
from tests.factories import AgentRunFactory, JudgeConfigFactory, UserFactory
from tests.judges.conftest import FAST_RETRIES
from tests.metrics.reports import evaluate, gold
from trajectories.models import Task
from trajectories.services.ingest import import_paths

pytestmark = pytest.mark.django_db

STEPS = [
    {"index": 1, "action": "Click at (150, 70)", "reasoning": "I will click the Search button.",
     "screenshot": "shots/1.png", "action_parts": {"type": "click", "x": 150, "y": 70}},
    {"index": 2, "action": "Click at (700, 500)", "reasoning": "Now the Next link.",
     "screenshot": "shots/2.png", "action_parts": {"type": "click", "x": 700, "y": 500}},
    {"index": 3, "action": 'Type "shoes"', "reasoning": "Type the query.", "action_parts": {"type": "type",
                                                                                        "value": "shoes"}},
]


def _run_folder(tmp_path, steps=STEPS):
    """A trajectory/v1 file and the screenshots its steps name (two distinct 800 x 600 images)."""
    folder = tmp_path / "run"
    (folder / "shots").mkdir(parents=True)
    for number in (1, 2):
        image = Image.new("RGB", (800, 600), "white")
        ImageDraw.Draw(image).rectangle((100, 50, 200, 90), outline="black", fill=(200, 200, 255 - number))
        image.save(folder / "shots" / f"{number}.png")
    document = {"schema": "trajectory/v1", "task": {"benchmark": "coords", "task_id": "t1", "intent": "Find shoes"},
                "steps": steps, "final_answer": "Shoes are listed.", "outcome": {"status": "answered"}}
    (folder / "trajectory.json").write_text(json.dumps(document))
    return folder


def _imported(tmp_path, steps=STEPS):
    run = AgentRunFactory(name="computer-use")
    report = import_paths([_run_folder(tmp_path, steps)], run)
    assert report.ok, report
    gold(Task.objects.get(benchmark="coords", task_id="t1"), ["Click on the 'Search' button"])
    return run


def _element_reply(request: dict) -> Reply:
    """The element prompt answered from what the request shows: the Search button for the step whose
    reasoning names it, a link it did not mean for the other; every other prompt well formed."""
    system, user = request["messages"][0]["content"], request["messages"][-1]["content"]
    if '"intended"' not in system:
        return well_formed_reply(request)
    text = next(part["text"] for part in user if part["type"] == "text")
    meant = "Search button" in text
    return Reply({"element": "button 'Search'" if meant else "link 'Home'", "intended": meant,
                  "rationale": "What the ring is on."})


def test_offline_element_accuracy_and_groundedness_are_null_with_their_reasons(tmp_path):
    run = _imported(tmp_path)
    score = evaluate(run, JudgeConfigFactory(name="offline", backend="offline")).scores.get()
    # Element Accuracy: no step states a planned action and none is a WebArena action; steps 1-2 act
    # at a point with no element; the offline judge sees no screenshot.
    assert score.element_accuracy is None
    # Groundedness: no step records page text; correct = grounded and relevant is unknown with it.
    assert score.grounded is None and score.correct is None and score.relevant is not None
    assert score.details["null_reasons"] == {
        "element_accuracy": BY_COORDINATES,
        "grounded": NOT_OBSERVED,
        "correct": NOT_GROUNDED_KNOWN,
        "partial_success": "not applicable: the task has fewer than two requirements",
        "check_success": "the task has no reference answer or URL to check offline",
        "success": "no verdict from the harness, and the task has no reference answer or URL to check offline",
        "plan_step_success": "not applicable: the agent stated no plan",
        "key_node_completion": "not applicable: the task has no key-node checkpoints",
    }
    # Repetition by what the steps did: (150, 70) and (700, 500) are 680 px apart (> 10); a click then
    # a type are other kinds. r = 0 of n = 3 -> 1 - 0 / 3 = 1.0.
    assert score.repetitiveness == 1.0 and score.details["repetitiveness"]["judged_steps"] == []


def test_a_judge_that_sees_screenshots_resolves_the_elements_at_the_points(tmp_path):
    run = _imported(tmp_path)
    with LocalLLMServer(responder=_element_reply) as server:
        config = JudgeConfigFactory(name="vision", backend="openai", model="gpt-4o-mini", base_url=server.base_url,
                                    tested=True, options=FAST_RETRIES)
        score = evaluate(run, config).scores.get()
        requests = server.requests
    asked = [r for r in requests if '"intended"' in r["messages"][0]["content"]]
    # One question per step acting at a point (steps 1 and 2), each with the crop around its point.
    assert len(asked) == 2
    for request in asked:
        images = [part for part in request["messages"][-1]["content"] if part["type"] == "image_url"]
        assert len(images) == 1 and images[0]["image_url"]["url"].startswith("data:image/png;base64,")
    decisions = JudgeDecision.objects.filter(kind="element_at_point").order_by("pk")
    assert [d.inputs["point"] for d in decisions] == [[150.0, 70.0], [700.0, 500.0]]
    assert all(d.inputs["crop"] == [CROP_WIDTH, CROP_HEIGHT] for d in decisions)
    # Step 1 hit the element its reasoning meant, step 2 did not: 1 hit of 2 steps acting at a point.
    assert score.element_accuracy == 0.5
    accuracy = score.details["element_accuracy"]
    assert (accuracy["by"], accuracy["steps"], accuracy["hits"]) == ("judge_on_screenshot", 2, 1)
    assert [miss["step"] for miss in accuracy["misses"]] == [2]
    # Step matching was asked with the element the judge named at step 1's point.
    [matching] = [r for r in requests if '"pairs"' in r["messages"][0]["content"]]
    assert "1. Click at (150, 70) (element: button 'Search'" in matching["messages"][1]["content"]
    assert score.step_success == 1.0  # the scripted judge pairs gold step 1 with agent step 1
    # No page text: groundedness judged on the two distinct screenshots (steps 1 and 2), both attached.
    [grounding] = [r for r in requests if '"grounded"' in r["messages"][0]["content"]]
    parts = grounding["messages"][-1]["content"]
    assert sum(part["type"] == "image_url" for part in parts) == 2
    assert "screenshots attached, of steps 1, 2" in parts[0]["text"]
    assert (score.grounded, score.relevant, score.correct) == (True, True, True)
    assert "element_accuracy" not in score.details["null_reasons"]
    assert "grounded" not in score.details["null_reasons"]


def test_a_judge_that_sees_screenshots_says_so_when_no_point_has_one(tmp_path):
    steps = [{**step, "screenshot": None} for step in STEPS]
    run = _imported(tmp_path, steps)
    with LocalLLMServer(responder=_element_reply) as server:
        config = JudgeConfigFactory(name="vision", backend="openai", model="gpt-4o-mini", base_url=server.base_url,
                                    tested=True, options=FAST_RETRIES)
        score = evaluate(run, config).scores.get()
    assert score.element_accuracy is None
    assert score.details["null_reasons"]["element_accuracy"] == NO_SCREENSHOT_AT_POINT
    assert score.grounded is None and score.details["null_reasons"]["grounded"] == NOT_OBSERVED


def test_pages_the_api_and_the_export_say_why_beside_each_null(tmp_path, client):
    run = _imported(tmp_path)
    job = evaluate(run, JudgeConfigFactory(name="offline", backend="offline"))
    score = job.scores.get()
    client.force_login(UserFactory(username="reader"))

    page = client.get(reverse("metrics:trajectory-detail", args=[score.trajectory_id]) + f"?job={job.pk}")
    html = page.content.decode()
    assert f'<td id="element-accuracy-why"><span class="null-reason">{BY_COORDINATES}</span></td>' in html
    assert f'<span class="null-reason">grounded: {NOT_OBSERVED}</span>' in html

    listing = client.get(reverse("metrics:job", args=[job.pk])).content.decode()
    # Each distinct reason is one numbered note under the table; the nulls link to theirs.
    notes = dict((reason, number) for number, reason in re.findall(r'<li id="null-note-(\d+)">([^<]*)</li>', listing))
    assert sorted(map(int, notes.values())) == list(range(1, len(notes) + 1))
    number = notes[BY_COORDINATES]
    assert f'<a href="#null-note-{number}" title="{BY_COORDINATES}">{number}</a>' in listing

    api = APIClient()
    api.force_authenticate(UserFactory(username="api-reader"))
    [row] = api.get(f"/api/evaluations/{job.pk}/scores/").json()["results"]
    assert row["element_accuracy"] is None and row["null_reasons"]["element_accuracy"] == BY_COORDINATES

    [exported] = exports.score_rows({run.pk: job.pk})
    assert exported["null_reasons"] == score.details["null_reasons"]
    csv_text = exports.to_bytes(exports.scores_frame({run.pk: job.pk}), "csv").decode()
    assert json.dumps(BY_COORDINATES) in csv_text.replace('""', '"')
