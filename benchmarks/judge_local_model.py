"""The `openai` judge against SmolLM2-135M-Instruct served by llama.cpp on this machine, with
structured output on (`auto`, which finds llama.cpp's spelling) and off (`none`).

    .venv/bin/python benchmarks/judge_local_model.py [--threads 2] [--modes auto none]

Needs .venv-llm (bin/setup-local-model). Into a fresh SQLite database: the demo data (tasks, the
two demo runs of 3 trajectories, their gold), then for each mode, with no decision cached, an
evaluation of each demo run and the outcome judge over the 15 Online-Mind2Web trajectories of the
shared sample (`abp_run`). Per workload and mode: requests per trajectory (retries and repair
requests included), the share of the model's answers parsed at the first try, the share that
failed (stored as errors), and seconds per trajectory, with the 1-minute load average at the start and
the end of each workload (a shared machine's other work slows it). The server answers one request at a time.
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
os.environ["MEDIA_ROOT"] = tempfile.mkdtemp()
os.environ.pop("CELERY_BROKER_URL", None)  # jobs run in this process

import django  # noqa: E402

django.setup()

from django.conf import settings  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db.models import Q, Sum  # noqa: E402

from judges.llama_server import MODEL_NAME, LlamaServer  # noqa: E402
from judges.models import JudgeConfig, JudgeDecision  # noqa: E402
from judges.outcome_judging import judge_outcomes  # noqa: E402
from metrics.services.evaluation import create_evaluation, evaluate_units, plan_units, refresh_progress  # noqa: E402
from judges.services import get_judge  # noqa: E402
from trajectories.models import AgentRun  # noqa: E402
from trajectories.services.ingest import import_paths  # noqa: E402
from trajectories.services.runs import get_or_create_run  # noqa: E402

OM2W = Path(os.environ.get("SHARED_DATA_DIR", ROOT.parent / "shared" / "data")) / "agent-outputs" / "online-mind2web"
OPTIONS = {"concurrency": 1, "timeout": 600, "max_retries": 1, "screenshots": False, "max_answer_tokens": 512}
# Jobs start only on a configuration whose endpoint test passed; under `none` the model may fail that test,
# and what its answers become in an evaluation is what is measured, so the configurations count as tested.
PASSED_TEST = {"ok": True, "tested_at": "2026-11-28T00:00:00+00:00", "backend": "openai", "error": "",
               "questions": []}


def evaluate(runs, config) -> int:
    """Evaluate each run with the config, in this process; returns the trajectories scored."""
    judge, scored = get_judge(config), 0
    for run in runs:
        job = create_evaluation(runs=[run], judge_config=config)
        units = [(unit.trajectory_id, unit.gold_id) for unit in plan_units(job)]
        evaluate_units(job, judge, units)
        refresh_progress(job)
        scored += len(units)
    return scored


def tally(trajectories: int, seconds: float) -> dict:
    """What the decisions made since the cache was emptied say, per trajectory."""
    decisions = JudgeDecision.objects.filter(backend="openai")
    by_model = decisions.filter(~Q(structured_output="") | ~Q(error=""))  # not settled without the model
    answered = by_model.count()
    first_try = by_model.filter(error="", repairs=0).count()
    return {
        "trajectories": trajectories,
        "requests": decisions.aggregate(calls=Sum("calls"))["calls"] or 0,
        "answers": answered,
        "first_try": first_try / answered if answered else None,
        "failed": by_model.exclude(error="").count() / answered if answered else None,
        "seconds": seconds,
    }


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--modes", nargs="+", default=["auto", "none"])
    args = parser.parse_args()
    logging.getLogger("httpx2").setLevel(logging.WARNING)
    call_command("migrate", verbosity=0)
    call_command("load_demo", verbosity=0)  # its own evaluations use the offline judge
    demo = list(AgentRun.objects.order_by("name"))
    abp = get_or_create_run("abp")
    import_paths([OM2W / "abp_run"], abp)
    rows = []
    with LlamaServer(settings.BASE_DIR / ".venv-llm", threads=args.threads) as server:
        for mode in args.modes:
            config = JudgeConfig.objects.create(name=f"smollm2-{mode}", backend="openai", model=MODEL_NAME,
                                                base_url=server.base_url,
                                                options={**OPTIONS, "structured_output": mode},
                                                last_test=PASSED_TEST)
            for workload, work in (("demo runs, evaluation", lambda: evaluate(demo, config)),
                                   ("Online-Mind2Web, outcome judge", lambda: judge_outcomes(abp, config).total)):
                JudgeDecision.objects.all().delete()
                load, started = os.getloadavg()[0], time.perf_counter()
                trajectories = work()
                row = tally(trajectories, time.perf_counter() - started)
                rows.append((workload, mode, {**row, "load": (load, os.getloadavg()[0])}))
                print(workload, mode, row, flush=True)
    print(f"SmolLM2-135M-Instruct (Q4_1) on llama-cpp-python's server, {args.threads} threads, one request at a time")
    print(f"{'workload':<32} {'structured output':<18} {'traj.':>5} {'requests/traj.':>15} {'first try':>10} "
          f"{'failed':>7} {'s/traj.':>8} {'load avg.':>10}")
    for workload, mode, row in rows:
        n = row["trajectories"]
        print(f"{workload:<32} {mode:<18} {n:>5} {row['requests'] / n:>15.2f} {row['first_try']:>10.0%} "
              f"{row['failed']:>7.0%} {row['seconds'] / n:>8.1f} {row['load'][0]:>4.1f}-{row['load'][1]:.1f}")


if __name__ == "__main__":
    main()
