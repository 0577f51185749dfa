"""Jobs survive their broker: a real Redis is stopped before a job is sent and in the middle of
one, then started again; real workers finish every job with exactly one result per unit. The same
Redis is the cache too (as on several hosts): while it is down, reads go on, uncached and unthrottled."""

import logging
import shutil
import socket
import subprocess
import time

import pytest
from django.contrib.auth.models import Group
from django.test import Client
from rest_framework.test import APIClient

from judges.local_llm import LocalLLMServer
from metrics.models import EvaluationJob, TrajectoryScore
from metrics.services import evaluation
from tests.factories import JudgeConfigFactory, UserFactory, run_with_one_step_gold
from trajectories.models import ImportJob, Trajectory
from trajectories.services.tasks import import_task_file


class RedisServer:
    """A Redis of the test's own, so that stopping it disturbs nothing else."""

    def __init__(self, folder):
        self.folder = folder
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.process = None

    def start(self):
        binary = shutil.which("redis-server")
        assert binary, "redis-server is needed (apt-get install redis-server)"
        self.process = subprocess.Popen(
            [binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
             "--dir", str(self.folder)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                    return
            except OSError:
                time.sleep(0.1)
        raise AssertionError("redis-server did not start")

    def stop(self):
        self.process.kill()  # as a crash would: everything queued is gone
        self.process.wait(timeout=10)


@pytest.fixture
def redis_server(tmp_path):
    server = RedisServer(tmp_path)
    server.start()
    yield server
    if server.process.poll() is None:
        server.stop()


def _one_score_per_trajectory(job):
    job.refresh_from_db()
    scored = list(TrajectoryScore.objects.filter(job=job).values_list("trajectory_id", flat=True))
    expected = Trajectory.objects.filter(run__in=job.runs.all()).count()
    assert job.status == EvaluationJob.Status.DONE
    assert (job.done, job.failed) == (expected, 0)
    assert len(scored) == len(set(scored)) == expected


@pytest.fixture
def redis_cache(redis_server, settings):
    """The test's Redis as the cache, with the API's rate limits on (their counts live there)."""
    settings.CACHES = {"default": {"BACKEND": "infrastructure.cache.OptionalRedisCache",
                                   "LOCATION": redis_server.url.removesuffix("/0") + "/1"}}
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "DEFAULT_THROTTLE_RATES": {
        "anon": "1000/minute", "user": "1000/minute", "token": "1000/minute"}}


def test_jobs_created_while_the_broker_is_down_start_when_it_is_back(celery_workers, redis_server, redis_cache,
                                                                    shared_data, monkeypatch, caplog):
    from django.core.cache import cache

    celery_workers.use_broker(redis_server.url, monkeypatch)
    celery_workers.start()
    celery_workers.wait_until(lambda: "ready" in celery_workers.output(), 60)
    import_task_file(shared_data / "webarena" / "test.raw.json")
    run = run_with_one_step_gold("outage", 3)
    reviewer = UserFactory(username="rita")
    reviewer.groups.add(Group.objects.get(name="reviewer"))
    api = APIClient()
    api.force_authenticate(reviewer)

    page = Client()
    page.force_login(reviewer)
    assert api.get("/api/runs/").status_code == 200 and page.get("/leaderboard/").status_code == 200
    assert cache.get("throttle_user_%s" % reviewer.pk)  # the rate limit counted in Redis

    redis_server.stop()
    with caplog.at_level(logging.WARNING, logger="infrastructure.cache"):
        assert api.get("/api/runs/").status_code == 200
        assert api.get("/api/leaderboard/").status_code == 200
        assert page.get("/leaderboard/").status_code == 200
        assert APIClient().post("/api/token/", {"username": "rita", "password": "pw-for-tests-123"}).status_code == 200
        response = api.post("/api/evaluations/", {"runs": ["outage"]}, format="json")
    assert response.status_code == 503 and response.json()["code"] == "workers_unreachable"
    assert [record.getMessage().startswith("the cache cannot be reached") for record in caplog.records
            if record.name == "infrastructure.cache"] == [True]  # logged once, not per request
    scraped = Client().get("/metrics").content.decode()
    errors = [line for line in scraped.splitlines() if line.startswith("trajscope_cache_errors_total")]
    assert errors and all(float(line.rsplit(" ", 1)[1]) > 0 for line in errors)
    with (shared_data / "trajectory-samples" / "llama3-8b_render_6.html").open("rb") as upload:
        response = api.post("/api/runs/import/", {"run": "uploaded", "files": [upload], "background": True},
                            format="multipart")
    assert response.status_code == 503, response.content
    job, upload_job = EvaluationJob.objects.get(), ImportJob.objects.get()
    assert (job.status, job.dispatched_at, upload_job.status) == ("pending", None, "pending")

    redis_server.start()
    celery_workers.wait_until(lambda: EvaluationJob.objects.get(pk=job.pk).status == "done", 90)
    celery_workers.wait_until(lambda: ImportJob.objects.get(pk=upload_job.pk).status == "done", 90)
    _one_score_per_trajectory(job)
    assert run.trajectories.count() == 3
    assert Trajectory.objects.filter(run__name="uploaded").count() == 1
    assert "sweeper sent evaluation" in celery_workers.output()


def test_a_broker_restart_in_the_middle_of_a_job_loses_nothing(celery_workers, redis_server, monkeypatch):
    celery_workers.use_broker(redis_server.url, monkeypatch)
    with LocalLLMServer(delay=0.3) as server:
        judge = JudgeConfigFactory(name="slow-llm", backend="openai", model="scripted", base_url=server.base_url,
                                   tested=True, options={"requests_per_minute": 0})
        run = run_with_one_step_gold("restarted", 3 * evaluation.CHUNK_SIZE)
        job = evaluation.create_evaluation(runs=[run], judge_config=judge)
        evaluation.start_evaluation(job)
        celery_workers.start()
        celery_workers.wait_until(lambda: TrajectoryScore.objects.filter(job=job).exists(), 120)

        redis_server.stop()
        time.sleep(2)
        assert EvaluationJob.objects.get(pk=job.pk).status == EvaluationJob.Status.RUNNING
        redis_server.start()
        celery_workers.wait_until(lambda: EvaluationJob.objects.get(pk=job.pk).status == EvaluationJob.Status.DONE,
                                  240)

    _one_score_per_trajectory(job)
