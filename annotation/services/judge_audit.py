"""A reviewer confirming or overruling one judge verdict.

The reviewer answers "is the judge right?"; what is stored is the human's own verdict
(1.0 equivalent, 0.0 not), through the judges app, so that it replaces the judge's score
wherever the same question comes up again, in every later evaluation and in calibration.
"""

from django.core.exceptions import PermissionDenied

from accounts.roles import REVIEWER, has_role
from judges import questions as q
from judges.calibration import DEFAULT_THRESHOLD
from judges.models import JudgeDecision
from judges.services import review_decision, review_step_pair

CONFIRM = "confirm"
OVERRULE = "overrule"
VERDICTS = (CONFIRM, OVERRULE)


def _judged_score(decision: JudgeDecision, gold_step: int | None, agent_step: int | None) -> float | None:
    if decision.kind != q.TRAJECTORY_MATCH:
        return decision.score
    matrix = (decision.output or {}).get("matrix", [])
    if gold_step is None or agent_step is None or not (
        1 <= gold_step <= len(matrix) and 1 <= agent_step <= len(matrix[gold_step - 1])
    ):
        raise ValueError(f"decision {decision.pk} covers a whole trajectory: name a gold step and an agent step in it")
    return matrix[gold_step - 1][agent_step - 1]


def check_may_audit(user) -> None:
    """Asked by the API before it reads the body, and by `audit_decision`."""
    if not has_role(user, REVIEWER):
        raise PermissionDenied("auditing the judge needs the reviewer role")


def audit_decision(decision_id: int, *, reviewer, verdict: str, tau: float = DEFAULT_THRESHOLD,
                   gold_step: int | None = None, agent_step: int | None = None, note: str = "") -> JudgeDecision:
    """Store the reviewer's verdict; returns the decision that now carries it (for a cell of a
    whole-trajectory decision, the pair decision made for that cell)."""
    check_may_audit(reviewer)
    if verdict not in VERDICTS:
        raise ValueError(f"verdict must be one of {', '.join(VERDICTS)}, not {verdict!r}")
    decision = JudgeDecision.objects.get(pk=decision_id)
    score = _judged_score(decision, gold_step, agent_step)
    if score is None:
        raise ValueError(f"decision {decision.pk} failed ({decision.error}); there is no verdict to confirm")
    judge_says_yes = score >= tau
    human_says_yes = judge_says_yes if verdict == CONFIRM else not judge_says_yes
    human_score = 1.0 if human_says_yes else 0.0
    note = note.strip()
    if decision.kind == q.TRAJECTORY_MATCH:
        return review_step_pair(decision, gold_step, agent_step, human_score=human_score, reviewer=reviewer, note=note)
    return review_decision(decision, human_score=human_score, reviewer=reviewer, note=note)
