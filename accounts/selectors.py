"""Reads of the accounts app."""

from django.db.models import QuerySet
from django.utils import timezone

from .models import ApiToken


def live_api_tokens(user) -> QuerySet[ApiToken]:
    """The user's tokens that still work, newest first (expired ones are no use to show)."""
    return ApiToken.objects.filter(user=user, expiry__gt=timezone.now())
