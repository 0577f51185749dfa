"""Production settings: everything of `base`, hardened. Refuses to start on a development key."""

from django.core.exceptions import ImproperlyConfigured

from .base import *  # noqa: F403
from .base import DEVELOPMENT_SECRET_KEY, METRICS_ENABLED, METRICS_TOKEN, SECRET_KEY, env

if (not SECRET_KEY or SECRET_KEY == DEVELOPMENT_SECRET_KEY or len(SECRET_KEY) < 50
        or len(set(SECRET_KEY)) < 5):
    raise ImproperlyConfigured(
        "SECRET_KEY must be set to a random value of at least 50 characters (not one character repeated) "
        "in production (python -c 'import secrets; print(secrets.token_urlsafe(64))')."
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
