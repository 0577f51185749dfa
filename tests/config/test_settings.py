import os
import socket
import subprocess
import sys

import pytest

from django.conf import settings

MANAGE = [sys.executable, str(settings.BASE_DIR / "manage.py")]


def _run(*args, **env):
    unset = ("SECRET_KEY", "DEBUG", "ALLOWED_HOSTS", "METRICS_TOKEN", "METRICS_ENABLED")
    base = {k: v for k, v in os.environ.items() if k not in unset}
    base.update({"DJANGO_SETTINGS_MODULE": "config.settings.production", **env})
    return subprocess.run([*MANAGE, *args], env=base, capture_output=True, text=True, cwd=settings.BASE_DIR)


def test_production_refuses_to_start_without_a_real_secret_key():
    result = _run("check")
    assert result.returncode != 0
    assert "SECRET_KEY must be set" in result.stderr


def test_production_refuses_the_development_key():
    result = _run("check", SECRET_KEY=settings.DEVELOPMENT_SECRET_KEY, ALLOWED_HOSTS="example.org")
    assert result.returncode != 0
    assert "SECRET_KEY must be set" in result.stderr


GOOD_KEY = "Vb3q-8xTnR_2kLw9Zp4mHc7Jf1YdGs6aEo0uKiQy5NtXr-WlBvUe_MjCz"


@pytest.mark.parametrize(("key", "reason"), [
    ("a" * 64, "1 distinct characters"),
    ("password" * 8, "7 distinct characters"),
    ("abcde" * 12, "5 distinct characters"),
    ("0123456789abcdefgh" * 4, "repeats a pattern of 18 characters"),
    ("0123456789" * 5, "10 distinct characters"),
    ("0123456789abcdefgh" * 3 + "01234", "repeats a pattern of 18 characters"),
    ("django-insecure-" + GOOD_KEY, "starts with 'django-insecure-'"),
    (GOOD_KEY[:40], "40 characters, fewer than 50"),
])
def test_production_refuses_a_weak_key_with_the_reason(key, reason):
    result = _run("check", SECRET_KEY=key, ALLOWED_HOSTS="example.org", METRICS_TOKEN="t0ken")
    assert result.returncode != 0
    assert "this one is refused: it " in result.stderr
    assert reason in result.stderr


def test_production_refuses_to_start_with_metrics_and_no_token():
    result = _run("check", SECRET_KEY=GOOD_KEY, ALLOWED_HOSTS="example.org")
    assert result.returncode != 0
    assert "METRICS_TOKEN must be set" in result.stderr
    assert _run("check", SECRET_KEY=GOOD_KEY, ALLOWED_HOSTS="example.org", METRICS_ENABLED="false").returncode == 0


def test_production_passes_check_deploy():
    result = _run("check", "--deploy", "--fail-level", "WARNING", SECRET_KEY=GOOD_KEY,
                  ALLOWED_HOSTS="trajscope.example.org", METRICS_TOKEN="s3cret-token")
    assert result.returncode == 0, result.stderr + result.stdout
    assert "no issues" in result.stdout


def test_a_redis_cache_that_cannot_be_reached_answers_as_an_empty_one():
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    result = _run("shell", "-c", "from django.core.cache import cache; cache.set('k', 1); print(cache.get('k', 'miss'))",
                  DJANGO_SETTINGS_MODULE="config.settings.base", CACHE_URL=f"redis://127.0.0.1:{port}/1")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[-1] == "miss" and "the cache cannot be reached" in result.stderr
