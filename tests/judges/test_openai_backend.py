"""The openai backend against a local OpenAI-compatible server with scripted answers and faults."""

import time
from decimal import Decimal

import pytest

from judges.local_llm import Reply, structured_output_mode
from judges.models import JudgeConfig, JudgeDecision, StructuredOutputMode
from judges.services import get_judge, review_decision, save_judge_config
from judges.steps import JudgeStep
from tests.factories import JudgeConfigFactory, UserFactory

from .conftest import FAST_RETRIES

pytestmark = pytest.mark.django_db

GOLD = JudgeStep("Click on the 'REPORTS' link in the navigation menu.")
AGENT = JudgeStep("click [723] where [723] is link '\\ue60a REPORTS' url: http://localhost:7780/admin/#")
PRICES = {"gpt-4o-mini": {"input": 0.15, "output": 0.60}}


def test_a_decision_records_tokens_cost_and_latency(openai_config, llm_server, settings):
    settings.JUDGE_PRICES = PRICES
    llm_server.queue(Reply({"score": 0.9, "rationale": "Same link."}, prompt_tokens=1000, completion_tokens=200))
    verdict = get_judge(openai_config).step_equivalent(GOLD, AGENT)
    assert (verdict.score, verdict.rationale, verdict.error) == (0.9, "Same link.", "")
    decision = JudgeDecision.objects.get(pk=verdict.decision_id)
    assert (decision.backend, decision.model, decision.calls) == ("openai", "gpt-4o-mini", 1)
    assert (decision.prompt_tokens, decision.completion_tokens) == (1000, 200)
    assert decision.cost == Decimal("0.000270")  # 1000 * 0.15 / 1M + 200 * 0.60 / 1M
    assert decision.prompt_version.startswith("v2-")
    [request] = llm_server.requests
    assert request["temperature"] == 0 and request["model"] == "gpt-4o-mini"
    assert "Evaluation criteria" in request["messages"][0]["content"]
    assert "element: link '\\ue60a REPORTS'" in request["messages"][1]["content"]


def test_asking_again_makes_no_call(openai_config, llm_server):
    judge = get_judge(openai_config)
    first = judge.step_equivalent(GOLD, AGENT)
    second = get_judge(openai_config).step_equivalent(GOLD, AGENT)
    assert second == first
    assert len(llm_server.requests) == 1


@pytest.mark.parametrize(
    "fault",
    [Reply(status=429, headers={"retry-after": "0"}), Reply(status=500), Reply(status=503), Reply(delay=1.5)],
    ids=["429", "500", "503", "timeout"],
)
def test_transient_faults_are_retried(openai_config, llm_server, fault):
    llm_server.queue(fault, fault, Reply({"score": 1, "rationale": "ok"}))
    verdict = get_judge(openai_config).step_equivalent(GOLD, AGENT)
    assert (verdict.score, verdict.error) == (1.0, "")
    assert JudgeDecision.objects.get(pk=verdict.decision_id).calls == 3


def test_retries_are_bounded_and_the_failure_is_recorded(openai_config, llm_server):
    llm_server.queue(*[Reply(status=500)] * 4)
    verdict = get_judge(openai_config).step_equivalent(GOLD, AGENT)
    assert verdict.score is None
    assert verdict.error == "gave up after 4 requests: HTTP 500 (InternalServerError)"
    decision = JudgeDecision.objects.get(pk=verdict.decision_id)
    assert (decision.score, decision.calls, decision.error) == (None, 4, verdict.error)
    # Asked again, a failed decision is retried (and now succeeds) in the same row.
    again = get_judge(openai_config).step_equivalent(GOLD, AGENT)
    assert (again.score, again.decision_id) == (1.0, verdict.decision_id)
    assert len(llm_server.requests) == 5


def test_a_client_error_is_not_retried(openai_config, llm_server):
    llm_server.queue(Reply(status=401))
    verdict = get_judge(openai_config).step_equivalent(GOLD, AGENT)
    assert verdict.score is None and verdict.error == "request refused: HTTP 401 (AuthenticationError)"
    assert len(llm_server.requests) == 1


def test_malformed_json_gets_one_repair_request(openai_config, llm_server):
    llm_server.queue(Reply("Sure! The score is 1."), Reply({"score": 1, "rationale": "Repaired."}))
    verdict = get_judge(openai_config).step_equivalent(GOLD, AGENT)
    assert (verdict.score, verdict.rationale) == (1.0, "Repaired.")
    assert JudgeDecision.objects.get(pk=verdict.decision_id).repairs == 1
    repair = llm_server.requests[1]["messages"]
    assert repair[-2] == {"role": "assistant", "content": "Sure! The score is 1."}
    assert "could not be used" in repair[-1]["content"]


def test_an_answer_still_malformed_after_the_repair_is_an_error(openai_config, llm_server):
    llm_server.queue(Reply("{not json"), Reply({"score": 3, "rationale": "out of range"}))
    verdict = get_judge(openai_config).step_equivalent(GOLD, AGENT)
    assert verdict.score is None
    assert verdict.error == (
        "malformed answer after one repair request: score must be a number from 0 to 1, not 3")
    assert JudgeDecision.objects.get(pk=verdict.decision_id).calls == 2


def test_an_answer_limit_is_sent_and_an_answer_cut_by_it_is_an_error_that_says_so(llm_server):
    config = JudgeConfigFactory(name="bounded", backend="openai", model="m", base_url=llm_server.base_url,
                                options={**FAST_RETRIES, "max_answer_tokens": 30})
    cut = Reply('{"score": 1, "rationale": "The gold step clicks the REPORTS link and the agent', finish_reason="length")
    llm_server.queue(cut, cut)
    verdict = get_judge(config).step_equivalent(GOLD, AGENT)
    assert verdict.score is None
    assert verdict.error.startswith("malformed answer after one repair request: ")
    assert verdict.error.endswith(" (the answer stopped at the limit of 30 tokens)")
    assert [request["max_tokens"] for request in llm_server.requests] == [30, 30]


def test_without_an_answer_limit_none_is_sent(openai_config, llm_server):
    assert get_judge(openai_config).step_equivalent(GOLD, AGENT).error == ""
    assert "max_tokens" not in llm_server.requests[0]


@pytest.mark.parametrize("limit", [-1, 2.5, "100", True])
def test_an_answer_limit_that_is_no_whole_number_of_tokens_is_refused(limit):
    with pytest.raises(ValueError, match=r"options.max_answer_tokens must be a whole number of tokens \(0: no limit\)"):
        save_judge_config(JudgeConfig(name="bad", backend="openai", model="m", options={"max_answer_tokens": limit}))


def test_identical_pairs_never_reach_the_model(openai_config, llm_server):
    judge = get_judge(openai_config)
    verdict = judge.step_equivalent(JudgeStep("Scroll down"), JudgeStep("scroll [down]"))
    repeats = judge.repeat_scores([JudgeStep("click [4]"), JudgeStep("click [4] where [4] is button 'Go'")])
    requirement = judge.requirement_scores("Top product?", "It is the Quest Lumaflex Band", ["quest lumaflex band"])
    assert [verdict.score, repeats[0].score, requirement[0].score] == [1.0, 1.0, 1.0]
    assert llm_server.requests == []
    assert JudgeDecision.objects.get(pk=verdict.decision_id).calls == 0


def test_step_scores_is_one_request_per_trajectory(openai_config, llm_server):
    gold = [JudgeStep("Scroll down"), GOLD, JudgeStep("Click the 'Go' button")]
    agent = [JudgeStep("scroll [down]"), AGENT, JudgeStep("click [9] where [9] is button 'Go'")]
    llm_server.queue(Reply({"pairs": [{"gold": 2, "agent": 2, "score": 1}, {"gold": 3, "agent": 3, "score": 0.8}],
                            "rationale": "Reports and Go match."}))
    scores = get_judge(openai_config).step_scores(gold, agent)
    assert scores.matrix == [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 0.8]]
    [request] = llm_server.requests
    asked = request["messages"][1]["content"]
    assert "2. Click on the 'REPORTS' link" in asked and "1. Scroll down" not in asked  # settled without the model


def test_a_trajectory_answer_naming_unknown_steps_is_malformed(openai_config, llm_server):
    bad = Reply({"pairs": [{"gold": 7, "agent": 1, "score": 1}], "rationale": ""})
    llm_server.queue(bad, bad)
    scores = get_judge(openai_config).step_scores([GOLD], [AGENT])
    assert "pairs[0].gold must be one of the numbers 1, not 7" in scores.error
    assert scores.matrix == [[None]]


def test_groundedness_asks_once_for_both_aspects(openai_config, llm_server):
    llm_server.queue(Reply({"grounded": {"score": 1, "rationale": "Seen in step 2."},
                            "relevant": {"score": 0, "rationale": "Only one of two."}}))
    judge = get_judge(openai_config)
    pages = ["[1] link 'REPORTS'", "[354] cell 'Quest Lumaflex™ Band'"]
    grounded, relevant = judge.grounded_relevant("What are the top-2 products?", "Quest Lumaflex™ Band", pages)
    assert (grounded.score, relevant.score) == (1.0, 0.0)
    assert (grounded.rationale, relevant.rationale) == ("Seen in step 2.", "Only one of two.")
    [request] = llm_server.requests
    assert "[step 2]\n[354] cell 'Quest Lumaflex™ Band'" in request["messages"][1]["content"]
    rows = JudgeDecision.objects.filter(pk__in=[grounded.decision_id, relevant.decision_id]).order_by("pk")
    assert [r.calls for r in rows] == [1, 0]
    again = judge.grounded_relevant("What are the top-2 products?", "Quest Lumaflex™ Band", pages)
    assert again == (grounded, relevant)
    assert len(llm_server.requests) == 1


def test_fuzzy_answer_and_requirements_go_to_the_model(openai_config, llm_server):
    llm_server.queue(Reply({"score": 0.5, "rationale": "Partly."}),
                     Reply({"answers": [{"number": 1, "score": 0, "rationale": "Missing."}]}))
    judge = get_judge(openai_config)
    assert judge.fuzzy_answer("Which?", "Band", "Quest Lumaflex Band").score == 0.5
    assert judge.requirement_scores("Top 2?", "Band", ["Sprite Stasis Ball"])[0].score == 0.0
    assert "Reference answer: Quest Lumaflex Band" in llm_server.requests[0]["messages"][1]["content"]
    assert "Requirements:\n1. Sprite Stasis Ball" in llm_server.requests[1]["messages"][1]["content"]


def _steps(*actions: str) -> list[JudgeStep]:
    return [JudgeStep(action) for action in actions]


def test_the_repetitions_of_a_trajectory_are_one_request_and_one_decision_each(openai_config, llm_server):
    agent = _steps("click [4]", "click [4] where [4] is button 'Go'", "scroll [down]", "click [5]", "click [6]")
    llm_server.queue(Reply({"answers": [{"number": 2, "score": 0, "rationale": "Another button."},
                                        {"number": 1, "score": 0, "rationale": "Scrolled."},
                                        {"number": 3, "score": 0.2, "rationale": "Another link."}]}))
    verdicts = get_judge(openai_config).repeat_scores(agent)
    assert [v.score for v in verdicts] == [1.0, 0.0, 0.0, 0.2]  # the first pair is identical: never sent
    assert [v.rationale for v in verdicts[1:]] == ["Scrolled.", "Another button.", "Another link."]
    [request] = llm_server.requests
    pairs = request["messages"][1]["content"]
    assert ("1. Previous step: click [4] where [4] is button 'Go' (element: button 'Go')\n"
            "   This step: scroll [down]") in pairs
    assert "4. " not in pairs
    rows = JudgeDecision.objects.filter(pk__in=[v.decision_id for v in verdicts[1:]]).order_by("pk")
    assert [(row.kind, row.calls) for row in rows] == [("repetition", 1), ("repetition", 0), ("repetition", 0)]
    assert rows[1].output == {"number": 2, "score": 0.0, "rationale": "Another button.", "asked_with": 2}
    assert get_judge(openai_config).repeat_scores(agent) == verdicts
    assert len(llm_server.requests) == 1


def test_a_human_verdict_on_one_pair_of_a_list_overrides_only_that_pair(openai_config, llm_server):
    agent = _steps("click [1]", "click [2]", "click [3]")
    first = get_judge(openai_config).repeat_scores(agent)
    review_decision(JudgeDecision.objects.get(pk=first[1].decision_id), human_score=0.0, reviewer=UserFactory(),
                    note="Different links.")
    again = get_judge(openai_config).repeat_scores(agent)
    assert [(v.score, v.rationale) for v in again] == [(1.0, "Equivalent."), (0.0, "Different links.")]
    assert len(llm_server.requests) == 1


def test_requirements_of_one_answer_share_requests_of_batch_size(llm_server):
    config = JudgeConfigFactory(name="batches-of-2", backend="openai", model="m", base_url=llm_server.base_url,
                                options={**FAST_RETRIES, "batch_size": 2})
    requirements = ["Sprite", "Quest", "Overnight Duffle", "Yoga"]
    verdicts = get_judge(config).requirement_scores("Which four?", "Lumaflex Band and others", requirements)
    assert [v.score for v in verdicts] == [1.0] * 4
    listed = sorted(r["messages"][1]["content"].split("Requirements:\n")[1] for r in llm_server.requests)
    assert listed == ["1. Overnight Duffle\n2. Yoga", "1. Sprite\n2. Quest"]


@pytest.mark.parametrize(
    "reply, error",
    [
        ({"answers": [{"number": 1, "score": 1, "rationale": ""}]}, "answers must be a list of 2 items, not 1"),
        ({"answers": [{"number": 1, "score": 1}, {"number": 1, "score": 0}]}, "answers[1].number 1 is answered twice"),
        ({"answers": [{"number": 3, "score": 1}, {"number": 1, "score": 1}]},
         "answers[0].number must be a whole number from 1 to 2, not 3"),
        ({"answers": [{"number": 1, "score": 2}, {"number": 2, "score": 0}]}, "answers[0].score must be a number"),
        ({"scores": [1, 0]}, "answers must be a list of 2 items, not missing"),
    ],
)
def test_a_list_answer_must_answer_each_item_once(openai_config, llm_server, reply, error):
    llm_server.queue(Reply(reply), Reply(reply))
    verdicts = get_judge(openai_config).repeat_scores(_steps("click [1]", "click [2]", "click [3]"))
    assert all(v.score is None and error in v.error for v in verdicts)
    assert len(llm_server.requests) == 2  # one repair request, then both pairs fail together


def test_the_local_server_answers_a_trajectory_whose_first_gold_step_was_settled(openai_config, llm_server):
    gold = [JudgeStep("Scroll down"), GOLD]
    scores = get_judge(openai_config).step_scores(gold, [JudgeStep("scroll [down]"), AGENT])
    assert scores.error == ""
    assert scores.matrix == [[1.0, 0.0], [1.0, 0.0]]  # the scripted answer pairs the first gold step asked
    [request] = llm_server.requests
    assert "Gold steps to match:\n2. Click on the 'REPORTS' link" in request["messages"][1]["content"]


def test_concurrency_is_limited_per_process(llm_server):
    config = JudgeConfigFactory(name="two-at-once", backend="openai", model="m", base_url=llm_server.base_url,
                                options={**FAST_RETRIES, "concurrency": 2, "timeout": 5})
    llm_server.delay = 0.05
    gold = [JudgeStep(f"Click the 'Button {n}' button") for n in range(8)]
    verdicts = get_judge(config).step_equivalent_pairs([(g, AGENT) for g in gold])
    assert all(v.score == 1.0 for v in verdicts)
    assert llm_server.max_in_flight == 2


def test_the_rate_limit_spaces_requests(llm_server):
    config = JudgeConfigFactory(name="slow", backend="openai", model="m", base_url=llm_server.base_url,
                                options={**FAST_RETRIES, "requests_per_minute": 600, "burst": 1, "timeout": 5})
    gold = [JudgeStep(f"Click the 'Button {n}' button") for n in range(4)]
    started = time.monotonic()
    get_judge(config).step_equivalent_pairs([(g, AGENT) for g in gold])
    assert time.monotonic() - started >= 0.3  # 4 requests, one every 0.1 s


def test_the_answer_schema_is_sent_as_openai_structured_output(openai_config, llm_server):
    verdict = get_judge(openai_config).step_equivalent(GOLD, AGENT)
    [request] = llm_server.requests
    answer_format = request["response_format"]
    assert answer_format["type"] == "json_schema"
    assert answer_format["json_schema"]["name"] == "step_match" and answer_format["json_schema"]["strict"] is True
    assert answer_format["json_schema"]["schema"]["required"] == ["score", "rationale"]
    decision = JudgeDecision.objects.get(pk=verdict.decision_id)
    assert (decision.structured_output, decision.repairs, decision.coerced) == ("json_schema", 0, [])


def test_auto_finds_the_first_mode_the_endpoint_takes_and_remembers_it(llm_server):
    llm_server.accepts = ("json_object_schema", "json_object", "none")  # as llama.cpp's server
    config = JudgeConfigFactory(name="llama", backend="openai", model="smollm", base_url=llm_server.base_url,
                                options=FAST_RETRIES)
    first = get_judge(config).step_equivalent(GOLD, AGENT)
    assert [structured_output_mode(r) for r in llm_server.requests] == ["json_schema", "json_object_schema"]
    assert llm_server.requests[1]["response_format"]["schema"]["properties"]["rationale"]["maxLength"] == 400
    decision = JudgeDecision.objects.get(pk=first.decision_id)
    assert (decision.structured_output, decision.calls, decision.score) == ("json_object_schema", 2, 1.0)
    assert StructuredOutputMode.objects.get(base_url=llm_server.base_url, model="smollm").mode == "json_object_schema"
    get_judge(config).step_equivalent(JudgeStep("Click the 'Go' button"), AGENT)  # another judge object, same endpoint
    assert structured_output_mode(llm_server.requests[2]) == "json_object_schema" and len(llm_server.requests) == 3


def test_auto_takes_a_server_error_naming_the_response_format_for_a_refusal(llm_server):
    llm_server.accepts, llm_server.refusal_status = ("json_object_schema", "json_object", "none"), 500
    config = JudgeConfigFactory(name="llama-cpp-python", backend="openai", model="smollm",
                                base_url=llm_server.base_url, options=FAST_RETRIES)
    verdict = get_judge(config).step_equivalent(GOLD, AGENT)
    assert [structured_output_mode(r) for r in llm_server.requests] == ["json_schema", "json_object_schema"]
    assert JudgeDecision.objects.get(pk=verdict.decision_id).structured_output == "json_object_schema"


def test_a_mode_given_is_the_only_one_tried(llm_server):
    llm_server.accepts = ("none",)
    config = JudgeConfigFactory(name="fixed", backend="openai", model="m", base_url=llm_server.base_url,
                                options={**FAST_RETRIES, "structured_output": "json_object"})
    verdict = get_judge(config).step_equivalent(GOLD, AGENT)
    assert verdict.error == "request refused: HTTP 400 (BadRequestError)"
    assert [structured_output_mode(r) for r in llm_server.requests] == ["json_object"]
    assert not StructuredOutputMode.objects.exists()


def test_an_unknown_structured_output_mode_is_refused_when_the_configuration_is_saved(llm_server):
    with pytest.raises(ValueError, match="options.structured_output must be one of auto, json_schema, "
                                         "json_object_schema, json_object, none, not 'grammar'"):
        save_judge_config(JudgeConfig(name="bad", backend="openai", model="m",
                                      options={"structured_output": "grammar"}))


def test_an_answer_read_leniently_records_what_was_coerced(openai_config, llm_server):
    llm_server.queue(Reply({"score": "1", "rationale": "Same link."}))
    verdict = get_judge(openai_config).step_equivalent(GOLD, AGENT)
    decision = JudgeDecision.objects.get(pk=verdict.decision_id)
    assert (decision.score, decision.repairs, decision.coerced) == (1.0, 0, ["score: '1' read as 1"])


@pytest.mark.parametrize("first, then", [("none", "json_schema"), ("json_schema", "none"), ("auto", "none")])
def test_an_answer_asked_in_one_structured_output_mode_is_not_served_to_another(llm_server, first, then):
    configs = [JudgeConfigFactory(name=mode, backend="openai", model="m", base_url=llm_server.base_url,
                                  options={**FAST_RETRIES, "structured_output": mode}) for mode in (first, then)]
    verdicts = [get_judge(config).step_equivalent(GOLD, AGENT) for config in configs]
    assert [structured_output_mode(r) for r in llm_server.requests] == [
        "json_schema" if first == "auto" else first, then]
    decisions = JudgeDecision.objects.filter(pk__in=[verdict.decision_id for verdict in verdicts])
    assert sorted(decisions.values_list("structured_output", flat=True)) == sorted(
        {"auto": "json_schema"}.get(mode, mode) for mode in (first, then))
    assert get_judge(configs[0]).step_equivalent(GOLD, AGENT).decision_id == verdicts[0].decision_id
    assert len(llm_server.requests) == 2  # each mode's answer is served again to its own mode
