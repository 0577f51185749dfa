import pytest

from judges.selectors import (
    UnknownJudge,
    judge_config_named,
    judge_config_required,
    judge_names,
    judge_step_from_agent,
    judge_step_from_gold,
    reviewed_pairs,
)
from judges.services import review_decision
from tests.factories import GoldStepFactory, JudgeConfigFactory, JudgeDecisionFactory, StepFactory, UserFactory

pytestmark = pytest.mark.django_db


def test_gold_step_keeps_its_structure():
    gold = GoldStepFactory(text="Select the 'Period' dropdown and choose 'Year'.", action_type="select",
                           element_role="combobox", element_name="Period", value="Year")
    step = judge_step_from_gold(gold)
    assert (step.text, step.action_type, step.element_name, step.value) == (gold.text, "select", "Period", "Year")


def test_agent_step_carries_its_observation_and_label():
    step = StepFactory(action="click [723] where [723] is link 'REPORTS'", action_type="click", element_id="723",
                       element_label="link 'REPORTS' url: http://x/#", observation="[723] link 'REPORTS'",
                       action_value="")
    judged = judge_step_from_agent(step)
    assert (judged.text, judged.element_id, judged.element_role, judged.element_name) == (
        step.action, "723", "link", "REPORTS")
    assert judged.observation == "[723] link 'REPORTS'" and judged.url == step.url


def test_judge_config_named_finds_rows_and_backend_names():
    JudgeConfigFactory(name="house", backend="exact")
    assert judge_config_named("house").pk is not None
    builtin = judge_config_named("offline")
    assert (builtin.pk, builtin.backend) == (None, "offline")
    assert judge_config_named("nobody") is None
    assert judge_names() == ["house", "exact", "offline", "openai"]
    with pytest.raises(UnknownJudge, match="no judge named 'nobody'; known: house, exact, offline, openai"):
        judge_config_required("nobody")


def test_reviewed_pairs_compare_every_judge_on_reviewed_questions():
    reviewer = UserFactory()
    offline = JudgeDecisionFactory(inputs_hash="q1", score=0.9, backend="offline", model="rules")
    llm = JudgeDecisionFactory(inputs_hash="q1", score=0.2, backend="openai", model="gpt-4o-mini")
    JudgeDecisionFactory(inputs_hash="q2", score=0.4, backend="offline", model="rules")  # never reviewed
    review_decision(offline, human_score=1.0, reviewer=reviewer)
    JudgeDecisionFactory(kind="trajectory_match", inputs_hash="q3", score=0.5, backend="offline", model="rules",
                         human_score=1.0)
    groups = reviewed_pairs()
    assert {key: [(p.score, p.human_score) for p in pairs] for key, pairs in groups.items()} == {
        ("offline", "rules"): [(0.9, 1.0)],
        ("openai", "gpt-4o-mini"): [(0.2, 1.0)],
    }
    assert groups[("openai", "gpt-4o-mini")][0].reviewed_decision_id == offline.pk
    assert list(reviewed_pairs("openai", "gpt-4o-mini")) == [("openai", "gpt-4o-mini")]
    assert llm.pk == groups[("openai", "gpt-4o-mini")][0].decision_id
