"""`Authorization: Token <token>` checked against the stored hashes, recording when a token is used."""

from datetime import timedelta

from django.utils import timezone
from knox.auth import TokenAuthentication as KnoxTokenAuthentication

from .models import ApiToken

# A busy client would otherwise write the row on every request.
LAST_USED_PRECISION = timedelta(minutes=1)


class TokenAuthentication(KnoxTokenAuthentication):
    def authenticate_credentials(self, token):
        user, api_token = super().authenticate_credentials(token)
        now = timezone.now()
        if api_token.last_used is None or now - api_token.last_used >= LAST_USED_PRECISION:
            ApiToken.objects.filter(pk=api_token.pk).update(last_used=now)
            api_token.last_used = now
        return user, api_token
