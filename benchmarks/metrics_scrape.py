"""A `/metrics` scrape while the broker is down (target: under 1 s).

A fresh SQLite database, Celery pointed at a Redis address where nothing listens (as when the
broker has gone away); scrapes through Django's test client from loopback. The first scrape
probes the broker (METRICS_BROKER_TIMEOUT); the following ones reuse its answer until
METRICS_BROKER_CACHE runs out. For comparison, the time Celery's own connection takes to give up
on the same address with its default retries, as the scrape used to.

    .venv/bin/python benchmarks/metrics_scrape.py [--scrapes 20]
"""

import argparse
import os
import platform
import socket
import statistics
import tempfile
import time
from pathlib import Path

from gold_import import _setup_django


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scrapes", type=int, default=20)
    args = parser.parse_args()
    broker = f"redis://127.0.0.1:{_closed_port()}/0"
    os.environ["CELERY_BROKER_URL"] = broker
    with tempfile.TemporaryDirectory() as folder:
        _setup_django(Path(folder))
        from django.test import Client
        from django.urls import resolve

        from config.celery import app

        app.conf.update(task_always_eager=False, broker_url=broker)
        resolve("/metrics")  # the URL map imports every app: a cost of the first request, not of scraping
        client = Client()
        times = []
        for _ in range(args.scrapes):
            started = time.perf_counter()
            response = client.get("/metrics")
            times.append(time.perf_counter() - started)
            assert response.status_code == 200 and b"trajscope_broker_up 0.0" in response.content
        started = time.perf_counter()
        try:
            with app.connection_for_write() as connection:
                connection.default_channel.queue_declare(queue=app.conf.task_default_queue, passive=True)
        except Exception:  # noqa: BLE001 - the broker is down: only the time matters
            pass
        default_wait = time.perf_counter() - started
    print(f"python {platform.python_version()}, {os.cpu_count()} cores; broker {broker} (nothing listening)")
    print(f"first scrape (probes the broker): {times[0] * 1000:.0f} ms")
    print(f"later scrapes (answer reused): median {statistics.median(times[1:]) * 1000:.0f} ms, "
          f"max {max(times[1:]) * 1000:.0f} ms over {len(times) - 1}")
    print(f"Celery's own connection giving up with its default retries: {default_wait:.1f} s")


if __name__ == "__main__":
    main()
