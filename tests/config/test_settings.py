import os
import subprocess
import sys

from django.conf import settings

MANAGE = [sys.executable, str(settings.BASE_DIR / "manage.py")]


def _run(*args, **env):
    unset = ("SECRET_KEY", "DEBUG", "ALLOWED_HOSTS", "METRICS_TOKEN", "METRICS_ENABLED")
    base = {k: v for k, v in os.environ.items() if k not in unset}
    base.update(DJANGO_SETTINGS_MODULE="config.settings.production", **env)
    return subprocess.run([*MANAGE, *args], env=base, capture_output=True, text=True, cwd=settings.BASE_DIR)


def test_production_refuses_to_start_without_a_real_secret_key():
    result = _run("check")
    assert result.returncode != 0
    assert "SECRET_KEY must be set" in result.stderr


def test_production_refuses_the_development_key():
    result = _run("check", SECRET_KEY=settings.DEVELOPMENT_SECRET_KEY, ALLOWED_HOSTS="example.org")
    assert result.returncode != 0
    assert "SECRET_KEY must be set" in result.stderr


GOOD_KEY = "k" * 20 + "-Zq8" + "x9" * 20


def test_production_refuses_a_key_of_one_repeated_character():
    result = _run("check", SECRET_KEY="a" * 64, ALLOWED_HOSTS="example.org", METRICS_TOKEN="t0ken")
    assert result.returncode != 0
    assert "not one character repeated" in result.stderr


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
