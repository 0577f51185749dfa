"""Who may start or change an evaluation, with which gold, and which judge decisions they read
(`metrics.permissions`), asked directly."""

import pytest
from django.contrib.auth.models import AnonymousUser

from accounts.roles import ADMIN, ANNOTATOR, REVIEWER
from metrics.permissions import can_change_evaluation, can_evaluate, may_use_gold_policy, visible_decisions
from tests.annotation.test_permissions import _fast_password_hashing, gold, user  # noqa: F401 - a fixture
from tests.factories import (AgentRunFactory, EvaluationJobFactory, JudgeDecisionFactory, TaskFactory,
                             TrajectoryFactory, TrajectoryScoreFactory)

pytestmark = pytest.mark.django_db


def test_runs_are_evaluated_by_reviewers_or_by_whoever_uploaded_them_all():
    ann, bob, rita = user("ann", ANNOTATOR), user("bob", ANNOTATOR), user("rita", REVIEWER)
    anns, bobs, nobodys = AgentRunFactory(uploaded_by=ann), AgentRunFactory(uploaded_by=bob), AgentRunFactory()

    assert can_evaluate(ann, [anns]) and not can_evaluate(ann, [anns, bobs]) and not can_evaluate(ann, [nobodys])
    assert can_evaluate(rita, [anns, bobs, nobodys]) and can_evaluate(user("adam", ADMIN), [nobodys])
    assert not can_evaluate(AnonymousUser(), [nobodys])  # a run of nobody's: uploaded_by None == pk None


def test_gold_other_than_the_reference_is_a_reviewers_choice():
    ann, rita = user("ann", ANNOTATOR), user("rita", REVIEWER)
    assert may_use_gold_policy(ann, "reference") and not may_use_gold_policy(ann, "each")
    assert may_use_gold_policy(rita, "each") and may_use_gold_policy(rita, "annotator")


def test_an_evaluation_is_changed_by_who_may_evaluate_its_runs_with_its_gold():
    ann, rita = user("ann", ANNOTATOR), user("rita", REVIEWER)
    job = EvaluationJobFactory(gold_policy="reference")
    job.runs.add(AgentRunFactory(uploaded_by=ann))
    other_gold = EvaluationJobFactory(gold_policy="each")
    other_gold.runs.add(AgentRunFactory(uploaded_by=ann))

    assert can_change_evaluation(ann, job) and not can_change_evaluation(ann, other_gold)
    assert can_change_evaluation(rita, other_gold)
    assert not can_change_evaluation(user("bob", ANNOTATOR), job)


def test_decisions_holding_gold_text_follow_the_gold_they_were_scored_against():
    ann, bob = user("ann", ANNOTATOR), user("bob", ANNOTATOR)
    task = TaskFactory(task_id="1")
    anns_draft, bobs_draft = gold(task, ann, "draft"), gold(task, bob, "draft")
    on_anns = JudgeDecisionFactory(kind="step_match")
    on_bobs = JudgeDecisionFactory(kind="trajectory_match")
    unused = JudgeDecisionFactory(kind="step_match")  # e.g. two annotators' gold compared for agreement
    open_kind = JudgeDecisionFactory(kind="groundedness")  # agent and task data only
    trajectory = TrajectoryFactory(task=task)
    TrajectoryScoreFactory(trajectory=trajectory, gold=anns_draft).decisions.add(on_anns)
    TrajectoryScoreFactory(trajectory=trajectory, gold=bobs_draft).decisions.add(on_bobs)

    assert set(visible_decisions(ann)) == {on_anns, open_kind}
    assert set(visible_decisions(bob)) == {on_bobs, open_kind}
    assert set(visible_decisions(user("rita", REVIEWER))) == {on_anns, on_bobs, unused, open_kind}
    assert set(visible_decisions(AnonymousUser())) == set()
    assert set(visible_decisions(ann, type(on_anns).objects.filter(pk=on_bobs.pk))) == set()
