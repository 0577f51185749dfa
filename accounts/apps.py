from django.apps import AppConfig
from django.db.models.signals import post_migrate


def _ensure_role_groups(**kwargs):
    from .roles import ensure_role_groups, grant_admin_permissions

    ensure_role_groups()
    grant_admin_permissions()


class AccountsConfig(AppConfig):
    """Users, roles (groups), API tokens and login protection: the bottom layer, importing no other app."""

    name = "accounts"

    def ready(self):
        from . import schema, signals  # noqa: F401  (token scheme in the API schema; security log)

        # A `flush` (tests, resets) empties the groups table without running migrations again.
        post_migrate.connect(_ensure_role_groups, sender=self)
