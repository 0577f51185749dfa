from judges import outcome_questions
from judges import questions as q
from judges.models import DecisionKind
from judges.steps import JudgeStep


def test_question_kinds_are_the_models_decision_kinds():
    assert set(q.KINDS) | set(outcome_questions.KINDS) == set(DecisionKind.values)


def test_inputs_hash_ignores_the_judge_and_cache_key_does_not():
    question = q.step_match(JudgeStep("Scroll down"), JudgeStep("scroll [down]"))
    same = q.step_match(JudgeStep("Scroll down"), JudgeStep("scroll [down]"))
    assert question.inputs_hash == same.inputs_hash
    keys = {
        question.cache_key("offline", "rules", "offline-1"),
        question.cache_key("openai", "gpt-4o-mini", "v1-aaaa"),
        question.cache_key("openai", "gpt-4o-mini", "v2-bbbb"),
        question.cache_key("openai", "gpt-4.1", "v1-aaaa"),
    }
    assert len(keys) == 4
    assert q.step_match(JudgeStep("Scroll up"), JudgeStep("scroll [down]")).inputs_hash != question.inputs_hash


def test_agent_steps_enter_questions_resolved_and_without_their_tree():
    tree = "Tab 0 (current): Shop\n[7] link 'My Account' url: http://shop/account"
    inputs = q.step_inputs(JudgeStep("click [7]", observation=tree))
    assert inputs == {"text": "click [7]", "action_type": "", "element_role": "link",
                      "element_name": "My Account", "value": ""}


def test_observations_are_cut_newest_first_within_the_budget():
    long_page = "H" * q.OBSERVATION_HEAD + "M" * 50_000 + "T" * q.OBSERVATION_TAIL
    pages = [f"page {n} " + long_page for n in range(1, 11)] + ["", "last page", "last page"]
    kept = q.truncate_observations(pages)
    assert kept[-1] == {"step": 13, "text": "last page"}  # the repeat at step 12 is skipped
    assert [o["step"] for o in kept] == sorted(o["step"] for o in kept)
    assert sum(len(o["text"]) for o in kept) <= q.OBSERVATIONS_BUDGET
    assert all("characters cut" in o["text"] for o in kept[:-1])
    assert kept[0]["step"] > 1  # the oldest pages did not fit
    assert kept[-2]["text"].endswith("T" * q.OBSERVATION_TAIL)
