from django.apps import AppConfig


class PlatformConfig(AppConfig):
    """The platform's own rows that belong to no domain app: monitoring counters."""

    name = "infrastructure"
    label = "platform"
    verbose_name = "Platform"
    default_auto_field = "django.db.models.BigAutoField"
