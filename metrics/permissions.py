"""Who may start, cancel or re-run an evaluation: reviewers and admins, and a run's own uploader."""

from accounts.roles import REVIEWER, has_role


def can_evaluate(user, runs) -> bool:
    if not user.is_authenticated:
        return False
    return has_role(user, REVIEWER) or all(run.uploaded_by_id == user.pk for run in runs)
