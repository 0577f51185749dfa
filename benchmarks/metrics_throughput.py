"""In-process throughput of the pure metric functions (no judge, no database).

Generates one run of 812 trajectories, one per WebArena task of test.raw.json (5-30 agent
steps, gold of 2-12 steps) with every judge answer precomputed: score matrices, neighbour
scores, requirement, answer and groundedness scores. Then times computing every metric of
METRICS.md for each trajectory, with each result's `to_dict()` as a job stores it, and the
aggregates and a paired comparison of two such runs.

    .venv/bin/python benchmarks/metrics_throughput.py [--repeats 5] [--seed 0]
"""

import argparse
import json
import os
import platform
import random
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from metrics import aggregation  # noqa: E402
from metrics.definitions import (  # noqa: E402
    ScoreMatrix,
    answer_quality,
    element_accuracy,
    outcome_category,
    partial_success,
    recovery,
    repetitiveness,
    requirements_needing_judge,
    step_success,
    task_success,
    task_success_questions,
)

SHARED_DATA = Path(os.environ.get("SHARED_DATA_DIR", ROOT.parent / "shared" / "data"))
SITE_URLS = {
    "__SHOPPING__": "http://localhost:7770",
    "__SHOPPING_ADMIN__": "http://localhost:7780/admin",
    "__REDDIT__": "http://localhost:9999",
    "__GITLAB__": "http://localhost:8023",
    "__MAP__": "http://localhost:3000",
    "__WIKIPEDIA__": "http://localhost:8888",
}
ACTIONS = ("click [{id}]", "hover [{id}]", "type [{id}] [laptop] [1]", "scroll [down]", "go_back", "press [Enter]")
FORCED_STOPS = (
    ("repeated_action", "stop [Early stop: Same action for 3 times]"),
    ("invalid_actions", "stop [Early stop: Failed to parse actions for 3 times]"),
    ("max_steps", "stop [Early stop: Reach max steps 30]"),
)


@dataclass
class GeneratedTrajectory:
    task_id: int
    sites: list
    eval_config: dict
    requirements: list
    score_rows: list
    agent_steps: int
    neighbour_scores: list
    planned: list
    executed: list
    final_answer: str | None
    last_url: str
    status: str
    reason: str
    requirement_scores: dict
    answer_scores: dict
    grounded_score: float | None
    relevant_score: float | None


def _score(rng: random.Random, match: bool) -> float:
    return round(rng.uniform(0.7, 1.0) if match else rng.uniform(0.0, 0.69), 3)


def _requirements(eval_config: dict) -> list:
    answers = eval_config.get("reference_answers") or {}
    for key in ("must_include", "fuzzy_match"):
        if isinstance(answers.get(key), list):
            return answers[key]
    return []


def _final_answer(rng: random.Random, eval_config: dict) -> str:
    answers = eval_config.get("reference_answers") or {}
    if rng.random() < 0.5 and answers:
        if isinstance(answers.get("exact_match"), str):
            return answers["exact_match"]
        return ", ".join(_requirements(eval_config)) or "N/A"
    return rng.choice(["N/A", "I could not find it.", "The answer is 42", "'N/A'"])


def _last_url(rng: random.Random, eval_config: dict) -> str:
    reference = eval_config.get("reference_url") or "__SHOPPING__/"
    url = rng.choice(reference.split(" |OR| "))
    for placeholder, site_url in SITE_URLS.items():
        url = url.replace(placeholder, site_url)
    return url if rng.random() < 0.5 else url + "/other"


def generate(tasks: list, seed: int) -> list[GeneratedTrajectory]:
    rng = random.Random(seed)
    trajectories = []
    for task in tasks:
        eval_config = task["eval"]
        n, m = rng.randint(5, 30), rng.randint(2, 12)
        # The agent follows the gold path with probability 0.6 per step, else wanders.
        follows = [rng.random() < 0.6 for _ in range(n)]
        path = []
        j = 0
        for i in range(n):
            path.append(j if follows[i] and j < m else None)
            j += path[-1] is not None
        rows = [[_score(rng, path[i] == g) for i in range(n)] for g in range(m)]
        executed = [rng.choice(ACTIONS).format(id=rng.randint(1, 2000)) for _ in range(n)]
        planned = [
            None if rng.random() < 0.1 else (action if rng.random() < 0.8 else "scroll [direction=down]")
            for action in executed
        ]
        executed = ["none" if rng.random() < 0.05 else action for action in executed]
        ending = rng.random()
        if ending < 0.2:
            reason, stop = rng.choice(FORCED_STOPS)
            status, final_answer = "early_stop", None
            planned.append(None)
            executed.append(stop)
        elif ending < 0.3:
            status, reason, final_answer = "no_stop", "", None
        else:
            final_answer = _final_answer(rng, eval_config)
            status, reason = ("na" if final_answer.strip("'") == "N/A" else "answered"), ""
        requirements = _requirements(eval_config)
        fuzzy = (eval_config.get("reference_answers") or {}).get("fuzzy_match")
        references = (fuzzy if isinstance(fuzzy, list) else []) + [eval_config.get("string_note") or ""]
        trajectories.append(
            GeneratedTrajectory(
                task_id=task["task_id"],
                sites=task["sites"],
                eval_config=eval_config,
                requirements=requirements,
                score_rows=rows,
                agent_steps=n,
                neighbour_scores=[_score(rng, rng.random() < 0.15) for _ in range(n - 1)],
                planned=planned,
                executed=executed,
                final_answer=final_answer,
                last_url=_last_url(rng, eval_config),
                status=status,
                reason=reason,
                requirement_scores={text: rng.random() for text in requirements},
                answer_scores={text: rng.random() for text in references},
                grounded_score=rng.random() if final_answer else None,
                relevant_score=rng.random() if final_answer else None,
            )
        )
    return trajectories


def score(trajectory: GeneratedTrajectory, tau: float = 0.7) -> dict:
    """Every metric of one trajectory, as an evaluation job computes and stores them."""
    matrix = ScoreMatrix(trajectory.score_rows, agent_steps=trajectory.agent_steps)
    ssr = step_success(matrix, tau=tau)
    rec = recovery(matrix, tau=tau)
    rep = repetitiveness(trajectory.neighbour_scores, matrix.agent_steps, tau=tau)
    elements = element_accuracy(trajectory.planned, trajectory.executed)
    needing = requirements_needing_judge(trajectory.requirements, trajectory.final_answer)
    partial = partial_success(trajectory.requirements, trajectory.final_answer,
                              {text: trajectory.requirement_scores[text] for text in needing}, tau=tau)
    quality = answer_quality(trajectory.final_answer, trajectory.grounded_score, trajectory.relevant_score, tau=tau)
    questions = task_success_questions(trajectory.eval_config, final_answer=trajectory.final_answer,
                                       last_url=trajectory.last_url, site_urls=SITE_URLS)
    success = task_success(
        trajectory.eval_config, final_answer=trajectory.final_answer, last_url=trajectory.last_url,
        answer_scores={question.reference: trajectory.answer_scores[question.reference] for question in questions},
        site_urls=SITE_URLS, tau=tau,
    )
    outcome = outcome_category(trajectory.status, trajectory.reason, matrix.agent_steps, matrix.gold_steps)
    return {
        "sites": trajectory.sites,
        "paradigm": "step_by_step",
        "step_success": ssr.value,
        "recovery": rec.value,
        "repetitiveness": rep.value,
        "element_accuracy": elements.value,
        "partial_success": partial.value,
        "grounded": quality.grounded,
        "relevant": quality.relevant,
        "correct": quality.correct,
        "success": success.value,
        "outcome_status": outcome.status,
        "outcome_reason": outcome.reason,
        "agent_steps": outcome.agent_steps,
        "gold_steps": outcome.gold_steps,
        "details": {
            "step_success": ssr.to_dict(),
            "recovery": rec.to_dict(),
            "repetitiveness": rep.to_dict(),
            "element_accuracy": elements.to_dict(),
            "partial_success": partial.to_dict(),
            "answer_quality": quality.to_dict(),
            "success": success.to_dict(),
        },
    }


def aggregate(rows: list[dict]) -> None:
    aggregation.summarize_metrics(rows)
    aggregation.summarize_groups(rows, aggregation.site_group)
    aggregation.summarize_metrics(aggregation.within_successful(rows))
    aggregation.outcome_table(rows)
    aggregation.length_comparison(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    tasks = json.loads((SHARED_DATA / "webarena" / "test.raw.json").read_text(encoding="utf-8"))
    run_a, run_b = generate(tasks, args.seed), generate(tasks, args.seed + 1)
    agent_steps = sum(t.agent_steps for t in run_a)
    judge_scores = sum(len(t.score_rows) * t.agent_steps for t in run_a)
    print(f"{len(run_a)} trajectories, {agent_steps} agent steps, {judge_scores} step-pair scores "
          f"(python {platform.python_version()}, {os.cpu_count()} CPUs)")

    best = float("inf")
    for _ in range(args.repeats):
        start = time.perf_counter()
        rows = [score(trajectory) for trajectory in run_a]
        json.dumps([row["details"] for row in rows])
        best = min(best, time.perf_counter() - start)
    print(f"metrics + details JSON: best of {args.repeats}: {best:.3f} s = {len(run_a) / best:,.0f} trajectories/s "
          f"({best / len(run_a) * 1e6:,.0f} us each)")

    rows_b = [score(trajectory) for trajectory in run_b]
    start = time.perf_counter()
    aggregate(rows)
    aggregated = time.perf_counter() - start
    print(f"aggregates (run, per site, within successful, outcome table, lengths): {aggregated * 1000:.1f} ms")
    summaries = aggregation.summarize_metrics(rows)
    print("run means (nulls): " + ", ".join(
        f"{metric} {summary.mean:.3f} ({summary.null_count})"
        for metric, summary in summaries.items() if summary.mean is not None))

    start = time.perf_counter()
    for metric in aggregation.METRICS:
        aggregation.compare_paired(
            {t.task_id: row[metric] for t, row in zip(run_a, rows) if metric in row},
            {t.task_id: row[metric] for t, row in zip(run_b, rows_b) if metric in row},
        )
    compared = time.perf_counter() - start
    print(f"paired comparison of two runs, {len(aggregation.METRICS)} metrics, 10,000 bootstrap resamples each: "
          f"{compared * 1000:.0f} ms")


if __name__ == "__main__":
    main()
