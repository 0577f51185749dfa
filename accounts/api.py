"""POST /api/token/: exchange a username and password for a new API token (shown once)."""

from django.conf import settings
from django.contrib.auth import authenticate
from drf_spectacular.utils import extend_schema
from rest_framework import exceptions, serializers, status
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.views import APIView

from . import services
from .lockout import lockout_message, lockout_seconds, record_login
from .throttling import TokenRateThrottle


class LockedOut(exceptions.APIException):
    status_code = status.HTTP_429_TOO_MANY_REQUESTS
    default_code = "locked_out"

    @property
    def wait(self) -> int:
        """Read by DRF's exception handler into Retry-After."""
        return lockout_seconds()


class TokenRequestSerializer(serializers.Serializer):
    username = serializers.CharField(max_length=150)
    password = serializers.CharField(max_length=4096, trim_whitespace=False, style={"input_type": "password"})
    name = serializers.CharField(max_length=100, required=False,
                                 help_text="A name to recognise the token by on your tokens page; left out: the date "
                                           "and time it was made. Blank is refused.")
    expires_in_days = serializers.IntegerField(
        min_value=1, max_value=settings.API_TOKEN_MAX_TTL_DAYS, required=False,
        help_text=f"Days until the token stops working (default {settings.API_TOKEN_TTL_DAYS}).")


class TokenSerializer(serializers.Serializer):
    token = serializers.CharField(help_text="Send as `Authorization: Token <token>`. Shown only this once.")
    name = serializers.CharField()
    expiry = serializers.DateTimeField()


class ObtainToken(APIView):
    """A new token per call; the password check is locked out after repeated failures like the login page."""

    authentication_classes = []
    permission_classes = [AllowAny]
    throttle_classes = [TokenRateThrottle]

    @extend_schema(tags=["token"], request=TokenRequestSerializer, responses={200: TokenSerializer}, auth=[])
    def post(self, request):
        form = TokenRequestSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        data = form.validated_data
        # django-axes keeps its lockout marks on the Django request, not on DRF's wrapper.
        user = authenticate(request._request, username=data["username"], password=data["password"])
        if getattr(request._request, "axes_locked_out", False):
            raise LockedOut(lockout_message())
        if user is None:
            raise serializers.ValidationError("Unable to log in with provided credentials.", code="authorization")
        try:
            token, text = services.create_api_token(
                user, name=data.get("name", ""), expires_in_days=data.get("expires_in_days"))
        except services.TokenLimitReached as exc:
            raise serializers.ValidationError(str(exc), code="token_limit") from exc
        record_login(request._request, user)
        return Response({"token": text, "name": token.name, "expiry": token.expiry})
