"""Liveness of the services the platform depends on, as reported by `/healthz`."""

import time

from celery import current_app
from django.conf import settings
from django.db import connection


def _timed(check) -> dict:
    started = time.perf_counter()
    try:
        detail = check()
        ok, error = True, ""
    except Exception as exc:  # noqa: BLE001 - any failure is the answer
        detail, ok, error = {}, False, f"{type(exc).__name__}: {exc}"
    result = {"ok": ok, "latency_ms": round((time.perf_counter() - started) * 1000, 1), **detail}
    if error:
        result["error"] = error
    return result


def _database() -> dict:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
        cursor.fetchone()
    return {"vendor": connection.vendor}


def _broker() -> dict:
    if settings.CELERY_TASK_ALWAYS_EAGER:
        return {"mode": "in-process"}
    with current_app.connection_for_write(settings.CELERY_BROKER_URL) as conn:
        conn.ensure_connection(max_retries=1, timeout=2)
        transport = conn.transport_cls
    return {"mode": "broker", "transport": str(transport)}


def _jobs() -> dict:
    from infrastructure.jobs import waiting_counts

    return {"waiting": waiting_counts()}


def check() -> dict:
    database, broker = _timed(_database), _timed(_broker)
    return {
        "status": "ok" if database["ok"] and broker["ok"] else "unavailable",
        "database": database,
        "broker": broker,
        "jobs": _timed(_jobs) if database["ok"] else {"ok": False, "error": "database unavailable"},
        "judge_backend": settings.JUDGE_BACKEND,
    }
