from django.apps import AppConfig
from django.db.models.signals import post_migrate


class AnnotationConfig(AppConfig):
    name = "annotation"

    def ready(self):
        from .roles import ensure_role_groups

        post_migrate.connect(ensure_role_groups, sender=self)
