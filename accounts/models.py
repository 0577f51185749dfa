"""API tokens: only a hash is stored; each has a name, an expiry and the time it was last used."""

from django.db import models
from knox.models import AbstractAuthToken


class ApiToken(AbstractAuthToken):
    """A token is shown once when made; revoking it deletes the row, so the hash no longer matches."""

    name = models.CharField(max_length=100)
    last_used = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created"]
        verbose_name = "API token"

    def __str__(self):
        return f"{self.name} ({self.user}, {self.token_key[:8]}…)"
