"""The outcome judge over a run, against a local OpenAI-compatible server that answers after 300 ms.

    .venv/bin/python benchmarks/outcome_judge.py [--trajectories 100] [--screenshots 5] [--concurrency 16]

A generated run whose trajectories each have their own task and `--screenshots` distinct
screenshots of 50 kB, judged into a fresh SQLite database: one key-points request per task, one
per screenshot and one verdict per trajectory; then the same run again, which must make zero
requests. The floor is requests x 0.3 s / concurrency; the three questions of a chunk of
trajectories are asked one after the other, which the measured time shows against that floor.
"""

import argparse
import hashlib
import logging
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.base")
os.environ["DATABASE_URL"] = f"sqlite:///{tempfile.mkdtemp()}/bench.sqlite3"
os.environ["MEDIA_ROOT"] = tempfile.mkdtemp()

import django  # noqa: E402

django.setup()

from django.core.files.base import ContentFile  # noqa: E402
from django.core.management import call_command  # noqa: E402

from judges.local_llm import LocalLLMServer  # noqa: E402
from judges.models import JudgeConfig  # noqa: E402
from judges.outcome_judging import judge_outcomes  # noqa: E402
from trajectories.models import AgentRun, Screenshot, Step, Task, Trajectory  # noqa: E402

IMAGE_BYTES = 50_000


def make_run(trajectories: int, screenshots: int) -> AgentRun:
    run = AgentRun.objects.create(name="bench-outcomes")
    for n in range(trajectories):
        task = Task.objects.create(benchmark="bench", task_id=str(n), intent=f"Find the price of product {n}.")
        trajectory = Trajectory.objects.create(run=run, task=task, final_answer=f"${n}", outcome_status="answered",
                                               step_count=screenshots, content_hash=f"{n:064d}")
        for index in range(1, screenshots + 1):
            content = f"{n}-{index}".encode().ljust(IMAGE_BYTES, b".")
            screenshot = Screenshot(sha256=hashlib.sha256(content).hexdigest(), size=len(content))
            screenshot.image.save(f"{n}-{index}.png", ContentFile(content), save=False)
            screenshot.save()
            Step.objects.create(trajectory=trajectory, index=index, action=f"click [{index}]", screenshot=screenshot)
    return run


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--trajectories", type=int, default=100)
    parser.add_argument("--screenshots", type=int, default=5)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--delay", type=float, default=0.3)
    args = parser.parse_args()
    logging.getLogger("httpx2").setLevel(logging.WARNING)  # one line per request otherwise
    call_command("migrate", verbosity=0)
    run = make_run(args.trajectories, args.screenshots)
    with LocalLLMServer(delay=args.delay) as server:
        config = JudgeConfig.objects.create(
            name="bench", backend="openai", model="gpt-4o-mini", base_url=server.base_url,
            options={"concurrency": args.concurrency, "requests_per_minute": 0, "timeout": 30},
        )
        started = time.perf_counter()
        first = judge_outcomes(run, config)
        first_time = time.perf_counter() - started
        calls = len(server.requests)
        started = time.perf_counter()
        second = judge_outcomes(run, config)
        second_time = time.perf_counter() - started
        repeat_calls = len(server.requests) - calls
    floor = calls * args.delay / args.concurrency
    print(f"first pass: {first.judged} verdicts, {len(first.errors)} without one, {calls} requests in "
          f"{first_time:.2f} s (floor {floor:.2f} s), max {server.max_in_flight} in flight")
    print(f"second pass: {second.judged} verdicts, {repeat_calls} requests in {second_time:.2f} s")


if __name__ == "__main__":
    main()
