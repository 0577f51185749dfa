"""Production settings: everything of `base`, hardened. Refuses to start on a development key."""

from django.core.exceptions import ImproperlyConfigured

from .base import *  # noqa: F403
from .base import DEVELOPMENT_SECRET_KEY, METRICS_ENABLED, METRICS_TOKEN, SECRET_KEY, env

MIN_KEY_LENGTH = 50
MIN_KEY_DISTINCT_CHARACTERS = 16


def secret_key_weakness(key):
    """Why `key` is too weak to sign sessions and tokens, or None: a guessable key forges them all."""
    if not key or key == DEVELOPMENT_SECRET_KEY:
        return "it is unset or the development key"
    if key.startswith("django-insecure-"):
        return "it starts with 'django-insecure-', the prefix of keys generated for development"
    if len(key) < MIN_KEY_LENGTH:
        return f"it has {len(key)} characters, fewer than {MIN_KEY_LENGTH}"
    if len(set(key)) < MIN_KEY_DISTINCT_CHARACTERS:
        return f"it has {len(set(key))} distinct characters, fewer than {MIN_KEY_DISTINCT_CHARACTERS}"
    period = next((p for p in range(1, len(key) // 2 + 1) if key[p:] == key[:-p]), None)
    if period:
        return f"it repeats a pattern of {period} characters"
    return None


_weakness = secret_key_weakness(SECRET_KEY)
if _weakness:
    raise ImproperlyConfigured(
        f"SECRET_KEY must be set to a random value of at least {MIN_KEY_LENGTH} characters in production, "
        f"and this one is refused: {_weakness} "
        "(python -c 'import secrets; print(secrets.token_urlsafe(64))')."
    )
if METRICS_ENABLED and not METRICS_TOKEN:
    raise ImproperlyConfigured(
        "METRICS_TOKEN must be set in production (a reverse proxy on this machine would otherwise let "
        "anyone read /metrics), or turn the endpoint off with METRICS_ENABLED=false."
    )

DEBUG = False
ALLOWED_HOSTS = env.list("ALLOWED_HOSTS")

STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"},
}

SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_SSL_REDIRECT = env.bool("SECURE_SSL_REDIRECT", default=True)
# Probes and Prometheus call these inside the deployment's network, over plain HTTP.
SECURE_REDIRECT_EXEMPT = [r"^healthz$", r"^metrics$"]
SECURE_HSTS_SECONDS = env.int("SECURE_HSTS_SECONDS", default=31536000)
SECURE_HSTS_INCLUDE_SUBDOMAINS = True
SECURE_HSTS_PRELOAD = True
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
SESSION_COOKIE_SECURE = True
SESSION_COOKIE_HTTPONLY = True
CSRF_COOKIE_SECURE = True
X_FRAME_OPTIONS = "DENY"
