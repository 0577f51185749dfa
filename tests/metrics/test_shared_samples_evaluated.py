"""Every shared sample of another tool's output imported and evaluated offline, as a researcher would:
each metric is a number its inputs explain (the derivation beside it) or null with its reason.

None of these tasks has gold steps, requirements or a reference answer (they come from the files
or from Online-Mind2Web's task list, which has none), so Step Success, Recovery, Partial Success
and the offline check are null with those reasons everywhere; what differs is what the steps and
answers allow.
"""

import pytest

from metrics.definitions.element_accuracy import BY_COORDINATES, NO_STATED_ACTION
from metrics.definitions.element_accuracy import NO_STEPS as NO_STEPS_TO_CHECK
from metrics.definitions.final_answer import NO_ANSWER, NOT_APPLICABLE, NOT_GROUNDED_KNOWN, NOT_OBSERVED
from metrics.definitions.repetitiveness import NO_STEPS
from metrics.definitions.task_success import NO_REFERENCE
from metrics.services.scoring import NO_GOLD, NO_KEY_NODES
from tests.factories import AgentRunFactory, JudgeConfigFactory
from tests.metrics.reports import evaluate
from trajectories.services.ingest import import_paths

pytestmark = pytest.mark.django_db

NO_HARNESS = f"no verdict from the harness, and {NO_REFERENCE}"
# What no task of these samples has: gold, requirements, a reference answer, key nodes.
ALWAYS = {"step_success": NO_GOLD, "recovery": NO_GOLD, "plan_step_success": NO_GOLD,
          "partial_success": NOT_APPLICABLE, "check_success": NO_REFERENCE, "key_node_completion": NO_KEY_NODES}
NOT_GROUNDABLE = {"grounded": NOT_OBSERVED, "correct": NOT_GROUNDED_KNOWN}
UNANSWERED = {"grounded": NO_ANSWER, "relevant": NO_ANSWER, "correct": NO_ANSWER}


def _scores(*paths, name="sample") -> dict:
    run = AgentRunFactory(name=name)
    assert import_paths(list(paths), run).ok
    job = evaluate(run, JudgeConfigFactory(name="offline", backend="offline"))
    return {score.trajectory.task.task_id: score for score in job.scores.select_related("trajectory__task")}


def _metrics(score) -> dict:
    return {name: getattr(score, name) for name in (
        "step_success", "recovery", "repetitiveness", "element_accuracy", "partial_success", "grounded", "relevant",
        "correct", "success", "check_success", "agent_steps")}


# Online-Mind2Web, ABP's run: per task, n (action_history entries) and the steps that repeat the one
# before by what they did (same kind, a click within 10 px of the last, a scroll the same way):
ABP_REPEATS = {
    # 7, 8: Scroll (0, 400) three times in a row (6-8); 20: Scroll (0, 600) after Scroll (0, 600)
    "0059adc6b12a3822305deb68929b2de8": (24, (7, 8, 20)),
    # 9: Scroll (0, 550) again; 10: Scroll (0, 400), down again
    "005be9dd91c95669d6ddde9ae667125c": (10, (9, 10)),
    # 10: Click at (232, 547) twice
    "0170ca95038b05fa58d463fe627ac605": (21, (10,)),
    # 8: Click at (1150, 397) after (1150, 396): 1 px apart
    "01abae9608f2d8752a83e08f136f720c": (14, (8,)),
    # 7: Scroll (0, 2000) after Scroll (0, 3000), both down; 9: Click at (434, 232) after (444, 232): 10 px
    "046138801a05ddf56ad94e8672942496": (16, (7, 9)),
    # 17: Scroll (0, 600) again; 18: Scroll (0, 400), down again
    "05483c50cc9b04c8ac44c574758fb2bd": (21, (17, 18)),
    # 12, 13: Scroll (0, 600) three times (11-13)
    "0632e496d37badee0350dad358f047c5": (18, (12, 13)),
    "070c907d34a4ce71dfdbea38f9c5d4d8": (14, ()),
    "07bdc595306729a028ba06cc7451a80a": (13, ()),
    # 10-12: four scrolls down in a row (500, 500, 600, 600)
    "07ec4a12cba8090e2dc524d558ac7675": (13, (10, 11, 12)),
    # 10: Click at (339, 221) twice; 18-21: five Scroll (0, 600); 29: the same drag from (1100, 500) again
    "0a0fa834ce41b5297c6474293383759d_110325": (31, (10, 18, 19, 20, 21, 29)),
    # 9-11: four scrolls down (400, 400, 400, 500)
    "0a54069a0ef542e571d1fee7f39c93d5": (16, (9, 10, 11)),
    # 12: down after down (100, 200); 16, 17: (150, 150, 100); 28: up after up (-300, -500); 35: (150, 200)
    "0b2623e9fa5cea997f76490bcbc5220f": (35, (12, 16, 17, 28, 35)),
    # 7: Click at (128, 239) after (130, 239); 9: (113, 239) after (111, 239)
    "0b51b4fa0295ae80ccd176ebdad6fff6": (19, (7, 9)),
    # 3, 4: Click at (973, 761) three times; 21, 25, 26: Scroll (0, 500) pairs; 29-33: six Scroll (0, 600)
    "0b838cd54f826c59c71f600c56b89a11": (39, (3, 4, 21, 25, 26, 29, 30, 31, 32, 33)),
}


def test_abp_a_computer_use_agent(shared_data):
    scores = _scores(shared_data / "agent-outputs" / "online-mind2web" / "abp_run", name="abp")
    assert set(scores) == set(ABP_REPEATS)
    for task_id, (n, repeated) in ABP_REPEATS.items():
        score = scores[task_id]
        assert score.agent_steps == n, task_id
        assert score.details["repetitiveness"]["repeated_steps"] == list(repeated), task_id
        # Repetitiveness = 1 - r / n, e.g. 0059...: 1 - 3 / 24 = 0.875.
        assert score.repetitiveness == pytest.approx(1 - len(repeated) / n), task_id
        # Clicks at points with no element recorded, no screenshots (the sample keeps none), no planned
        # action: Element Accuracy null, where it was 0.000 on every trajectory before.
        assert score.element_accuracy is None, task_id
        # No page text at all: groundedness unknown, and so correct = grounded and relevant.
        assert (score.grounded, score.correct) == (None, None), task_id
    # Mean Repetitiveness over the 15: (sum of 1 - r_i / n_i) / 15 = 13.1082... / 15 = 0.8739 (0.92 before,
    # when exact action strings were compared: 3 scrolls down by different amounts were no repeat).
    mean = sum(score.repetitiveness for score in scores.values()) / 15
    assert mean == pytest.approx(0.87388, abs=1e-5)
    answered = scores["0059adc6b12a3822305deb68929b2de8"]
    # Relevant: the offline judge's form check (the answer does not decline; the task asks no number).
    assert answered.relevant is True and answered.success is None
    assert answered.details["null_reasons"] == {
        **ALWAYS, "element_accuracy": BY_COORDINATES, **NOT_GROUNDABLE, "success": NO_HARNESS}
    # error_max_turns: the session ran out of turns with no final answer.
    stopped = scores["0b2623e9fa5cea997f76490bcbc5220f"]
    assert (stopped.outcome_status, stopped.outcome_reason) == ("early_stop", "max_steps")
    assert stopped.details["null_reasons"] == {
        **ALWAYS, "element_accuracy": BY_COORDINATES, **UNANSWERED, "success": NO_HARNESS}


def test_browser_use_cloud_results_without_steps(shared_data):
    scores = _scores(shared_data / "agent-outputs" / "online-mind2web" / "browser_use_cloud", name="cloud")
    assert len(scores) == 15
    for task_id, score in scores.items():
        # n = 0: the runner kept the final answer and its judge's score, no steps (METRICS.md 7: crashed).
        assert _metrics(score) == {
            "step_success": None, "recovery": None, "repetitiveness": None, "element_accuracy": None,
            "partial_success": None, "grounded": None, "relevant": True, "correct": None, "success": None,
            "check_success": None, "agent_steps": 0}, task_id
        assert score.outcome_status == "crashed"
        assert score.details["null_reasons"] == {
            **ALWAYS, "repetitiveness": NO_STEPS, "element_accuracy": NO_STEPS_TO_CHECK, **NOT_GROUNDABLE,
            "success": NO_HARNESS}, task_id


def test_webvoyager_set_of_marks_agent(shared_data):
    [score] = _scores(shared_data / "agent-outputs" / "webvoyager" / "taskGitHub--0").values()
    assert _metrics(score) == {
        "step_success": None, "recovery": None,
        # Click [5], Type [0]; ..., Click [29], Click [52], ANSWER: each neighbour another kind or mark: r = 0.
        "repetitiveness": 1.0,
        "element_accuracy": None, "partial_success": None,
        # "resource-watch/resource-watch" and "63" are in step 5's list of marked elements ([31], [38]).
        "grounded": True, "relevant": True, "correct": True,
        "success": None, "check_success": None, "agent_steps": 5}
    assert score.details["null_reasons"] == {**ALWAYS, "element_accuracy": NO_STATED_ACTION, "success": NO_HARNESS}


def test_agentlab_episodes(shared_data):
    scores = _scores(shared_data / "agent-outputs" / "browsergym-agentlab")
    dialog, boxes = scores["click-dialog_28"], scores["click-checkboxes_7"]
    # click('20'): n = 1 -> 1.0 (METRICS.md 3). click('27'), click('33'): other elements, r = 0 -> 1.0.
    assert (dialog.repetitiveness, boxes.repetitiveness) == (1.0, 1.0)
    for score in (dialog, boxes):
        # MiniWoB answers nothing (no send_msg_to_user); the reward (cum_reward 1.0 > 0) is the harness's.
        assert (score.success, score.success_source, score.element_accuracy) == (True, "harness", None)
        assert score.details["null_reasons"] == {**ALWAYS, "element_accuracy": NO_STATED_ACTION, **UNANSWERED}


def test_browser_use_legacy_history(shared_data):
    [score] = _scores(shared_data / "agent-outputs" / "browser-use" / "legacy-2024-11").values()
    assert _metrics(score) == {
        "step_success": None, "recovery": None,
        # search_google, click_element 40, click_element 97, done: no neighbour does the same. r = 0.
        "repetitiveness": 1.0,
        "element_accuracy": None, "partial_success": None,
        # "Elon Musk" and "Wikipedia" are on the pages of steps 2-4.
        "grounded": True, "relevant": True, "correct": True,
        "success": None, "check_success": None, "agent_steps": 4}
    assert score.details["null_reasons"] == {**ALWAYS, "element_accuracy": NO_STATED_ACTION, "success": NO_HARNESS}


def test_webarena_infinity_browser_use_task(shared_data):
    folder = shared_data / "agent-outputs" / "browser-use" / "webarena-infinity-gmail" / "task_e1"
    [score] = _scores(folder).values()
    assert _metrics(score) == {
        "step_success": None, "recovery": None,
        # navigate, click 459 (the star, at (310, 179.5)), done: r = 0.
        "repetitiveness": 1.0,
        "element_accuracy": None, "partial_success": None,
        # Sarah Chen, Q1 Product Roadmap Review ... are on the inbox page the agent read.
        "grounded": True, "relevant": True, "correct": True,
        # The WebArena-Infinity verifier passed it (result.json: passed true).
        "success": True, "check_success": None, "agent_steps": 3}
    assert score.success_source == "harness"
    assert score.details["null_reasons"] == {**ALWAYS, "element_accuracy": NO_STATED_ACTION}
