"""Offline judge throughput on step pairs, with and without sentence embeddings.

    .venv/bin/python benchmarks/judge_throughput.py

Structured pairs: every gold step of the labelled pairs file against every agent step of it (all
distinct), scored by their parts. Free-text pairs (a new text in every pair, embedding cache cold:
the worst case) and free-text trajectories (6 gold x 10 agent steps, 16 new texts per 60 pairs,
as in real step matching) exercise the MiniLM path. "Through the judge" adds hashing questions
and storing one trajectory decision per 6 x 10 block in a fresh SQLite database. The judge's
per-process caches (parsed actions, normalised texts, step parts and their comparisons) are
emptied before each measurement, so that no measurement profits from texts an earlier one saw.
"""

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

from judges import parsing  # noqa: E402
from judges import questions as q  # noqa: E402
from judges.backends import BackendSpec, make_backend, offline  # noqa: E402
from judges.labelled import load_labelled_pairs  # noqa: E402
from judges.models import JudgeConfig  # noqa: E402
from judges.services import get_judge  # noqa: E402
from judges.steps import JudgeStep  # noqa: E402


def rate(count: int, seconds: float) -> str:
    return f"{count} pairs in {seconds:.2f} s = {count / seconds:,.0f} pairs/s"


def forget_texts() -> None:
    for cached in (parsing.parsed, parsing._normalise_short, offline._parts, offline.compare_parts,
                   offline.identifiers):
        cached.cache_clear()


def main():
    labelled = load_labelled_pairs()
    gold = list({p.gold.text: p.gold for p in labelled}.values())
    agent = list({(p.agent.text, p.agent.observation): p.agent
                  for p in labelled if p.group != "gold_versions"}.values())
    structured = [q.step_match(g, a) for g in gold for a in agent]

    plain = make_backend(BackendSpec("offline", options={"embeddings": False}))
    forget_texts()
    started = time.perf_counter()
    plain.answer(structured)
    print(f"structured, without embeddings: {rate(len(structured), time.perf_counter() - started)}")

    with_embeddings = make_backend(BackendSpec("offline"))
    with_embeddings.answer([structured[0]])  # load the model before timing
    free_text = [
        q.step_match(JudgeStep(f"{g.text} (variant {n})"), JudgeStep(f"Then {a.text.lower()} once more, take {n}"))
        for n, (g, a) in enumerate(zip(gold * 40, reversed(gold * 40)))
    ]
    forget_texts()
    started = time.perf_counter()
    with_embeddings.answer(free_text)
    print(f"free text, with embeddings (cold cache): {rate(len(free_text), time.perf_counter() - started)}")
    forget_texts()
    started = time.perf_counter()
    plain.answer(free_text)
    print(f"free text, without embeddings (rapidfuzz): {rate(len(free_text), time.perf_counter() - started)}")
    trajectories = [
        q.trajectory_match([JudgeStep(f"{g.text} (run {n})") for g in gold[n % 20:][:6]],
                           [JudgeStep(f"Then {g.text.lower()} again, run {n}") for g in gold[(n + 3) % 20:][:10]])
        for n in range(40)
    ]
    pairs = sum(len(t.inputs["gold"]) * len(t.inputs["agent"]) for t in trajectories)
    forget_texts()
    started = time.perf_counter()
    with_embeddings.answer(trajectories)
    print(f"free text trajectories (6 x 10), with embeddings: {rate(pairs, time.perf_counter() - started)}")

    call_command("migrate", verbosity=0)
    judge = get_judge(JudgeConfig(name="offline", backend="offline", options={"embeddings": False}))
    blocks = [(gold[k % len(gold):][:6], agent[k % len(agent):][:10]) for k in range(100)]
    blocks = [(g, a) for g, a in blocks if len(g) == 6 and len(a) == 10]
    forget_texts()
    started = time.perf_counter()
    for g, a in blocks:
        judge.step_scores(g, a)
    print(f"through the judge (step_scores, 6 x 10, stored): {rate(60 * len(blocks), time.perf_counter() - started)}")


if __name__ == "__main__":
    main()
