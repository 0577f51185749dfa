import hashlib

import pytest
from django.core.exceptions import PermissionDenied
from django.urls import reverse

from annotation.selectors import AuditFilters, audit_queue, judge_quality, reviewed_decisions
from annotation.services.judge_audit import audit_decision
from judges.models import JudgeConfig, JudgeDecision
from judges.selectors import audit_sample_key, in_audit_sample
from judges.services import get_judge
from judges.steps import JudgeStep
from metrics.selectors.jobs_and_scores import with_uses
from tests.factories import JudgeDecisionFactory, TrajectoryScoreFactory, UserFactory

pytestmark = pytest.mark.django_db

EXACT = JudgeConfig(name="exact", backend="exact")


def _decision(score: float, gold: str = "Scroll down", agent: str = "scroll [down]", **fields) -> JudgeDecision:
    inputs = {"gold": {"text": gold, "action_type": "", "element_role": "", "element_name": "", "value": ""},
              "agent": {"text": agent, "action_type": "", "element_role": "", "element_name": "", "value": ""}}
    digest = hashlib.sha256(f"{gold}|{agent}".encode()).hexdigest()
    return JudgeDecisionFactory(inputs=inputs, inputs_hash=digest, score=score, **fields)


@pytest.mark.parametrize(("score", "verdict", "human"), [
    (0.9, "confirm", 1.0), (0.9, "overrule", 0.0), (0.2, "confirm", 0.0), (0.2, "overrule", 1.0), (0.7, "confirm", 1.0),
])
def test_confirm_and_overrule_store_the_humans_verdict(reviewer, score, verdict, human):
    decision = _decision(score)

    stored = audit_decision(decision.pk, reviewer=reviewer, verdict=verdict, note=" checked ")

    assert (stored.pk, stored.human_score, stored.reviewed_by, stored.human_note) == (decision.pk, human, reviewer,
                                                                                     "checked")
    assert stored.effective_score == human


def test_audit_rules(annotator, reviewer):
    decision = _decision(0.5)
    with pytest.raises(PermissionDenied):
        audit_decision(decision.pk, reviewer=annotator, verdict="confirm")
    with pytest.raises(ValueError, match="verdict must be one of confirm, overrule"):
        audit_decision(decision.pk, reviewer=reviewer, verdict="maybe")
    failed = JudgeDecisionFactory(score=None, error="timeout")
    with pytest.raises(ValueError, match="failed \\(timeout\\)"):
        audit_decision(failed.pk, reviewer=reviewer, verdict="confirm")


def test_an_overruled_cell_is_used_when_the_trajectory_is_scored_again(reviewer):
    judge = get_judge(EXACT)
    gold = [JudgeStep("Click on the 'REPORTS' link"), JudgeStep("Scroll down")]
    agent = [JudgeStep("click [12] where [12] is link 'REPORTS'"), JudgeStep("Scroll down")]
    first = judge.step_scores(gold, agent)
    assert first.matrix == [[0.0, 0.0], [0.0, 1.0]]
    trajectory_decision = JudgeDecision.objects.get(pk=first.decision_ids[0])

    with pytest.raises(ValueError, match="name a gold step and an agent step"):
        audit_decision(trajectory_decision.pk, reviewer=reviewer, verdict="overrule")
    pair = audit_decision(trajectory_decision.pk, reviewer=reviewer, verdict="overrule", gold_step=1, agent_step=1,
                          note="Same link.")

    assert (pair.kind, pair.score, pair.human_score) == ("step_match", 0.0, 1.0)
    again = judge.step_scores(gold, agent)
    assert again.matrix == [[1.0, 0.0], [0.0, 1.0]]
    assert pair.pk in again.decision_ids


def test_the_queue_puts_the_most_uncertain_first_and_skips_answered_questions(reviewer):
    sure = _decision(1.0, gold="a", agent="a")
    unsure = _decision(0.65, gold="b", agent="c")
    middling = _decision(0.4, gold="d", agent="e")
    answered = _decision(0.9, gold="f", agent="g")
    _decision(0.9, gold="f", agent="g", backend="exact", cache_key="x" * 64)  # same question, another judge
    audit_decision(answered.pk, reviewer=reviewer, verdict="confirm")
    TrajectoryScoreFactory(trajectory__run__name="gpt4-run", trajectory__task__task_id="3").decisions.add(unsure)
    get_judge(EXACT).step_scores([JudgeStep("Scroll down"), JudgeStep("Click on 'Go'")],
                                 [JudgeStep("press [Enter]"), JudgeStep("Scroll down")])

    items, pending = audit_queue(AuditFilters(tau=0.7))

    assert sorted(round(abs(item.score - 0.7), 2) for item in items) == [0.05, 0.3, 0.3, 0.3, 0.7]
    assert items[0].decision.pk == unsure.pk and items[0].reason == "near_threshold"
    # Scores farther from tau than NEAR_MARGIN only fill the page (after the random sample), nearest first.
    assert all(item.reason in ("further_from_threshold", "random_sample") for item in items[1:])
    further = [item for item in items if item.reason == "further_from_threshold"]
    assert [abs(item.score - 0.7) for item in further] == sorted(abs(item.score - 0.7) for item in further)
    assert {middling.pk, sure.pk} <= {item.decision.pk for item in items}
    assert pending == 5  # three pair decisions and the best cell of each of two gold steps
    assert items[0].context == [] and with_uses(items)[0].context == ["gpt4-run · task 3"]  # the page adds uses
    cells = sorted((item.gold_step, item.agent_step, item.score) for item in items if item.gold_step)
    # Gold step 2 resembles no agent step: its candidate is the agent step at the same position.
    assert cells == [(1, 2, 1.0), (2, 2, 0.0)]
    only_exact, count = audit_queue(AuditFilters(backend="exact", kind="trajectory_match"))
    assert count == 2 and all(item.decision.kind == "trajectory_match" for item in only_exact)
    assert [item.decision.pk for item in reviewed_decisions(AuditFilters())] == [answered.pk]


def test_the_audit_page_and_one_key_verdicts(client, reviewer):
    decision = _decision(0.8, gold="Click on the '<script>alert(1)</script>' link", agent="click [5]")
    client.force_login(reviewer)

    page = client.get(reverse("metrics:judge-audit"))
    html = page.content.decode()
    assert "To review (1)" in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html and "<script>alert(1)" not in html

    answered = client.post(reverse("metrics:judge-audit-verdict"),
                           {"decision": decision.pk, "verdict": "overrule", "tau": "0.7"},
                           HTTP_ACCEPT="application/json")
    assert answered.json() == {"decision": decision.pk, "human_score": 0.0}
    refused = client.post(reverse("metrics:judge-audit-verdict"), {"decision": decision.pk, "verdict": "x"},
                          HTTP_ACCEPT="application/json")
    assert refused.status_code == 400 and "verdict must be one of" in refused.json()["detail"]
    redirected = client.post(reverse("metrics:judge-audit-verdict"),
                             {"decision": decision.pk, "verdict": "confirm", "next": "https://evil.example/"})
    assert redirected.url == reverse("metrics:judge-audit")
    decision.refresh_from_db()
    assert decision.human_score == 1.0
    assert "Nothing to review" in client.get(reverse("metrics:judge-audit")).content.decode()
    assert "Confirm" in client.get(reverse("metrics:judge-audit"), {"show": "reviewed"}).content.decode()


def test_the_audit_needs_a_reviewer(client, annotator):
    client.force_login(annotator)
    assert client.get(reverse("metrics:judge-audit")).status_code == 403
    assert client.post(reverse("metrics:judge-audit-verdict"), {}).status_code == 403


@pytest.fixture
def human_confirmations(reviewer):
    """Five offline decisions a reviewer confirmed or overruled, and one of the exact judge."""
    for score, verdict, text in ((0.9, "confirm", "a"), (0.95, "confirm", "b"), (0.8, "overrule", "c"),
                                 (0.3, "confirm", "d"), (0.1, "confirm", "e")):
        audit_decision(_decision(score, gold=text, agent=text + "!").pk, reviewer=reviewer, verdict=verdict)
    # The exact judge answered question "c" too: the human verdict given on the offline decision counts for it.
    _decision(0.0, gold="c", agent="c!", backend="exact", cache_key="e" * 64)
    _decision(0.5, gold="unreviewed", agent="x")


def test_judge_quality_numbers(human_confirmations):
    rows = {(row.backend, row.model): row for row in judge_quality(tau=0.7)}

    offline = rows[("offline", "")].agreement
    assert (offline.count, offline.true_positives, offline.false_positives, offline.true_negatives,
            offline.false_negatives) == (5, 2, 1, 2, 0)
    assert (offline.accuracy, offline.precision, offline.recall) == (0.8, 2 / 3, 1.0)
    assert offline.kappa == pytest.approx((0.8 - 0.48) / (1 - 0.48))
    exact = rows[("exact", "")].agreement
    assert (exact.count, exact.accuracy) == (1, 1.0)
    assert rows[("offline", "")].best.threshold == 0.9


def test_the_judge_quality_page_needs_an_account(client, db):
    response = client.get(reverse("annotation:judge-quality"))
    assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")


def test_the_judge_quality_page_shows_the_numbers(client, human_confirmations):
    client.force_login(UserFactory())
    html = client.get(reverse("annotation:judge-quality")).content.decode()

    row = html.split('<tr data-judge="offline:">')[1].split("</table>")[0]
    cells = [cell.split(">")[-1] for cell in row.split("</td>")[:8]]
    assert cells == ["offline", "—", "5", "0.800", "0.667", "1.000", "0.615", "[0.000, 1.000]"]
    matrix = [cell.split(">")[-1] for cell in row.split("</td>")[8:12]]
    assert matrix == ["2", "1", "0", "2"]  # judge yes: TP, FP; judge no: FN, TN
    assert "not yet" in html and "5 human confirmations (fewer than 50)" in html
    assert "Cohen&#x27;s kappa interval [0.000, 1.000] reaches below 0.8" in html
    assert '<tr data-judge="exact:">' in html


def test_the_judge_quality_page_without_confirmations(client, db):
    client.force_login(UserFactory())
    assert "No human-confirmed decisions yet" in client.get(reverse("annotation:judge-quality")).content.decode()


def test_the_queue_offers_near_threshold_disagreements_and_a_random_sample():
    near = [_decision(0.7 + step, gold=f"near {step}", agent="x") for step in (0.01, -0.02, 0.03)]
    offline = _decision(0.95, gold="disputed", agent="y", model="rules")
    _decision(0.05, gold="disputed", agent="y", backend="openai", model="gpt-4o-mini", cache_key="o" * 64)
    agreed = _decision(0.99, gold="agreed", agent="z")
    _decision(0.97, gold="agreed", agent="z", backend="exact", cache_key="a" * 64)
    rest = [_decision(0.0, gold=f"far {n}", agent="w") for n in range(40)]
    members = sorted((d for d in [near[2], agreed, *rest] if in_audit_sample(d.inputs_hash)),
                     key=lambda d: audit_sample_key(d.inputs_hash))
    assert len(members) >= 3  # one question in five, by hash: 8 expected of these 42

    items, pending = audit_queue(AuditFilters(tau=0.7), limit=5)

    assert pending == 3 + 1 + 1 + 40
    assert [(item.reason, item.decision.pk) for item in items[:2]] == [
        ("near_threshold", near[0].pk), ("near_threshold", near[1].pk)]
    disputed = [item for item in items if item.reason == "disagreement"]
    assert len(disputed) == 1 and disputed[0].inputs_hash == offline.inputs_hash
    assert disputed[0].others in ([("openai:gpt-4o-mini", 0.05)], [("offline:rules", 0.95)])
    sample = [item.decision.pk for item in items if item.reason == "random_sample"]
    assert sample == [d.pk for d in members[:2]]  # the slot the disagreements could not fill goes to the sample
    again, _ = audit_queue(AuditFilters(tau=0.7), limit=5)
    assert [item.key for item in again] == [item.key for item in items]  # a stable sample


def test_without_sample_members_left_the_slots_go_to_the_next_nearest():
    decisions = [_decision(0.7 + n / 100, gold=f"q{n}", agent="x") for n in range(12)]
    outside = [d for d in decisions if not in_audit_sample(d.inputs_hash)][:4]
    JudgeDecision.objects.exclude(pk__in=[d.pk for d in outside]).delete()
    items, pending = audit_queue(AuditFilters(tau=0.7), limit=5)
    assert pending == 4 and [item.reason for item in items] == ["near_threshold"] * 4


def test_judge_quality_repeats_kappa_over_the_random_sample(reviewer):
    for n in range(40):
        decision = _decision(0.9 if n % 2 else 0.1, gold=f"s{n}", agent="x")
        audit_decision(decision.pk, reviewer=reviewer, verdict="confirm")
    [row] = judge_quality(tau=0.7)
    members = sum(in_audit_sample(d.inputs_hash) for d in JudgeDecision.objects.all())
    assert row.trust.confirmations == 40 and row.sample.confirmations == members


def test_the_audit_page_says_why_each_verdict_is_offered(client, reviewer):
    _decision(0.71, gold="near", agent="x")
    _decision(0.9, gold="disputed", agent="y")
    _decision(0.1, gold="disputed", agent="y", backend="openai", model="gpt-4o-mini", cache_key="o" * 64)
    client.force_login(reviewer)
    html = client.get(reverse("metrics:judge-audit")).content.decode()
    assert html.count('class="audit-reason near_threshold">near the threshold</span>') >= 2
    assert "openai:gpt-4o-mini: 0.10" in html or "offline: 0.90" in html


def test_calibrate_judge_prints_the_interval_the_page_shows(client, reviewer):
    from io import StringIO

    from django.core.management import call_command

    for n in range(30):
        yes, right = n % 2 == 0, n % 7 != 0
        decision = _decision(0.9 if yes else 0.2, gold=f"g{n}", agent="x", model="rules+minilm")
        audit_decision(decision.pk, reviewer=reviewer, verdict="confirm" if right else "overrule")
    client.force_login(reviewer)
    html = client.get(reverse("annotation:judge-quality")).content.decode()
    shown = html.split('<tr data-judge="offline:rules+minilm">')[1].split('class="metric kappa-interval">')[1]
    shown = shown.split("</td>")[0]
    out = StringIO()
    call_command("calibrate_judge", "--judge", "offline", stdout=out)
    printed = [line for line in out.getvalue().splitlines() if line.startswith("all ")][0].split()[-2:]
    assert shown == " ".join(printed) and shown.startswith("[")


def test_a_clear_verdict_filling_the_page_is_not_called_near_the_threshold():
    clear = _decision(1.0, gold="clear", agent="x")
    items, _ = audit_queue(AuditFilters(tau=0.7), limit=5)
    [item] = [item for item in items if item.decision.pk == clear.pk]
    assert item.reason in ("further_from_threshold", "random_sample")
