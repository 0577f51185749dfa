import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from django.conf import settings
from hypothesis import settings as hypothesis_settings

# Performance is measured by benchmarks/, never by tests: no per-example deadline on a busy machine.
hypothesis_settings.register_profile("project", deadline=None)
# CI replays the same examples on every run, so that a red build always means a change broke something;
# local runs draw new ones and so keep exploring.
hypothesis_settings.register_profile("ci", deadline=None, derandomize=True)
hypothesis_settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "project"))

SHARED_DATA = Path(os.environ.get("SHARED_DATA_DIR", settings.BASE_DIR.parent / "shared" / "data"))


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The real third-party samples (WebArena configs, render files, gold xlsx)."""
    assert SHARED_DATA.is_dir(), f"shared data not found at {SHARED_DATA} (set SHARED_DATA_DIR)"
    return SHARED_DATA


@pytest.fixture(autouse=True)
def _media_root(tmp_path, settings):
    settings.MEDIA_ROOT = tmp_path / "media"


@pytest.fixture(autouse=True)
def _no_api_rate_limits(settings):
    """API rate-limit counts live in a cache that outlasts each test (one address for every
    anonymous request); tests of the limits set their own low rates."""
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "DEFAULT_THROTTLE_RATES": {}}


@pytest.fixture(autouse=True)
def _tasks_in_process():
    """Tasks sent by a test run in-process unless the test starts real workers (`celery_workers`)."""
    from config.celery import app

    eager = app.conf.task_always_eager
    app.conf.task_always_eager = True
    yield
    app.conf.task_always_eager = eager


CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


@pytest.fixture(scope="module")
def browser():
    """Debian's Chromium driven by Playwright (never a downloaded browser).

    One per test module: Playwright's event loop (and the flag below) ends with the module, so
    tests that run later, and the processes they start, see the normal async-safety checks.
    """
    from playwright.sync_api import sync_playwright

    # Playwright's sync API runs an event loop in this thread; the ORM calls made by tests
    # between page actions are still synchronous.
    previous = os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE")
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    try:
        with sync_playwright() as playwright:
            chromium = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
            yield chromium
            chromium.close()
    finally:
        if previous is None:
            os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
        else:
            os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = previous


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.set_default_timeout(15_000)
    yield page
    context.close()


def pytest_report_header(config):
    from django.db import connection

    broker = "none (tasks run in-process)" if settings.CELERY_TASK_ALWAYS_EAGER else settings.CELERY_BROKER_URL
    return [f"database: {connection.vendor} ({settings.DATABASES['default']['NAME']}); broker: {broker}"]


class Workers:
    """Real Celery worker processes on a queue of this test's own, against the test database."""

    def __init__(self, env: dict, log_dir: Path):
        self.env, self.log_dir, self.processes = env, log_dir, []

    def start(self, cwd: Path | None = None, app: str = "config") -> "subprocess.Popen":
        """A worker process; `cwd` elsewhere than the project runs it as on another machine; `app` the
        Celery app's module (one of the tests' own wraps the project's with faults)."""
        log = (self.log_dir / f"worker-{len(self.processes)}.log").open("w+")
        env = self.env if cwd is None else {**self.env, "PYTHONPATH": str(settings.BASE_DIR)}
        process = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", app, "worker", "--pool=solo", "-Q", self.env["CELERY_TASK_DEFAULT_QUEUE"],
             "--without-heartbeat", "--without-gossip", "--without-mingle", "-l", "info"],
            cwd=cwd or settings.BASE_DIR, env=env, stdout=log, stderr=subprocess.STDOUT,
        )
        process.log = log
        self.processes.append(process)
        return process

    def use_broker(self, url: str, monkeypatch) -> None:
        """Send and receive through another broker (e.g. a Redis the test stops and starts)."""
        use_broker(url, monkeypatch)
        self.env["CELERY_BROKER_URL"] = url

    def wait_until(self, condition, seconds: float) -> None:
        """Poll `condition` until it holds; fails with the workers' output when `seconds` run out."""
        deadline = time.monotonic() + seconds
        while not condition():
            assert time.monotonic() < deadline, self.output()
            time.sleep(0.2)

    def output(self) -> str:
        texts = []
        for process in self.processes:
            process.log.seek(0)
            texts.append(process.log.read())
        return "\n".join(texts)

    def stop_all(self):
        for process in self.processes:
            if process.poll() is None:
                process.terminate()
                process.wait(timeout=30)


def _test_database_url() -> str:
    from django.db import connection

    db = connection.settings_dict
    if connection.vendor == "sqlite":
        return f"sqlite:///{db['NAME']}"
    password = f":{db['PASSWORD']}" if db.get("PASSWORD") else ""
    return f"postgres://{db['USER']}{password}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"


@pytest.fixture
def celery_workers(tmp_path, transactional_db):
    """Start real workers with `celery_workers.start()`; tasks sent by the test reach only them.

    The configured broker is used (Redis in CI); with none, a folder-backed broker that both
    processes can reach.
    """
    from config.celery import app

    queue = f"test-{uuid.uuid4().hex[:8]}"
    env = {**os.environ, "DATABASE_URL": _test_database_url(), "DJANGO_SETTINGS_MODULE": "config.settings.base",
           "CELERY_TASK_DEFAULT_QUEUE": queue, "MEDIA_ROOT": str(settings.MEDIA_ROOT),
           "JOB_SWEEP_INTERVAL": "1", "JOB_REDISPATCH_AFTER": "5"}
    changed = {"task_default_queue": queue, "task_always_eager": False, "broker_url": app.conf.broker_url}
    if settings.CELERY_TASK_ALWAYS_EAGER:
        folder = tmp_path / "broker"
        folder.mkdir()
        env.update(CELERY_BROKER_URL="filesystem://", CELERY_BROKER_FOLDER=str(folder))
        changed.update(
            broker_url="filesystem://",
            broker_transport_options={"data_folder_in": str(folder), "data_folder_out": str(folder),
                                      "control_folder": str(folder), "store_processed": False},
        )
    saved = {key: app.conf[key] for key in changed}
    app.conf.update(changed)
    _forget_producer_pool(app)
    workers = Workers(env, tmp_path)
    yield workers
    workers.stop_all()
    app.conf.update(saved)
    _forget_producer_pool(app)


def use_broker(url: str, monkeypatch) -> None:
    """Point this process's sends at `url` for one test (Celery reads CELERY_BROKER_URL first)."""
    from config.celery import app

    monkeypatch.setenv("CELERY_BROKER_URL", url)
    monkeypatch.setitem(app.conf, "broker_url", url)
    monkeypatch.setitem(app.conf, "task_always_eager", False)
    # Pools are bound to the broker they were made for: new ones now, the old ones back afterwards.
    monkeypatch.setattr(app, "_pool", None)
    monkeypatch.setattr(app.amqp, "_producer_pool", None)


def _forget_producer_pool(app):
    """Producer pools are bound to the broker they were made for; make the next send build anew."""
    app._pool = None
    app.amqp._producer_pool = None
