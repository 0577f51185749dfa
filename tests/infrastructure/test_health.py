import pytest

pytestmark = pytest.mark.django_db


def test_healthz_reports_database_and_broker(client, settings):
    response = client.get("/healthz")
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "ok"
    assert body["database"]["ok"] is True
    assert body["database"]["vendor"] in ("sqlite", "postgresql")
    assert body["broker"]["ok"] is True
    expected_mode = "in-process" if settings.CELERY_TASK_ALWAYS_EAGER else "broker"
    assert body["broker"]["mode"] == expected_mode
    assert body["judge_backend"] == settings.JUDGE_BACKEND


def test_healthz_is_503_when_the_broker_is_unreachable(client, settings):
    settings.CELERY_TASK_ALWAYS_EAGER = False
    settings.CELERY_BROKER_URL = "redis://127.0.0.1:9/0"
    response = client.get("/healthz")
    assert response.status_code == 503
    body = response.json()
    assert body["status"] == "unavailable"
    assert body["database"]["ok"] is True
    assert body["broker"]["ok"] is False and body["broker"]["error"]
