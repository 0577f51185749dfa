"""Runs written with COPY for the benchmarks measured at 50, 500 and 5,000 runs of 812 trajectories:
generating them through the models and services took longer than measuring them (784 s for 500 scored
runs), so the rows go straight to PostgreSQL (`COPY ... FROM STDIN`), with the per-run numbers the
services store computed by the same code the services call."""

import json
import os
import random
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHARED_DATA = Path(os.environ.get("SHARED_DATA_DIR", ROOT.parent / "shared" / "data"))
OUTCOMES = [("answered", ""), ("answered", ""), ("na", ""), ("early_stop", "repeated_action"),
            ("early_stop", "invalid_actions"), ("early_stop", "max_steps"), ("no_stop", "")]
PARADIGMS = ["step_by_step", "tree_search", "full_plan", "other"]
GOLD_STEPS = 12


def recreate_database(base_url: str, name: str, *, keep: bool = False) -> str:
    """An empty database `name` beside `base_url`'s (kept as it is when `keep` and it exists), and its URL."""
    import psycopg

    with psycopg.connect(base_url, autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone()
        if not (keep and exists):
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
            conn.execute(f"CREATE DATABASE {name}")
    return base_url.rsplit("/", 1)[0] + "/" + name


def copy_rows(table: str, columns: tuple[str, ...], rows) -> None:
    from django.db import connection

    with connection.cursor() as cursor:
        with cursor.cursor.copy(f"COPY {table} ({', '.join(columns)}) FROM STDIN") as copy:
            for row in rows:
                copy.write_row(row)


def reserve_ids(model, count: int) -> int:
    """The first of `count` primary keys taken from the table's sequence, so that rows copied with them can be
    referred to without reading them back."""
    from django.db import connection

    table = model._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute("SELECT nextval(pg_get_serial_sequence(%s, 'id'))", [table])
        first = cursor.fetchone()[0]
        cursor.execute("SELECT setval(pg_get_serial_sequence(%s, 'id'), %s)", [table, first + count - 1])
    return first


def scored(rng: random.Random, skill: float) -> tuple[dict, dict, int, int]:
    """Score columns and details of one trajectory, from a random judge matrix."""
    from metrics import definitions as md

    m, n = rng.randint(2, 12), rng.randint(1, 30)
    scores = tuple(tuple(round(rng.uniform(0.7, 1.0) if rng.random() < skill / m * 2 else rng.uniform(0, 0.69), 3)
                         for _ in range(n)) for _ in range(m))
    matrix = md.ScoreMatrix(scores=scores, agent_steps=n)
    ssr, rec = md.step_success(matrix), md.recovery(matrix)
    status, reason = rng.choice(OUTCOMES)
    values = {
        "step_success": ssr.value, "recovery": rec.value, "repetitiveness": round(rng.uniform(0.4, 1.0), 3),
        "element_accuracy": round(rng.uniform(0.2, 1.0), 3),
        "partial_success": round(rng.random(), 3) if rng.random() < 0.2 else None,
        "grounded": rng.random() < skill if status == "answered" else None,
        "relevant": rng.random() < skill if status == "answered" else None,
        "success": rng.random() < skill * 0.6, "success_source": "harness",
        "outcome_status": status, "outcome_reason": reason, "agent_steps": n, "gold_steps": m,
        "matched_steps": len(ssr.matched), "deviations": rec.deviations, "recoveries": rec.recoveries,
        "mean_recovery_cost": rec.mean_recovery_cost,
    }
    values["correct"] = None if values["grounded"] is None else values["grounded"] and values["relevant"]
    return values, {"step_success": ssr.to_dict(), "recovery": rec.to_dict()}, n, m


SCORE_COLUMNS = ("step_success", "recovery", "repetitiveness", "element_accuracy", "partial_success", "grounded",
                 "relevant", "correct", "success", "success_source", "check_success", "check_source",
                 "outcome_status", "outcome_reason", "agent_steps", "gold_steps", "matched_steps", "deviations",
                 "recoveries", "mean_recovery_cost")


@dataclass
class Shape:
    """One run's scores on every task, shared by the runs given this shape: scoring 812 trajectories costs
    about 0.2 s of Python, too much to do for each of 5,000 runs. Each run of a shape still has its own
    trajectories, scores, verdicts and aggregates."""

    skill: float
    scores: list[tuple[dict, str]]  # per task, in task order: (score columns, details as JSON text)
    aggregates: dict[str, list[tuple]]  # per paradigm: (scope, group, metric, mean, std, count, null_count, data)


def scored_shapes(rng: random.Random, tasks, count: int) -> list[Shape]:
    """`count` shapes of scores on `tasks`, each with the aggregates `store_aggregates` stores for them."""
    from metrics.services.aggregates import ROW_FIELDS, run_aggregates

    shapes = []
    for _ in range(count):
        skill = rng.uniform(0.2, 0.9)
        scores = []
        for _task in tasks:
            values, details, _, m = scored(rng, skill)
            values.update(gold_steps=min(m, GOLD_STEPS), check_success=rng.random() < skill * 0.6,
                          check_source="string_match")
            scores.append((values, json.dumps(details)))
        aggregates = {}
        for paradigm in PARADIGMS:
            rows = [{**{name: values.get(name) for name in ROW_FIELDS}, "sites": task.sites, "paradigm": paradigm}
                    for task, (values, _) in zip(tasks, scores)]
            aggregates[paradigm] = [
                (record.scope, record.group, record.metric, record.mean, record.std, record.count, record.null_count,
                 json.dumps(record.data)) for record in run_aggregates(None, None, rows)]
        shapes.append(Shape(skill, scores, aggregates))
    return shapes


@dataclass(frozen=True)
class Fixtures:
    """What every generated run refers to: the tasks in order, their reference golds, the judge of the
    evaluations and a named LLM judge giving verdicts."""

    tasks: list
    gold_of: dict  # task pk -> gold pk
    judge: object
    source: object


def base_fixtures() -> Fixtures:
    """The 812 tasks of test.raw.json, an approved reference gold of 12 steps per task, the offline judge and a
    named LLM judge (WebJudge)."""
    from django.contrib.auth import get_user_model

    from annotation.models import GoldStep, GoldTrajectory
    from judges.models import JudgeConfig
    from trajectories.models import Task, VerdictSource
    from trajectories.services.tasks import import_task_file

    import_task_file(SHARED_DATA / "webarena" / "test.raw.json")
    tasks = list(Task.objects.order_by("number"))
    annotator, _ = get_user_model().objects.get_or_create(username="bench-annotator")
    golds = GoldTrajectory.objects.bulk_create([
        GoldTrajectory(task=task, annotator=annotator, status="approved", is_reference=True, source="bench")
        for task in tasks])
    GoldStep.objects.bulk_create([GoldStep(gold=gold, index=i, text=f"Click on the 'Item {i}' link")
                                  for gold in golds for i in range(1, GOLD_STEPS + 1)], batch_size=2000)
    judge, _ = JudgeConfig.objects.get_or_create(name="offline", defaults={"backend": "offline"})
    source, _ = VerdictSource.objects.get_or_create(kind="llm_judge", name="WebJudge", model="o4-mini",
                                                    defaults={"threshold": 3})
    return Fixtures(tasks, {gold.task_id: gold.pk for gold in golds}, judge, source)


def add_scored_runs(first: int, last: int, fixtures: Fixtures, shapes: list[Shape], rng: random.Random, *,
                    stepped: int = 0) -> list[int]:
    """Runs `first`..`last - 1` (`agent-NNNN`), each with a trajectory per task (harness verdict, outcome,
    step count), the named judge's verdict per task, one finished evaluation scoring every trajectory against
    its task's reference gold, and that evaluation's aggregates; the first `stepped` runs also get their agent
    steps. Returns the runs' ids. The runs' tallies are left to `refresh_tallies`, as an import leaves them."""
    from django.db import transaction
    from django.utils import timezone

    from metrics.models import EvaluationJob, TrajectoryScore
    from trajectories.models import AgentRun, Step, Trajectory

    tasks, now = fixtures.tasks, timezone.now()
    with transaction.atomic():
        runs = AgentRun.objects.bulk_create([
            AgentRun(name=f"agent-{number:04d}", agent=f"agent {number % 7}", model=f"model-{number % 5}",
                     paradigm=PARADIGMS[number % len(PARADIGMS)]) for number in range(first, last)])
        jobs = EvaluationJob.objects.bulk_create([
            EvaluationJob(judge_config=fixtures.judge, status="done", total=len(tasks), done=len(tasks),
                          started_at=now, finished_at=now) for _ in runs])
        EvaluationJob.runs.through.objects.bulk_create([
            EvaluationJob.runs.through(evaluationjob_id=job.pk, agentrun_id=run.pk) for job, run in zip(jobs, runs)])
        made = [(run, job, shapes[(first + index) % len(shapes)]) for index, (run, job) in enumerate(zip(runs, jobs))]
        first_trajectory = reserve_ids(Trajectory, len(runs) * len(tasks))

        def trajectory_ids():
            pk = first_trajectory
            for run, job, shape in made:
                for task, (values, details) in zip(tasks, shape.scores):
                    yield pk, run, job, shape, task, values, details
                    pk += 1

        copy_rows("trajectories_trajectory",
                  ("id", "run_id", "task_id", "final_answer", "outcome_status", "outcome_reason", "outcome_message",
                   "success", "success_source", "success_by", "plan", "step_count", "content_hash", "source_name",
                   "source_format", "created_at", "updated_at"),
                  ((pk, run.pk, task.pk, "an answer", values["outcome_status"], values["outcome_reason"], "",
                    values["success"], "", "", "[]", values["agent_steps"], f"{pk:064x}", "", "", now, now)
                   for pk, run, _, _, task, values, _ in trajectory_ids()))
        copy_rows("metrics_trajectoryscore",
                  ("job_id", "trajectory_id", "gold_id", "inputs_hash", "error", *SCORE_COLUMNS, "details",
                   "computed_at"),
                  ((job.pk, pk, fixtures.gold_of[task.pk], "", "", *(values.get(name) for name in SCORE_COLUMNS),
                    details, now) for pk, _, job, _, task, values, details in trajectory_ids()))
        copy_rows("trajectories_verdict",
                  ("run_id", "task_id", "trajectory_id", "source_id", "grader", "success", "label", "score",
                   "explanation", "labels", "origin", "source_name", "created_at"),
                  ((run.pk, task.pk, pk, fixtures.source.pk, "", rng.random() < shape.skill * 0.6, "", None, "", "{}",
                    "import", "", now) for pk, run, _, shape, task, _, _ in trajectory_ids()))
        copy_rows("metrics_aggregate",
                  ("job_id", "run_id", "scope", '"group"', "metric", "mean", "std", "count", "null_count", "data",
                   "computed_at"),
                  ((job.pk, run.pk, *row, now) for run, job, shape in made for row in shape.aggregates[run.paradigm]))
        with_steps = {run.pk for run in runs[:stepped]}
        if with_steps:
            copy_rows(Step._meta.db_table,
                      ("trajectory_id", "index", "url", "observation", "reasoning", "action", "action_type",
                       "element_id", "element_label", "action_value", "element_selector", "prev_action",
                       "model_output"),
                      ((pk, i, "", "", "", f"click [{i}]", "click", str(i), "", "", "", "", "")
                       for pk, run, *_, values, _ in trajectory_ids() if run.pk in with_steps
                       for i in range(1, values["agent_steps"] + 1)))
    return [run.pk for run in runs]
