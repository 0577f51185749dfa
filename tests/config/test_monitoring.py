"""The Prometheus endpoint: who may scrape it and what it tells."""

import socket
from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from config import monitoring
from judges.models import JudgeDecision, OutcomeJob
from judges.outcome_judging import run_outcome_job
from metrics.models import EvaluationJob, TrajectoryScore
from metrics.services import evaluation
from tests.conftest import use_broker
from tests.factories import (AgentRunFactory, EvaluationJobFactory, ImportJobFactory, JudgeConfigFactory,
                             run_with_one_step_gold)
from trajectories.models import ImportJob
from trajectories.services.import_jobs import run_import_job

pytestmark = pytest.mark.django_db


def _decision(**fields):
    defaults = {"kind": "step", "cache_key": fields.pop("key"), "inputs_hash": "x", "inputs": {}, "backend": "openai",
                "model": "gpt-test"}
    return JudgeDecision.objects.create(**defaults, **fields)


def _scrape(client) -> str:
    response = client.get("/metrics")
    assert response.status_code == 200
    return response.content.decode()


def test_scrape_tells_row_gauges_and_request_latency(client):
    JudgeConfigFactory()
    EvaluationJobFactory(status="done")
    EvaluationJobFactory(status="pending")
    _decision(key="a", score=1.0)
    _decision(key="b", score=None, error="timeout")
    client.get("/healthz")
    text = _scrape(client)
    assert "# TYPE trajscope_job_rows gauge" in text
    assert 'trajscope_job_rows{kind="evaluation",status="done"} 1.0' in text
    assert 'trajscope_job_rows{kind="evaluation",status="pending"} 1.0' in text
    assert 'trajscope_jobs_not_sent{kind="evaluation"} 1.0' in text
    assert 'trajscope_judge_decision_rows{backend="openai",model="gpt-test",outcome="ok"} 1.0' in text
    assert 'trajscope_judge_decision_rows{backend="openai",model="gpt-test",outcome="error"} 1.0' in text
    assert "django_http_requests_latency_seconds_by_view_method" in text


def test_event_counters_grow_when_events_happen_and_never_fall_when_rows_go(
        client, django_capture_on_commit_callbacks):
    run = run_with_one_step_gold("counted", 2)
    with django_capture_on_commit_callbacks(execute=True):
        job = evaluation.create_evaluation(runs=[run], judge_config=JudgeConfigFactory(name="exact", backend="exact"))
        evaluation.start_evaluation(job)
    job.refresh_from_db()
    assert job.status == "done"
    decisions = JudgeDecision.objects.count()
    assert decisions

    text = _scrape(client)
    assert "# TYPE trajscope_judge_decisions_total counter" in text
    for kind in JudgeDecision.objects.values_list("kind", flat=True).distinct():
        made = JudgeDecision.objects.filter(kind=kind).count()
        assert f'trajscope_judge_decisions_total{{backend="exact",kind="{kind}",model="",outcome="ok"}} {float(made)}' in text
    assert 'trajscope_trajectory_scores_total{outcome="ok"} 2.0' in text
    assert 'trajscope_jobs_finished_total{kind="evaluation",status="done"} 1.0' in text
    assert 'trajscope_job_queue_wait_seconds_count{kind="evaluation"} 1.0' in text
    assert 'trajscope_job_run_seconds_count{kind="evaluation"} 1.0' in text
    assert f'trajscope_judge_latency_seconds_count{{backend="exact",model=""}} {float(decisions)}' in text

    TrajectoryScore.objects.all().delete()
    JudgeDecision.objects.all().delete()
    EvaluationJob.objects.all().delete()
    text = _scrape(client)
    assert 'trajscope_trajectory_scores_total{outcome="ok"} 2.0' in text
    assert 'trajscope_jobs_finished_total{kind="evaluation",status="done"} 1.0' in text
    assert 'trajscope_trajectory_score_rows{outcome="ok"} 0.0' in text
    assert 'trajscope_job_rows{kind="evaluation"' not in text


def test_an_import_job_counts_its_queue_wait_and_run_time_apart(client, django_capture_on_commit_callbacks):
    job = ImportJobFactory(upload="")
    ImportJob.objects.filter(pk=job.pk).update(created_at=timezone.now() - timedelta(seconds=30))
    with django_capture_on_commit_callbacks(execute=True):
        job = run_import_job(job.pk)
    text = _scrape(client)
    assert f'trajscope_jobs_finished_total{{kind="import",status="{job.status}"}} 1.0' in text
    wait = float(text.split('trajscope_job_queue_wait_seconds_sum{kind="import"} ')[1].split()[0])
    ran = float(text.split('trajscope_job_run_seconds_sum{kind="import"} ')[1].split()[0])
    assert 30 <= wait < 60 and 0 <= ran < 30


def test_a_broker_that_is_down_is_probed_once_with_a_short_timeout_and_reported(client, monkeypatch, settings):
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    use_broker(f"redis://127.0.0.1:{port}/0", monkeypatch)
    monkeypatch.setattr(monitoring.broker_probe, "asked_at", None)
    asked = []
    real_ask = monitoring.BrokerProbe._ask
    monkeypatch.setattr(monitoring.BrokerProbe, "_ask", staticmethod(lambda: asked.append(1) or real_ask()))
    first, second = _scrape(client), _scrape(client)
    for text in (first, second):
        assert "trajscope_broker_up 0.0" in text and "trajscope_queue_depth" not in text
        assert 'trajscope_job_rows' in text  # the other numbers are still there
    assert len(asked) == 1  # the second scrape reuses the answer
    settings.METRICS_BROKER_CACHE = 0
    _scrape(client)
    assert len(asked) == 2


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
    assert 'trajscope_job_rows{kind="evaluation",status="done"} 1.0' in text
    assert "python_gc_objects_collected_total" not in text  # per-process collectors are not mixed in


def test_an_outcome_job_that_fails_is_counted_among_the_finished_jobs(client, django_capture_on_commit_callbacks):
    # A configuration the outcome judge cannot use (stored before it was refused at the start) fails the job.
    job = OutcomeJob.objects.create(run=AgentRunFactory(), judge_config=JudgeConfigFactory(backend="exact"), total=0)
    OutcomeJob.objects.filter(pk=job.pk).update(created_at=timezone.now() - timedelta(seconds=30))
    with django_capture_on_commit_callbacks(execute=True):
        job = run_outcome_job(job.pk)
    assert job.status == "failed"
    text = _scrape(client)
    assert 'trajscope_jobs_finished_total{kind="outcome judging",status="failed"} 1.0' in text
    wait = float(text.split('trajscope_job_queue_wait_seconds_sum{kind="outcome judging"} ')[1].split()[0])
    assert 30 <= wait < 60
    assert 'trajscope_job_run_seconds_count{kind="outcome judging"} 1.0' in text
