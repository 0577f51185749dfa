"""Writes of the accounts app: making and revoking API tokens."""

import logging
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from .models import ApiToken

log = logging.getLogger("accounts.security")


class TokenLimitReached(Exception):
    pass


def default_token_name() -> str:
    return f"API token {timezone.now():%Y-%m-%d %H:%M}"


def create_api_token(user, *, name: str = "", expires_in_days: int | None = None) -> tuple[ApiToken, str]:
    """Make a token for `user`; the returned text is the only copy of it (the row keeps a hash).

    Expired tokens of the user are deleted first; past API_TOKEN_LIMIT_PER_USER live tokens
    the user must revoke one before making another."""
    days = settings.API_TOKEN_TTL_DAYS if expires_in_days is None else expires_in_days
    if not 1 <= days <= settings.API_TOKEN_MAX_TTL_DAYS:
        raise ValueError(f"expires_in_days must be between 1 and {settings.API_TOKEN_MAX_TTL_DAYS}.")
    with transaction.atomic():
        ApiToken.objects.filter(user=user, expiry__lt=timezone.now()).delete()
        if ApiToken.objects.filter(user=user).count() >= settings.API_TOKEN_LIMIT_PER_USER:
            raise TokenLimitReached(
                f"You already have {settings.API_TOKEN_LIMIT_PER_USER} API tokens; revoke one first."
            )
        token, text = ApiToken.objects.create(
            user=user, expiry=timedelta(days=days), name=name.strip() or default_token_name()
        )
    log.info("API token %r (%s…) created for %s, expires %s", token.name, token.token_key[:8], user, token.expiry)
    return token, text


def revoke_api_token(user, token_key: str) -> ApiToken:
    """Delete one of `user`'s own tokens, named by the first characters shown on the tokens page."""
    token = ApiToken.objects.get(user=user, token_key=token_key)
    token.delete()
    log.info("API token %r (%s…) of %s revoked", token.name, token_key[:8], user)
    return token
