"""Who may start an attribution source over a run: its uploader and reviewers (admins hold every role)."""

from accounts.roles import REVIEWER, has_role
from trajectories.permissions import can_import_into

REFUSAL = "attributing a run's failures needs the run's uploader or the reviewer role"


def may_attribute(user, run) -> bool:
    return has_role(user, REVIEWER) or can_import_into(user, run)
