from django.apps import AppConfig


class TrajectoriesConfig(AppConfig):
    name = "trajectories"

    def ready(self):
        from . import signals

        signals.connect()
