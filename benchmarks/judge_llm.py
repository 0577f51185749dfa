"""The openai backend against a local OpenAI-compatible server that answers after 300 ms.

    .venv/bin/python benchmarks/judge_llm.py [--decisions 1000] [--concurrency 16]

1,000 distinct step questions through `Judge.step_equivalent_pairs` (one lookup, parallel
requests, one write) into a fresh SQLite database; then the same questions again, which must
make zero requests. The floor is decisions x 0.3 s / concurrency.
"""

import argparse
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

import django  # noqa: E402

django.setup()

from django.core.management import call_command  # noqa: E402

from judges.local_llm import LocalLLMServer  # noqa: E402
from judges.models import JudgeConfig, JudgeDecision  # noqa: E402
from judges.services import get_judge  # noqa: E402
from judges.steps import JudgeStep  # noqa: E402


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--decisions", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--delay", type=float, default=0.3)
    args = parser.parse_args()
    logging.getLogger("httpx2").setLevel(logging.WARNING)  # one line per request otherwise
    call_command("migrate", verbosity=0)
    pairs = [
        (JudgeStep(f"Click on the 'Product {n}' link."), JudgeStep(f"click [{n}] where [{n}] is link 'Item {n}'"))
        for n in range(args.decisions)
    ]
    with LocalLLMServer(delay=args.delay) as server:
        config = JudgeConfig(
            name="bench", backend="openai", model="gpt-4o-mini", base_url=server.base_url,
            options={"concurrency": args.concurrency, "requests_per_minute": 0, "timeout": 30},
        )
        started = time.perf_counter()
        verdicts = get_judge(config).step_equivalent_pairs(pairs)
        first = time.perf_counter() - started
        calls = len(server.requests)
        failed = sum(v.score is None for v in verdicts)
        started = time.perf_counter()
        get_judge(config).step_equivalent_pairs(pairs)
        second = time.perf_counter() - started
        repeat_calls = len(server.requests) - calls
    floor = args.decisions * args.delay / args.concurrency
    print(f"first run: {args.decisions} decisions, {calls} requests, {failed} failed, in {first:.2f} s "
          f"({args.decisions / first:.1f}/s; floor {floor:.2f} s), max {server.max_in_flight} in flight")
    print(f"second run: {repeat_calls} requests in {second:.2f} s; {JudgeDecision.objects.count()} decisions stored")


if __name__ == "__main__":
    main()
