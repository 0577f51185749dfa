"""The Prometheus endpoint: who may scrape it and what it tells."""

import pytest
from django.test import Client

from tests.factories import EvaluationJobFactory, JudgeConfigFactory
from judges.models import JudgeDecision

pytestmark = pytest.mark.django_db


def _decision(**fields):
    defaults = {"kind": "step", "cache_key": fields.pop("key"), "inputs_hash": "x", "inputs": {}, "backend": "openai",
                "model": "gpt-test"}
    return JudgeDecision.objects.create(**defaults, **fields)


def test_scrape_tells_jobs_judges_and_request_latency(client):
    JudgeConfigFactory()
    EvaluationJobFactory(status="done")
    EvaluationJobFactory(status="pending")
    _decision(key="a", score=1.0, prompt_tokens=100, completion_tokens=20, cost="0.0015", latency_ms=500)
    _decision(key="b", score=None, error="timeout", latency_ms=1500)
    client.get("/healthz")
    response = client.get("/metrics")
    assert response.status_code == 200
    text = response.content.decode()
    assert 'trajscope_jobs{kind="evaluation",status="done"} 1.0' in text
    assert 'trajscope_jobs{kind="evaluation",status="pending"} 1.0' in text
    assert 'trajscope_jobs_not_sent{kind="evaluation"} 1.0' in text
    assert 'trajscope_judge_decisions_total{backend="openai",kind="step",model="gpt-test",outcome="ok"} 1.0' in text
    assert 'trajscope_judge_decisions_total{backend="openai",kind="step",model="gpt-test",outcome="error"} 1.0' in text
    assert 'trajscope_judge_latency_seconds_sum{backend="openai",model="gpt-test"} 2.0' in text
    assert 'trajscope_judge_tokens_total{backend="openai",direction="input",model="gpt-test"} 100.0' in text
    assert 'trajscope_judge_cost_usd_total{backend="openai",model="gpt-test"} 0.0015' in text
    assert "trajscope_job_duration_seconds_count" in text
    assert "django_http_requests_latency_seconds_by_view_method" in text


def test_only_this_machine_scrapes_without_a_token(client):
    assert client.get("/metrics").status_code == 200
    assert Client(REMOTE_ADDR="203.0.113.9").get("/metrics").status_code == 403


def test_a_proxy_on_this_machine_does_not_make_the_world_local(settings):
    settings.TRUSTED_PROXY_COUNT = 1
    forwarded = Client(REMOTE_ADDR="127.0.0.1")
    assert forwarded.get("/metrics", HTTP_X_FORWARDED_FOR="203.0.113.9").status_code == 403
    assert forwarded.get("/metrics", HTTP_X_FORWARDED_FOR="127.0.0.1").status_code == 200


def test_metrics_may_be_turned_off(client, settings):
    settings.METRICS_ENABLED = False
    assert client.get("/metrics").status_code == 404


def test_a_token_is_required_when_set(client, settings):
    settings.METRICS_TOKEN = "s3cret-token"
    assert client.get("/metrics").status_code == 403
    assert client.get("/metrics", HTTP_AUTHORIZATION="Bearer wrong").status_code == 403
    remote = Client(REMOTE_ADDR="203.0.113.9")
    assert remote.get("/metrics", HTTP_AUTHORIZATION="Bearer s3cret-token").status_code == 200


def test_several_web_processes_share_their_metrics_through_a_folder(client, monkeypatch, tmp_path):
    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", str(tmp_path))
    EvaluationJobFactory(status="done")
    text = client.get("/metrics").content.decode()
    assert 'trajscope_jobs{kind="evaluation",status="done"} 1.0' in text
    assert "python_gc_objects_collected_total" not in text  # per-process collectors are not mixed in
