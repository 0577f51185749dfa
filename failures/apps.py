from django.apps import AppConfig


class FailuresConfig(AppConfig):
    name = "failures"
    verbose_name = "Why it failed"

    def ready(self):
        from . import receivers

        receivers.connect()
