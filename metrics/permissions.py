"""Who may start, cancel or re-run an evaluation: reviewers and admins, and a run's own uploader;
and which gold they may score against."""

from accounts.roles import REVIEWER, has_role
from metrics.models import EvaluationJob

# The default policy scores against the reference gold (approved, past review). Scores and judge
# decisions show the gold they were computed from, so choosing any other gold (each one, submitted
# ones included; a named annotator's) is a reviewer's call.
REFERENCE_GOLD_POLICY = EvaluationJob._meta.get_field("gold_policy").default


def can_evaluate(user, runs) -> bool:
    if not user.is_authenticated:
        return False
    return has_role(user, REVIEWER) or all(run.uploaded_by_id == user.pk for run in runs)


def may_use_gold_policy(user, policy: str) -> bool:
    """A gold policy other than the reference gold needs the reviewer role."""
    return policy == REFERENCE_GOLD_POLICY or has_role(user, REVIEWER)


def can_change_evaluation(user, job) -> bool:
    """Cancel or re-run: the job's runs are the user's to evaluate, against gold the user may choose."""
    return can_evaluate(user, job.runs.all()) and may_use_gold_policy(user, job.gold_policy)
