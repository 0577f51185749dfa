import pytest
from django.core.cache import cache


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def low_rates(settings):
    """API rate limits low enough to reach in a test, counted from zero."""
    cache.clear()
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK,
                               "DEFAULT_THROTTLE_RATES": {"anon": "3/minute", "user": "5/minute", "token": "2/minute"}}
    yield
    cache.clear()
