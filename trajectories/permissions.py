"""Who may add trajectories to a run, rename it or delete it."""

from accounts.roles import ADMIN, has_role

from .models import AgentRun


def can_import_into(user, run: AgentRun) -> bool:
    """Only one's own runs; admins any run, including those made from the command line."""
    if not user.is_authenticated:
        return False
    return (run.uploaded_by_id is not None and run.uploaded_by_id == user.pk) or has_role(user, ADMIN)
