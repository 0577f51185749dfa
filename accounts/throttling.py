"""API rate limits per client: by address for anonymous requests, by account once authenticated.

DRF's own classes read the rates once, at import; these read them from the settings on every
request, so a deployment (or a test) that changes API_THROTTLE_* sees the change.
"""

from rest_framework import throttling
from rest_framework.settings import api_settings


class _RatesFromSettings:
    def get_rate(self):
        return api_settings.DEFAULT_THROTTLE_RATES.get(self.scope)


class AnonRateThrottle(_RatesFromSettings, throttling.AnonRateThrottle):
    pass


class UserRateThrottle(_RatesFromSettings, throttling.UserRateThrottle):
    pass


class TokenRateThrottle(_RatesFromSettings, throttling.AnonRateThrottle):
    """POST /api/token/ checks a password: limited per address like a login page."""

    scope = "token"
