import re
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from judges.local_llm import Reply
from judges.services import review_decision
from tests.factories import JudgeDecisionFactory, UserFactory

pytestmark = pytest.mark.django_db


def run(*args) -> str:
    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def test_judge_check_offline_needs_no_network_or_rows():
    output = run("judge_check", "--judge", "offline")
    assert "backend offline, model rules+minilm" in output
    summary = re.search(r"^12 questions in [\d.]+ s: (\d+) agree with the expected answer, 0 failed", output, re.M)
    assert summary and int(summary.group(1)) >= 10


def test_judge_check_reports_latency_cost_and_failures(openai_config, llm_server):
    output = run("judge_check", "--judge", openai_config.name, "--pairs", "2")
    assert "backend openai, model gpt-4o-mini" in output and " ms " in output and "$" in output
    llm_server.responder = lambda request: Reply(status=500)
    with pytest.raises(CommandError, match="questions failed"):
        run("judge_check", "--judge", openai_config.name, "--pairs", "2")


def test_judge_check_unknown_judge():
    with pytest.raises(CommandError, match="no judge named 'gpt5'"):
        run("judge_check", "--judge", "gpt5")


def test_calibrate_judge_on_human_reviewed_decisions():
    reviewer = UserFactory()
    for n, (score, human) in enumerate([(0.9, 1), (0.8, 1), (0.75, 0), (0.2, 0), (0.1, 0), (0.6, 1)]):
        decision = JudgeDecisionFactory(inputs_hash=f"h{n}", score=score, backend="offline", model="rules+minilm")
        review_decision(decision, human_score=human, reviewer=reviewer)
    output = run("calibrate_judge", "--judge", "offline")
    assert "all                  6     66.7%     66.7%     66.7%   0.333" in output
    assert "step_match           6" in output
    assert "best threshold 0.600: accuracy 83.3%" in output
    from judges.calibration import format_interval, kappa_interval

    interval = format_interval(kappa_interval([(0.9, 1), (0.8, 1), (0.75, 0), (0.2, 0), (0.1, 0), (0.6, 1)]))
    assert re.search(r"^all +6 .* 0\.333 +" + re.escape(interval) + "$", output, re.M)
    assert "kappa 95% CI: percentile bootstrap, 2000 resamples, seed 0" in output
    assert "not trusted yet: 6 human confirmations (fewer than 50); Cohen's kappa interval" in output


def test_calibrate_judge_without_reviews_says_what_to_do():
    with pytest.raises(CommandError, match="no human-confirmed decisions"):
        run("calibrate_judge", "--judge", "exact")


def test_calibrate_judge_on_the_labelled_pairs():
    output = run("calibrate_judge", "--judge", "exact", "--pairs", "fixtures/judge_pairs.json")
    assert "observed" in output and "constructed" in output and "gold_versions" in output
    assert "best threshold" in output


def test_calibrate_judge_on_one_split_of_the_mutated_pairs():
    output = run("calibrate_judge", "--judge", "offline", "--pairs", "fixtures/judge_pairs_mutated.json")
    assert re.search(r"^tune +\d{3} ", output, re.M) and re.search(r"^test +\d{3} ", output, re.M)
    output = run("calibrate_judge", "--judge", "offline", "--pairs", "fixtures/judge_pairs_mutated.json",
                 "--split", "test")
    assert not re.search(r"^tune ", output, re.M) and "apostrophe inside single quotes" in output
