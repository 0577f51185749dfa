"""Who may do what: the three roles of the platform, as Django groups.

The groups are made by a data migration (existing and fresh databases alike) and again after
every `migrate` or `flush`, so that a role check never depends on a group someone deleted.
"""

from functools import wraps

from django.contrib.auth.models import Group
from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied

ANNOTATOR = "annotator"
REVIEWER = "reviewer"
ADMIN = "admin"
ROLES = (ANNOTATOR, REVIEWER, ADMIN)


def ensure_role_groups(group_model=Group) -> None:
    """Create the role groups that are missing; `group_model` is the historical one in a migration."""
    for name in ROLES:
        group_model.objects.get_or_create(name=name)


# What the admin role manages in the Django admin (staff status still needed to open it): accounts
# and their groups, API tokens, failed logins and lockouts.
ADMIN_PERMISSION_APPS = ("auth", "accounts", "axes")


def grant_admin_permissions() -> None:
    """Give the admin group every permission of ADMIN_PERMISSION_APPS (run after `migrate`, once
    Django has made the permissions)."""
    from django.contrib.auth.models import Permission

    group = Group.objects.get(name=ADMIN)
    group.permissions.add(*Permission.objects.filter(content_type__app_label__in=ADMIN_PERMISSION_APPS))


def has_role(user, role: str) -> bool:
    """Admins (and superusers) hold every role; reviewers may also annotate."""
    if not user.is_authenticated:
        return False
    if user.is_superuser:
        return True
    names = {g.name for g in user.groups.all()}
    if ADMIN in names:
        return True
    if role == ANNOTATOR:
        return bool(names & {ANNOTATOR, REVIEWER})
    return role in names


def role_required(role: str):
    """View decorator: log in first, then hold `role` (else 403)."""

    def decorator(view):
        @wraps(view)
        def wrapper(request, *args, **kwargs):
            if not request.user.is_authenticated:
                return redirect_to_login(request.get_full_path())
            if not has_role(request.user, role):
                raise PermissionDenied(f"this page needs the {role} role")
            return view(request, *args, **kwargs)

        return wrapper

    return decorator
