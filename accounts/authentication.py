"""`Authorization: Token <token>` checked against the stored hashes, recording when a token is used."""

import functools
from datetime import timedelta

from django.contrib.auth.decorators import login_required
from django.http import JsonResponse
from django.utils import timezone
from knox.auth import TokenAuthentication as KnoxTokenAuthentication
from rest_framework.exceptions import AuthenticationFailed

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


def login_or_token_required(view):
    """A file the API links to (a screenshot) is read with a session or with `Authorization: Token`, under the
    same rule as the page it belongs to: a script follows the URLs the API gives it. A wrong token is 401."""
    page_view = login_required(view)

    @functools.wraps(view)
    def checked(request, *args, **kwargs):
        if request.META.get("HTTP_AUTHORIZATION", "").startswith("Token ") and not request.user.is_authenticated:
            try:
                user, _ = TokenAuthentication().authenticate(request) or (None, None)
            except AuthenticationFailed as error:
                user = None
                detail = str(error.detail)
            else:
                detail = "invalid token"
            if user is None:
                response = JsonResponse({"detail": detail, "code": "authentication_failed"}, status=401)
                response["WWW-Authenticate"] = "Token"
                return response
            request.user = user
        return page_view(request, *args, **kwargs)

    return checked
