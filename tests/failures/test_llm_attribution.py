"""The LLM attribution sources against the local scripted OpenAI-compatible server: the requests each
method makes, caching, reading answers with one repair, and the attributions and table they give."""

import re
from decimal import Decimal

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse

from failures import llm_methods
from failures.models import AttributionJob, AttributionSource, FailureAttribution, SourceKind
from failures.selectors import attribution_table
from failures.services.annotations import record_failure_annotation
from failures.services.llm_attribution import attribute_by_llm
from judges import attribution
from judges.local_llm import Reply
from judges.models import JudgeDecision
from tests.factories import AgentRunFactory, StepFactory, TrajectoryFactory

pytestmark = pytest.mark.django_db

DECISIVE = 6  # the step every scripted answer points at
_ASKED_STEP = re.compile(r"Is step (\d+) the decisive error\?")
_FIRST_HALF = re.compile(r"Log, steps? (\d+)(?: to (\d+))? \(first half\)")


def _scripted(request: dict) -> Reply:
    """A model that knows the decisive step is DECISIVE; asked all at once about a shorter log, it
    names the log's last step, and asked for a half, it names the second when DECISIVE is beyond both."""
    system, user = request["messages"][0]["content"], request["messages"][1]["content"]
    steps = [int(number) for number in re.findall(r"^Step (\d+) \(", user, re.M)]
    decisive = DECISIVE
    if '"decisive"' in system:
        asked = int(_ASKED_STEP.search(user).group(1))
        return Reply({"decisive": asked == decisive, "failure_type": "wrong_value", "reason": f"step {asked}"})
    if '"half"' in system:
        first = _FIRST_HALF.search(user)
        last_of_first = int(first.group(2) or first.group(1))
        return Reply({"half": "first" if decisive <= last_of_first else "second", "failure_type": "navigation_lost",
                      "reason": "there"})
    return Reply({"step": min(decisive, max(steps)), "agent": "WebSurfer", "failure_type": "misread_task", "reason": "It misread."})


@pytest.fixture
def scripted(llm_server):
    llm_server.responder = _scripted
    return llm_server


def _failed(run, steps: int, task_id: str = "t1"):
    trajectory = TrajectoryFactory(run=run, success=False, step_count=steps, task__task_id=task_id)
    for index in range(1, steps + 1):
        StepFactory(trajectory=trajectory, index=index, agent="Orchestrator" if index % 2 else "WebSurfer",
                    action=f"action {index}", reasoning=f"message {index}")
    return trajectory


@pytest.fixture
def run():
    return AgentRunFactory(name="team")


def _only(run) -> FailureAttribution:
    [row] = FailureAttribution.objects.filter(trajectory__run=run, source__kind=SourceKind.JUDGE)
    return row


def test_all_at_once_asks_once_per_trajectory_and_a_second_pass_asks_nothing(run, scripted, openai_config):
    _failed(run, 8, "a")
    _failed(run, 3, "b")
    TrajectoryFactory(run=run, success=True, step_count=2)

    report = attribute_by_llm(run, openai_config, llm_methods.ALL_AT_ONCE)

    assert (report.total, report.attributed, report.errors) == (2, 2, [])
    assert len(scripted.requests) == 2
    rows = {row.trajectory.task.task_id: row for row in FailureAttribution.objects.filter(source__kind="judge")}
    # The 3-step log: the scripted model names its last step, 3.
    assert {key: (row.step_index, row.agent, row.failure_type, row.note) for key, row in rows.items()} == {
        "a": (6, "WebSurfer", "misread_task", "It misread."), "b": (3, "WebSurfer", "misread_task", "It misread.")}
    assert str(rows["a"].source) == "LLM all at once (gpt-4o-mini)"
    [request] = [item for item in scripted.requests if "Step 8 (WebSurfer):\naction 8\nmessage 8" in
                 item["messages"][1]["content"]]
    assert request["response_format"]["json_schema"]["schema"]["properties"]["agent"]["enum"] == [
        "Orchestrator", "WebSurfer"]
    assert report.calls == 2

    again = attribute_by_llm(run, openai_config, llm_methods.ALL_AT_ONCE)

    assert len(scripted.requests) == 2
    assert (again.attributed, again.calls) == (2, 2)  # the cached decisions' requests, counted as they were made
    assert FailureAttribution.objects.filter(source__kind="judge").count() == 2


def test_step_by_step_stops_at_the_first_step_judged_decisive(run, scripted, openai_config):
    _failed(run, 9)

    attribute_by_llm(run, openai_config, llm_methods.STEP_BY_STEP)

    # Steps 1 to 6 asked, each with the log up to it; none after the decisive one.
    asked = [int(_ASKED_STEP.search(item["messages"][1]["content"]).group(1)) for item in scripted.requests]
    assert asked == [1, 2, 3, 4, 5, 6]
    assert "Step 7 (" not in scripted.requests[-1]["messages"][1]["content"]
    row = _only(run)
    assert (row.step_index, row.agent, row.failure_type, row.note) == (6, "WebSurfer", "wrong_value", "step 6")
    assert JudgeDecision.objects.filter(kind=attribution.STEP).count() == 6


def test_step_by_step_without_a_decisive_step_leaves_no_attribution(run, llm_server, openai_config):
    _failed(run, 3)
    llm_server.responder = lambda request: Reply({"decisive": False, "failure_type": "looped", "reason": "fine"})

    report = attribute_by_llm(run, openai_config, llm_methods.STEP_BY_STEP)

    assert len(llm_server.requests) == 3
    assert report.attributed == 0
    assert report.errors == [{"trajectory": report.errors[0]["trajectory"], "task": "t1",
                              "error": "none of the 3 steps was judged decisive"}]
    assert not FailureAttribution.objects.exists()


@pytest.mark.parametrize(("steps", "halves_asked", "found"), [
    # 8 steps: 1-4 | 5-8 -> second; 5-6 | 7-8 -> first; 5 | 6 -> second: step 6 in 3 = log2(8) requests.
    (8, [(1, 4), (5, 6), (5, 5)], 6),
    # 11 steps: 1-6 | 7-11 -> first; 1-3 | 4-6 -> second; 4-5 | 6 -> second: 3 requests, < ceil(log2(11)) = 4.
    (11, [(1, 6), (1, 3), (4, 5)], 6),
    # 5 steps, the last decisive (the scripted model's): 1-3 | 4-5 -> second; 4 | 5 -> second.
    (5, [(1, 3), (4, 4)], 5),
    # One step: nothing to ask.
    (1, [], 1),
])
def test_binary_search_halves_the_log_until_one_step_is_left(run, scripted, openai_config, steps, halves_asked, found):
    _failed(run, steps)

    attribute_by_llm(run, openai_config, llm_methods.BINARY_SEARCH)

    first_halves = []
    for request in scripted.requests:
        match = _FIRST_HALF.search(request["messages"][1]["content"])
        first_halves.append((int(match.group(1)), int(match.group(2) or match.group(1))))
    assert first_halves == halves_asked
    row = _only(run)
    assert (row.step_index, row.agent) == (found, "Orchestrator" if found % 2 else "WebSurfer")
    assert (row.failure_type, row.note) == (("navigation_lost", "there") if halves_asked else
                                            ("", "the log has one step"))


def test_an_answer_out_of_bounds_gets_one_repair_request(run, llm_server, openai_config):
    _failed(run, 4)
    llm_server.queue(
        Reply({"step": 9, "agent": "WebSurfer", "failure_type": "misread_task", "reason": "x"}),
        Reply('```json\n{"step": "2", "agent": "websurfer", "failure_type": "Looped", "reason": "Repaired."}\n```'),
    )

    attribute_by_llm(run, openai_config, llm_methods.ALL_AT_ONCE)

    assert len(llm_server.requests) == 2
    repair = llm_server.requests[1]["messages"][-1]["content"]
    assert "step must be one of the numbers 1, 2, 3, 4, not 9" in repair
    row = _only(run)
    # Read leniently where the meaning is one: a number as text, case, a code fence.
    assert (row.step_index, row.agent, row.failure_type, row.note) == (2, "WebSurfer", "looped", "Repaired.")
    decision = JudgeDecision.objects.get(kind=attribution.WHOLE)
    assert decision.repairs == 1 and decision.calls == 2
    assert decision.coerced == ["the JSON was read from inside a code fence", "step: '2' read as 2",
                                "agent: 'websurfer' read as 'WebSurfer'",
                                "failure_type: 'Looped' read as 'looped'"]


def test_an_answer_still_malformed_after_its_repair_is_reported_and_asked_again_next_time(
        run, llm_server, openai_config):
    trajectory = _failed(run, 4)
    llm_server.queue(Reply("step two"), Reply({"step": 2, "agent": "WebSurfer", "failure_type": "nonsense",
                                               "reason": "x"}))

    report = attribute_by_llm(run, openai_config, llm_methods.ALL_AT_ONCE)

    assert report.attributed == 0
    [error] = report.errors
    assert error["trajectory"] == trajectory.pk
    assert error["error"].startswith("malformed answer after one repair request: failure_type must be one of "
                                     "'misread_task', 'wrong_element'")
    assert not FailureAttribution.objects.exists()

    llm_server.responder = _scripted
    attribute_by_llm(run, openai_config, llm_methods.ALL_AT_ONCE)  # the failed decision is asked again

    assert len(llm_server.requests) == 3
    assert _only(run).step_index == 4  # the scripted model names the last step of a log shorter than DECISIVE


def test_the_llm_sources_stand_beside_the_others_against_the_people(run, scripted, openai_config, annotator):
    first, second = _failed(run, 8, "a"), _failed(run, 8, "b")
    record_failure_annotation(first, annotator, step=6, failure_type="misread_task", agent="WebSurfer")
    record_failure_annotation(second, annotator, step=2, failure_type="looped", agent="Orchestrator")

    attribute_by_llm(run, openai_config, llm_methods.ALL_AT_ONCE)
    attribute_by_llm(run, openai_config, llm_methods.BINARY_SEARCH)

    rows = {row.label: row.result for row in attribution_table(run.pk)}
    whole = rows["LLM all at once (gpt-4o-mini)"]
    # Both name step 6 of the WebSurfer: right on the first trajectory, wrong on the second.
    assert (whole.pairs, whole.exact.value, whole.agent.value, whole.failure_type.value) == (2, 0.5, 0.5, 0.5)
    # Step 6 is 4 away from step 2: within 3 on neither of the second.
    assert (whole.within_1.value, whole.within_3.value) == (0.5, 0.5)
    halves = rows["LLM binary search (gpt-4o-mini)"]
    assert (halves.exact.value, halves.failure_type.value) == (0.5, 0.0)  # its type is navigation_lost
    assert list(rows)[-1] == "Random choice (floor)"


def test_the_run_page_starts_a_job_that_the_page_then_lists(client, run, scripted, openai_config, reviewer,
                                                            django_capture_on_commit_callbacks):
    _failed(run, 8)
    client.force_login(reviewer)

    page = client.get(reverse("metrics:run-detail", args=[run.pk]))
    assert b'id="run-llm-form"' in page.content
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(reverse("failures:run-llm", args=[run.pk]),
                               {"method": "step_by_step", "judge": openai_config.name}, follow=True)

    job = AttributionJob.objects.get()
    assert (job.status, job.method, job.total, job.attributed, job.calls) == ("done", "step_by_step", 1, 1, 6)
    assert "Failure attribution #%d started" % job.pk in response.content.decode()
    assert b'id="attribution-jobs"' in response.content
    assert _only(run).step_index == 6


def test_the_api_starts_a_job_and_reports_it(client, run, scripted, openai_config, reviewer, annotator,
                                             django_capture_on_commit_callbacks):
    _failed(run, 8)
    url = reverse("api-run-attribution", args=[run.pk])
    client.force_login(annotator)
    assert client.post(url, {"method": "all_at_once", "judge": openai_config.name},
                       content_type="application/json").status_code == 403
    client.force_login(reviewer)

    refused = client.post(url, {"method": "sideways", "judge": openai_config.name}, content_type="application/json")
    assert refused.status_code == 400 and "method" in refused.json()["errors"]
    with django_capture_on_commit_callbacks(execute=True):
        created = client.post(url, {"method": "binary_search", "judge": openai_config.name},
                              content_type="application/json")

    assert created.status_code == 201
    job = client.get(reverse("api-attribution-job", args=[created.json()["id"]])).json()
    assert {key: job[key] for key in ("status", "method", "source", "total", "attributed", "calls", "cost")} == {
        "status": "done", "method": "binary_search", "source": "LLM binary search (gpt-4o-mini)", "total": 1,
        "attributed": 1, "calls": 3, "cost": "0.000081"}  # 3 x (100 x $0.15 + 20 x $0.60) / 1M, the default prices
    table = client.get(reverse("api-failure-attribution"), {"run": run.name}).json()
    assert "LLM binary search (gpt-4o-mini)" in [row["label"] for row in table["rows"]]


@pytest.mark.django_db(transaction=True)
def test_the_command_runs_a_method_as_a_job_and_prints_the_table(run, scripted, openai_config, capsys, settings):
    settings.JUDGE_PRICES = {"gpt-4o-mini": {"input": 0.15, "output": 0.60}}  # as the default table has it
    _failed(run, 8)

    call_command("attribute_failures", "--run", "team", "--method", "all_at_once", "--judge", openai_config.name,
                 "--wait")

    out = capsys.readouterr().out
    job = AttributionJob.objects.get()
    # One request of 100 prompt and 20 answer tokens: 100 * 0.15 / 1M + 20 * 0.60 / 1M.
    assert job.cost == Decimal("0.000027")
    assert f"failure attribution #{job.pk} done: 1 attributed, 0 without a decisive step; 1 requests, $0.000027" in out
    assert "LLM all at once (gpt-4o-mini)\t0\t" in out  # no person annotated it: nothing to measure against


def test_an_offline_judge_cannot_attribute(run):
    _failed(run, 2)
    with pytest.raises(CommandError, match="attributing failures needs an OpenAI-compatible one"):
        call_command("attribute_failures", "--run", "team", "--method", "all_at_once", "--judge", "offline")
    assert not AttributionSource.objects.filter(kind=SourceKind.JUDGE).exists()


@pytest.mark.parametrize("method", list(llm_methods.METHODS))
def test_the_local_servers_default_answers_name_the_first_step(run, llm_server, openai_config, method):
    _failed(run, 4)

    attribute_by_llm(run, openai_config, method)

    # All at once and step by step: one request; binary search keeps the first half twice (1-2, then 1).
    assert len(llm_server.requests) == (2 if method == llm_methods.BINARY_SEARCH else 1)
    row = _only(run)
    assert (row.step_index, row.agent, row.failure_type) == (1, "Orchestrator", "misread_task")
