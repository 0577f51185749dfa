import pytest
from django.test import override_settings

import judges
from judges import questions as q
from judges.answers import Answer
from judges.backends import BackendSpec
from judges.backends.exact import ExactBackend
from judges.models import JudgeConfig, JudgeDecision
from judges.services import (
    Judge,
    default_judge_config,
    get_judge,
    judge_identity,
    review_decision,
    review_step_pair,
)
from judges.steps import JudgeStep
from tests.factories import JudgeConfigFactory, UserFactory

pytestmark = pytest.mark.django_db

GOLD = [JudgeStep("Scroll down"), JudgeStep("Click the 'Go' button")]
AGENT = [JudgeStep("click [4] where [4] is button 'Go'"), JudgeStep("scroll [down]")]


class CountingExact(ExactBackend):
    """The exact backend, counting the questions it is asked."""

    def __init__(self, spec):
        super().__init__(spec)
        self.asked = []

    def answer(self, questions):
        self.asked += questions
        return super().answer(questions)


class FailingOnce(ExactBackend):
    """Fails every question the first time it is asked, then answers."""

    def __init__(self, spec):
        super().__init__(spec)
        self.failed = False

    def answer(self, questions):
        if not self.failed:
            self.failed = True
            return [Answer.failed("HTTP 500 (InternalServerError)", calls=5) for _ in questions]
        return super().answer(questions)


@pytest.fixture
def counting():
    return Judge(CountingExact(BackendSpec("exact")))


def test_get_judge_is_importable_from_the_app():
    assert judges.get_judge is get_judge


def test_get_judge_uses_the_default_row_then_the_settings():
    with override_settings(JUDGE_BACKEND="exact"):
        assert get_judge().backend.name == "exact"
        assert not JudgeConfig.objects.exists()
    JudgeConfigFactory(name="house-llm", backend="openai", model="m", base_url="http://127.0.0.1:9/v1",
                       is_default=True)
    assert get_judge().backend.name == "openai"
    assert get_judge(JudgeConfigFactory(name="strict", backend="exact")).backend.name == "exact"


def test_default_judge_config_saves_the_settings_judge_once():
    with override_settings(JUDGE_BACKEND="openai", JUDGE_MODEL="gpt-4o-mini"):
        first, second = default_judge_config(), default_judge_config()
    assert first.pk == second.pk
    assert (first.name, first.backend, first.model) == ("openai-gpt-4o-mini", "openai", "gpt-4o-mini")


def test_unknown_backend_is_a_clear_error():
    with pytest.raises(ValueError, match="unknown judge backend 'gpt'"):
        get_judge(JudgeConfig(name="x", backend="gpt"))


def test_judge_identity_follows_backend_and_model():
    offline = judge_identity(JudgeConfig(name="a", backend="offline"))
    assert offline.startswith("offline:rules+minilm:")
    assert judge_identity(JudgeConfig(name="b", backend="openai", model="m1")) != judge_identity(
        JudgeConfig(name="c", backend="openai", model="m2"))


def test_decisions_are_stored_and_asking_again_asks_no_backend(counting):
    first = counting.step_equivalent(GOLD[0], AGENT[1])
    assert first.score == 1.0 and first.error == ""
    decision = JudgeDecision.objects.get(pk=first.decision_id)
    assert (decision.kind, decision.backend, decision.prompt_version) == ("step_match", "exact", "exact-1")
    assert decision.inputs["agent"]["text"] == "scroll [down]"
    assert decision.cache_key == q.step_match(GOLD[0], AGENT[1]).cache_key("exact", "", "exact-1")
    again = counting.step_equivalent(GOLD[0], AGENT[1])
    assert again == first
    assert len(counting.backend.asked) == 1
    assert JudgeDecision.objects.count() == 1


def test_a_batch_asks_each_distinct_question_once(counting):
    verdicts = counting.step_equivalent_pairs([(GOLD[0], AGENT[1]), (GOLD[0], AGENT[1]), (GOLD[1], AGENT[0])])
    assert [v.score for v in verdicts] == [1.0, 1.0, 0.0]
    assert verdicts[0].decision_id == verdicts[1].decision_id
    assert len(counting.backend.asked) == 2


def test_step_scores_is_one_trajectory_decision(counting):
    scores = counting.step_scores(GOLD, AGENT)
    assert scores.matrix == [[0.0, 1.0], [0.0, 0.0]]
    [decision] = JudgeDecision.objects.filter(pk__in=scores.decision_ids)
    assert decision.kind == "trajectory_match"
    assert counting.step_scores(GOLD, AGENT) == scores
    assert len(counting.backend.asked) == 1
    assert counting.step_scores([], AGENT).matrix == []
    assert counting.step_scores(GOLD, []).matrix == [[], []]


def test_a_human_verdict_on_a_pair_replaces_its_cell(counting):
    scores = counting.step_scores(GOLD, AGENT)
    reviewer = UserFactory()
    pair = review_step_pair(JudgeDecision.objects.get(pk=scores.decision_ids[0]), 2, 1, human_score=1.0,
                            reviewer=reviewer, note="Same Go button.")
    assert (pair.kind, pair.score, pair.human_score) == ("step_match", 0.0, 1.0)
    overruled = counting.step_scores(GOLD, AGENT)
    assert overruled.matrix == [[0.0, 1.0], [1.0, 0.0]]
    assert pair.pk in overruled.decision_ids
    # The same question asked pairwise, by any judge, gets the human verdict without asking.
    verdict = counting.step_equivalent(GOLD[1], AGENT[0])
    assert (verdict.score, verdict.decision_id, verdict.rationale) == (1.0, pair.pk, "Same Go button.")
    offline = get_judge(JudgeConfig(name="offline", backend="offline"))
    assert offline.step_equivalent(GOLD[1], AGENT[0]).score == 1.0
    with pytest.raises(ValueError, match="no pair gold 3"):
        review_step_pair(JudgeDecision.objects.get(pk=scores.decision_ids[0]), 3, 1, human_score=1, reviewer=reviewer)


def test_review_decision_is_the_effective_score(counting):
    verdict = counting.fuzzy_answer("Which product?", "Quest Lumaflex Band", "Quest Lumaflex™ Band")
    decision = JudgeDecision.objects.get(pk=verdict.decision_id)
    review_decision(decision, human_score=0.0, reviewer=UserFactory())
    decision.refresh_from_db()
    assert decision.effective_score == 0.0 and decision.score == 1.0
    assert counting.fuzzy_answer("Which product?", "Quest Lumaflex Band", "Quest Lumaflex™ Band").score == 0.0
    with pytest.raises(ValueError):
        review_decision(decision, human_score=2, reviewer=None)


def test_a_failed_decision_is_stored_with_its_error_and_asked_again():
    judge = Judge(FailingOnce(BackendSpec("exact")))
    failed = judge.step_equivalent(GOLD[0], AGENT[1])
    assert failed.score is None and "HTTP 500" in failed.error
    row = JudgeDecision.objects.get(pk=failed.decision_id)
    assert (row.score, row.calls) == (None, 5)
    scores = judge.step_scores(GOLD, AGENT)
    assert scores.error == "" and scores.matrix[0][1] == 1.0
    retried = judge.step_equivalent(GOLD[0], AGENT[1])
    assert (retried.score, retried.error, retried.decision_id) == (1.0, "", failed.decision_id)


def test_failed_step_scores_report_the_error_not_zeros():
    judge = Judge(FailingOnce(BackendSpec("exact")))
    scores = judge.step_scores(GOLD, AGENT)
    assert scores.error and scores.matrix == [[None, None], [None, None]]


def test_every_question_kind(counting):
    repeats = counting.repeat_scores([AGENT[1], JudgeStep("scroll [down]"), AGENT[0]])
    assert [v.score for v in repeats] == [1.0, 0.0]
    requirements = counting.requirement_scores("Top 2?", "Quest Lumaflex Band, Sprite Stasis Ball",
                                               ["Sprite Stasis Ball", "Overnight Duffle"])
    assert [v.score for v in requirements] == [1.0, 0.0]
    grounded, relevant = counting.grounded_relevant("Top 1?", "Quest Lumaflex Band", ["[1] cell 'Quest Lumaflex Band'"])
    assert (grounded.score, relevant.score) == (1.0, 1.0)
    assert grounded.decision_id != relevant.decision_id
    assert counting.repeat_scores([AGENT[0]]) == []


def test_a_settled_batch_is_answered_from_memory(counting, django_assert_num_queries):
    repeated = [AGENT[1], JudgeStep("scroll [down]"), AGENT[0]]
    counting.settle([q.trajectory_match(GOLD, AGENT), *q.repetitions(repeated),
                     *q.answer_quality("Top 1?", "Go", ["[1] button 'Go'"])])
    assert len(counting.backend.asked) == 5
    with django_assert_num_queries(0):
        scores = counting.step_scores(GOLD, AGENT)
        repeats = counting.repeat_scores(repeated)
        grounded, relevant = counting.grounded_relevant("Top 1?", "Go", ["[1] button 'Go'"])
    assert scores.matrix == [[0.0, 1.0], [0.0, 0.0]]
    assert [v.score for v in repeats] == [1.0, 0.0] and (grounded.score, relevant.score) == (1.0, 1.0)
    assert len(counting.backend.asked) == 5
    # Questions outside the batch are still answered, from the store or the backend.
    assert counting.fuzzy_answer("Which?", "Go", "Go").score == 1.0
    assert len(counting.backend.asked) == 6


def test_a_settled_batch_uses_human_verdicts_on_single_pairs(counting, django_assert_num_queries):
    scores = counting.step_scores(GOLD, AGENT)
    review_step_pair(JudgeDecision.objects.get(pk=scores.decision_ids[0]), 2, 1, human_score=1.0,
                     reviewer=UserFactory())
    judge = Judge(counting.backend)
    judge.settle([q.trajectory_match(GOLD, AGENT)])
    with django_assert_num_queries(0):
        assert judge.step_scores(GOLD, AGENT).matrix == [[0.0, 1.0], [1.0, 0.0]]


def test_a_question_that_failed_in_its_batch_is_retried_by_the_next_batch():
    backend = FailingOnce(BackendSpec("exact"))
    judge = Judge(backend)
    judge.settle([q.step_match(GOLD[0], AGENT[1])])
    assert "HTTP 500" in judge.step_equivalent(GOLD[0], AGENT[1]).error  # not asked again in the batch
    assert Judge(backend).step_equivalent(GOLD[0], AGENT[1]).score == 1.0


class RacedByAnotherWorker(ExactBackend):
    """Answers, after another worker stored its own decision for the first question it is asked."""

    raced = False

    def answer(self, questions):
        if self.raced:
            return super().answer(questions)
        self.raced = True
        key = questions[0].cache_key(self.name, self.model, self.version(questions[0].kind))
        JudgeDecision.objects.create(kind=questions[0].kind, cache_key=key, inputs_hash=questions[0].inputs_hash,
                                     inputs=questions[0].inputs, score=0.5, rationale="the other worker's",
                                     backend=self.name, model=self.model)
        return super().answer(questions)


def test_a_decision_stored_meanwhile_by_another_worker_is_kept_and_the_others_are_stored():
    judge = Judge(RacedByAnotherWorker(BackendSpec("exact")))
    raced, new = judge.step_equivalent_pairs([(GOLD[0], AGENT[1]), (GOLD[1], AGENT[0])])
    assert (raced.score, raced.rationale) == (0.5, "the other worker's")
    stored = JudgeDecision.objects.get(pk=new.decision_id)
    assert (new.score, stored.score, stored.rationale) == (0.0, 0.0, new.rationale)
    assert JudgeDecision.objects.count() == 2
    matrix = judge.step_scores(GOLD, AGENT)
    assert JudgeDecision.objects.get(pk=matrix.decision_ids[0]).output["matrix"] == matrix.matrix


def test_a_settled_judge_reads_every_human_verdict_past_the_first_page(counting, monkeypatch):
    from judges import services

    monkeypatch.setattr(services, "VERDICTS_PAGE", 2)
    pairs = [(GOLD[0], AGENT[0]), (GOLD[0], AGENT[1]), (GOLD[1], AGENT[0])]
    reviewer = UserFactory()
    for verdict in counting.step_equivalent_pairs(pairs):
        review_decision(JudgeDecision.objects.get(pk=verdict.decision_id), human_score=0.25, reviewer=reviewer)
    judge = Judge(counting.backend)
    questions = [q.step_match(gold, agent) for gold, agent in pairs]
    judge.settle(questions)
    assert [verdict.score for verdict in judge.verdicts(questions)] == [0.25, 0.25, 0.25]
