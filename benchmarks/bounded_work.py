"""Work per request on a long trajectory: its page, its API detail and its judge decisions export.

A fresh SQLite database with one task and one run holding a trajectory of --steps steps (each with
a 600-character accessibility tree and a short reasoning, about the size of a WebArena step), scored
once with a whole-trajectory step match whose rationale has 716,678 characters (what the offline
judge wrote for a 1,000-step upload against two gold steps). Each request goes through Django's
test client in-process (view, queries, template; no network), logged in as a reviewer; the export
is read chunk by chunk, as a client would, with tracemalloc tracing the process's allocations.

    .venv/bin/python benchmarks/bounded_work.py [--steps 1000] [--repeats 5]
"""

import argparse
import os
import platform
import statistics
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RATIONALE_CHARS = 716_678


def _setup_django(folder: Path) -> None:
    os.environ["DATABASE_URL"] = f"sqlite:///{folder / 'bench.sqlite3'}"
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.base")
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def build(steps: int):
    from django.contrib.auth.models import Group

    from accounts.roles import REVIEWER
    from tests.factories import (
        AgentRunFactory, EvaluationJobFactory, JudgeDecisionFactory, TaskFactory, TrajectoryFactory,
        TrajectoryScoreFactory, UserFactory,
    )
    from trajectories.models import Step

    run = AgentRunFactory(name="long")
    trajectory = TrajectoryFactory(run=run, task=TaskFactory(task_id="77", number=77), step_count=steps)
    tree = ("[1] RootWebArea 'Orders' focused: True\n" + "[12] link 'Order #000123' \n" * 20)[:600]
    Step.objects.bulk_create([Step(trajectory=trajectory, index=n, url=f"http://shop.example/orders?page={n}",
                                   observation=tree, reasoning=f"Let me look at the next page ({n}).",
                                   action=f"click [{n}]", action_type="click", element_id=str(n))
                              for n in range(1, steps + 1)], batch_size=1000)
    job = EvaluationJobFactory(status="done")
    job.runs.add(run)
    decision = JudgeDecisionFactory(
        kind="trajectory_match", rationale="why " * (RATIONALE_CHARS // 4) + "ok",
        inputs={"gold": [{"text": "Click on 'Orders'"}, {"text": "Scroll down"}],
                "agent": [{"text": f"click [{n}]"} for n in range(1, steps + 1)]},
        output={"matrix": [[0.0] * steps, [0.0] * steps]},
    )
    score = TrajectoryScoreFactory(job=job, trajectory=trajectory, agent_steps=steps, gold_steps=2,
                                   details={"step_success": {"matched": []}})
    score.decisions.add(decision)
    reviewer = UserFactory(username="rev")
    reviewer.groups.add(Group.objects.get(name=REVIEWER))
    return trajectory, job, reviewer


def timed(client, url: str, query: dict, repeats: int) -> dict:
    times, sizes, peaks = [], [], []
    for _ in range(repeats):
        tracemalloc.start()
        start = time.perf_counter()
        response = client.get(url, query)
        size = sum(len(chunk) for chunk in response.streaming_content) if response.streaming \
            else len(response.content)
        times.append((time.perf_counter() - start) * 1000)
        peaks.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()
        sizes.append(size)
        assert response.status_code == 200, (url, response.status_code)
    return {"median_ms": statistics.median(times), "max_ms": max(times), "bytes": sizes[0],
            "peak_mb": max(peaks) / 1024 / 1024}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        _setup_django(Path(folder))
        from django.conf import settings
        from django.test import Client
        from django.urls import reverse

        settings.INGEST_MAX_STEPS = max(settings.INGEST_MAX_STEPS, args.steps)
        trajectory, job, reviewer = build(args.steps)
        client = Client()
        client.force_login(reviewer)
        print(f"Python {platform.python_version()}, {os.cpu_count()} CPUs, SQLite, {args.steps} steps, "
              f"rationale {RATIONALE_CHARS:,} characters, {args.repeats} repeats")
        print("| request | median ms | max ms | bytes | peak traced MB |")
        print("|---|---|---|---|---|")
        requests = [
            ("trajectory page (first page of steps)", reverse("metrics:trajectory-detail", args=[trajectory.pk]), {}),
            ("trajectory page, next steps (fragment)", reverse("metrics:trajectory-detail", args=[trajectory.pk]),
             {"steps_page": 2, "fragment": "steps"}),
            ("API trajectory detail", f"/api/trajectories/{trajectory.pk}/", {}),
            ("API trajectory detail, 100 steps", f"/api/trajectories/{trajectory.pk}/", {"steps_page_size": 100}),
            ("decisions export CSV", "/api/exports/decisions.csv", {"run": "long", "job": job.pk}),
            ("decisions export JSON", "/api/exports/decisions.json", {"run": "long", "job": job.pk}),
        ]
        for label, url, query in requests:
            found = timed(client, url, query, args.repeats)
            print(f"| {label} | {found['median_ms']:.0f} | {found['max_ms']:.0f} | {found['bytes']:,} | "
                  f"{found['peak_mb']:.1f} |")


if __name__ == "__main__":
    main()
