from django.db import models


class EventCounter(models.Model):
    """One Prometheus counter for one label set, incremented when its event happens (never counted
    from rows, so deleting rows never makes it fall), shared by every process on every host."""

    name = models.CharField(max_length=100)
    labels = models.CharField(max_length=500, blank=True, help_text="The label set as sorted JSON.")
    value = models.FloatField(default=0)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["name", "labels"], name="event_counter_unique_per_labels")]

    def __str__(self):
        return f"{self.name}{self.labels} = {self.value}"
