"""Evaluation of a whole generated run: in-process, through real Celery workers, and LLM calls.

Generates one trajectory per task (812: those of test.raw.json; more renumber copies of them, as
tasks of their own) with gold steps for each task, into a fresh PostgreSQL database of its own: 5-15 agent steps in WebArena's action forms with an
accessibility tree per step, 3-10 free-text gold steps ("Click on the 'Orders' link", "Type
'...' into the 'Search' textbox", some without structure so that embeddings are needed), agents
that follow the gold path with deviations, repeats and recoveries, and final answers.

1. in-process: `evaluate_chunk` for every chunk of the job (as a worker runs them) with the
   offline judge, cold decision cache (loading, judge, metrics, storing the scores, progress, the
   aggregates when the last chunk finishes the job),
   then the same again warm (decisions cached); wall time, this process's CPU time and the CPU
   time of the PostgreSQL backend serving it.
2. worker: the whole job through real Celery worker processes on PostgreSQL and Redis, from
   `start_evaluation` to status done, cold decision cache, for each number of workers asked for
   (side by side in one run); wall time, the workers' CPU time (from their start to their exit)
   and PostgreSQL's: that of every backend that ended meanwhile (a worker's connection ends with
   each task), so other databases' work on the server counts too unless the machine is quiet.

The generated tables are analysed once generated, as autovacuum would soon do on a live
database (PostgreSQL on the benchmark machine runs with autovacuum off). PostgreSQL's CPU is read
from /proc: it is counted when the database runs on the same machine, and without its
background processes (WAL writer, checkpointer).
3. llm: the `openai` backend against a local OpenAI-compatible server, counting the requests
   per trajectory against the straightforward way of asking (one call per element-accuracy
   step, one per recovery comparison, one each for step matching, repetition and keywords),
   then a second evaluation of the same run (a new job: every unit recomputed) that must make
   zero requests.

    .venv/bin/python benchmarks/evaluation_job.py [--trajectories 812] [--workers 1 2] [--llm-sample 100]
        [--postgres-url postgres://postgres@127.0.0.1:5432/postgres] [--database trajscope_bench_eval]
        [--broker redis://127.0.0.1:6379/0] [--profile cold.prof]
"""

import argparse
import cProfile
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

from ingest_render_run import generate_tasks

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

NAMES = ["REPORTS", "Catalog", "Products", "Orders", "Customers", "Bestsellers", "Search", "My Account",
         "Sales", "Marketing", "Content", "Stores", "Filters", "Go", "Show Report", "Export", "Reviews",
         "Issues", "Merge requests", "Projects", "Settings", "New issue", "Submit", "Next page"]
ROLES = ["link", "button", "menuitem", "tab"]
FIELDS = ["Search", "From", "To", "Title", "Description", "Email", "Quantity"]
VALUES = ["01/01/2022", "12/31/2022", "Harvard University", "yoga mat", "404 for many URLs", "3", "blue"]
FREE_TEXT = ["Extract the price of the latest order from the table",
             "Look at the order history to find the most recent purchase",
             "Read the total shown in the report summary",
             "Note the name of the top product in the list"]


def _database_url(base: str, name: str) -> str:
    return base.rsplit("/", 1)[0] + "/" + name


def _recreate_database(base_url: str, name: str) -> str:
    import psycopg

    with psycopg.connect(base_url, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        conn.execute(f"CREATE DATABASE {name}")
    return _database_url(base_url, name)


def _setup_django(database_url: str, broker: str, queue: str):
    os.environ.update(DATABASE_URL=database_url, CELERY_BROKER_URL=broker, CELERY_TASK_DEFAULT_QUEUE=queue,
                      DJANGO_SETTINGS_MODULE="config.settings.base", LOG_LEVEL="WARNING")
    import django

    django.setup()


def _generate(count: int, rng: random.Random):
    """Tasks, one run of trajectories with steps, and approved gold for each task."""
    from django.contrib.auth import get_user_model

    from annotation.models import GoldStep, GoldTrajectory
    from trajectories.models import AgentRun, Step, Task, Trajectory
    from trajectories.services.tasks import import_task_file

    with tempfile.TemporaryDirectory() as folder:
        tasks_file = Path(folder) / "tasks.json"
        generate_tasks(tasks_file, count)
        import_task_file(tasks_file)
    annotator, _ = get_user_model().objects.get_or_create(username="bench-annotator")
    run = AgentRun.objects.create(name="bench-run", agent="bench", model="generated")
    tasks = list(Task.objects.order_by("number")[:count])
    golds = GoldTrajectory.objects.bulk_create(
        [GoldTrajectory(task=task, annotator=annotator, status="approved", source="bench") for task in tasks]
    )
    gold_steps, trajectories, agent_plans = [], [], []
    for task, gold in zip(tasks, golds):
        plan = []
        for index in range(1, rng.randint(3, 10) + 1):
            kind = rng.random()
            if kind < 0.65:
                name, role = rng.choice(NAMES), rng.choice(ROLES)
                plan.append(("click", role, name, ""))
                text = f"Click on the '{name}' {role}."
            elif kind < 0.85:
                field, value = rng.choice(FIELDS), rng.choice(VALUES)
                plan.append(("type", "textbox", field, value))
                text = f"Type '{value}' into the '{field}' textbox."
            elif kind < 0.92:
                plan.append(("scroll", "", "", "down"))
                text = "Scroll down"
            else:
                plan.append(("note", "", "", ""))
                text = rng.choice(FREE_TEXT)
            gold_steps.append(GoldStep(gold=gold, index=index, text=text))
        answer = rng.choice([None, "N/A", task.intent.split()[-1], "Quest Lumaflex Band"])
        trajectories.append(Trajectory(
            run=run, task=task, final_answer=answer, outcome_status="answered" if answer else "no_stop",
            content_hash=uuid.uuid4().hex, step_count=0,
        ))
        agent_plans.append((plan, answer))
    GoldStep.objects.bulk_create(gold_steps, batch_size=1000)
    Trajectory.objects.bulk_create(trajectories, batch_size=500)

    steps = []
    for trajectory, (plan, answer) in zip(trajectories, agent_plans):
        actions = []
        for kind, role, name, value in plan:
            while rng.random() < 0.25:  # a deviation before getting back on the gold path
                actions.append(("click", rng.choice(ROLES), rng.choice(NAMES), ""))
            if kind == "note":
                continue
            actions.append((kind, role, name, value))
            if rng.random() < 0.1:
                actions.append((kind, role, name, value))  # a repeat
        actions = actions[: rng.randint(5, 15)] or [("scroll", "", "", "down")]
        for index, (kind, role, name, value) in enumerate(actions, start=1):
            element_id = str(100 + rng.randrange(900))
            tree = "\n".join(
                [f"Tab 0 (current): {trajectory.task.intent[:40]}"]
                + [f"\t[{100 + k}] {rng.choice(ROLES)} '{rng.choice(NAMES)} {k}'" for k in range(rng.randint(30, 80))]
                + [f"\t[{element_id}] {role or 'textbox'} '{name}'"]
            )
            if kind == "click":
                action = f"click [{element_id}] where [{element_id}] is {role} '{name}'"
                planned = f"click [{element_id}]"
            elif kind == "type":
                action = f"type [{element_id}] [{value}] [1] where [{element_id}] is textbox '{name}'"
                planned = f"type [{element_id}] [{value}] [1]"
            else:
                action = planned = "scroll [down]"
            if rng.random() < 0.1:
                planned = "scroll [direction=down]"
            reasoning = f"Let's think step by step. In summary, the next action I will perform is ```{planned}```"
            steps.append(_step(trajectory, index, tree, planned, action, reasoning))
        if answer:
            steps.append(_step(trajectory, len(actions) + 1, f"Tab 0 (current): result\n\t[1] StaticText '{answer}'",
                               f"stop [{answer}]", f"stop [{answer}]"))
        trajectory.step_count = len(actions) + (1 if answer else 0)
    Step.objects.bulk_create(steps, batch_size=2000)
    Trajectory.objects.bulk_update(trajectories, ["step_count"], batch_size=500)
    return run


def _step(trajectory, index: int, observation: str, planned: str, action: str, reasoning: str = ""):
    """A Step row as the importer stores it: the executed action split into its parts, the
    element's label taken from the `where [id] is ...` suffix or the accessibility tree."""
    from trajectories.formats.agent_steps import action_parts
    from trajectories.models import Step

    parts = action_parts(action, observation)
    return Step(trajectory=trajectory, index=index, url="http://localhost:7780/admin", observation=observation,
                reasoning=reasoning, planned_action=planned, action=action, action_type=parts.type,
                element_id=parts.element_id or "", element_label=parts.element_label or "",
                action_value=parts.value or "", press_enter=parts.press_enter)


def _analyse():
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")


def _backend_pid() -> int:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        return cursor.fetchone()[0]


def _stat(pid: int) -> list[str]:
    """/proc/<pid>/stat from its third field (the state) on."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    return stat[stat.rindex(")") + 2:].split()


def _cpu_of(pid: int) -> float:
    """User and system CPU seconds of a process so far."""
    fields = _stat(pid)
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _ended_backends_cpu(backend: int) -> float:
    """CPU seconds of every PostgreSQL process that has ended so far (the server's reaped children)."""
    server = int(_stat(backend)[1])
    fields = _stat(server)
    return (int(fields[13]) + int(fields[14])) / os.sysconf("SC_CLK_TCK")


def _clear_decisions():
    from judges.models import JudgeDecision

    JudgeDecision.objects.all().delete()


def _judge(name: str, backend: str, **fields):
    from judges.models import JudgeConfig

    config, _ = JudgeConfig.objects.update_or_create(name=name, defaults={"backend": backend, **fields})
    return config


def in_process(run, profile: str | None) -> dict:
    """Cold and warm passes: (scores, wall seconds, CPU seconds of this process, of its PostgreSQL
    backend, errors) each; with `profile`, the cold pass runs under cProfile and its statistics
    are written there."""
    from metrics.services import evaluation

    config = _judge("offline", "offline")
    backend = _backend_pid()
    results = {}
    for label in ("cold", "warm"):
        job = evaluation.create_evaluation(runs=[run], judge_config=config)
        # Begun as a worker begins it, so its last chunk finishes it (the aggregates stored): a job
        # left pending would be sent to the workers measured next by their sweeper.
        chunks = evaluation.begin(job)
        profiler = cProfile.Profile() if profile and label == "cold" else None
        started, cpu, database_cpu = time.perf_counter(), time.process_time(), _cpu_of(backend)
        if profiler:
            profiler.enable()
        for chunk in chunks:
            evaluation.evaluate_chunk(job.pk, chunk)
        if profiler:
            profiler.disable()
            profiler.dump_stats(profile)
        elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
        database_cpu = _cpu_of(backend) - database_cpu
        job.refresh_from_db()
        if job.status != "done":
            raise RuntimeError(f"the in-process job ended {job.status}")
        errors = job.scores.exclude(error="").count()
        results[label] = (job.scores.count(), elapsed, cpu, database_cpu, errors)
    return results


def through_workers(run, workers: int, queue: str) -> tuple[int, float, float, float, float, int, str]:
    """(units, wall seconds, the workers' CPU seconds through the job and from their start to their
    exit, PostgreSQL's CPU seconds through the job (see the module's notes), failed, status)."""
    from metrics.models import EvaluationJob
    from metrics.services import evaluation

    _clear_decisions()
    config = _judge("offline", "offline")
    processes = [
        subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "config", "worker", "--pool=solo", "-Q", queue, "-n",
             f"bench{k}@%h", "--without-heartbeat", "--without-gossip", "--without-mingle", "-l", "WARNING"],
            cwd=ROOT, env=dict(os.environ), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        for k in range(workers)
    ]
    children_cpu = _children_cpu()
    time.sleep(4)  # let the workers load Django and the embedding model before the clock starts
    try:
        job = evaluation.create_evaluation(runs=[run], judge_config=config)
        workers_cpu, database_cpu = sum(_cpu_of(p.pid) for p in processes), _ended_backends_cpu(_backend_pid())
        started = time.perf_counter()
        evaluation.start_evaluation(job)
        while EvaluationJob.objects.get(pk=job.pk).status in ("pending", "running"):
            if time.perf_counter() - started > 600:
                raise RuntimeError("the job did not finish in 10 minutes")
            time.sleep(0.2)
        elapsed = time.perf_counter() - started
        workers_cpu = sum(_cpu_of(p.pid) for p in processes) - workers_cpu
    finally:
        for process in processes:
            process.terminate()
            process.wait(timeout=60)
    time.sleep(1)  # for the server to reap the backends of the workers' last connections
    database_cpu = _ended_backends_cpu(_backend_pid()) - database_cpu
    job.refresh_from_db()
    return job.total, elapsed, workers_cpu, _children_cpu() - children_cpu, database_cpu, job.failed, job.status


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _naive_calls(score) -> int:
    """Requests of the straightforward way: one per element-accuracy step and per recovery comparison
    (the W=1 walk compares each agent step it visits), one each for step matching, repetition and keywords."""
    details = score.details
    recovery = details.get("recovery")
    walked = 0
    if recovery:
        matched = recovery["matched"]
        all_matched = matched and len(matched) == recovery["gold_steps"]
        walked = matched[-1]["agent_step"] if all_matched else recovery["agent_steps"]
    return details["element_accuracy"]["steps"] + walked + 3


def llm_calls(run, sample: int) -> dict:
    from judges.local_llm import LocalLLMServer
    from metrics.services import evaluation
    from trajectories.models import AgentRun, Trajectory

    subset = AgentRun.objects.create(name="bench-llm-subset", agent="bench", model="generated")
    chosen = list(run.trajectories.order_by("pk").values_list("pk", flat=True)[:sample])
    Trajectory.objects.filter(pk__in=chosen).update(run=subset)
    with LocalLLMServer() as server:
        config = _judge("bench-llm", "openai", model="scripted", base_url=server.base_url)
        jobs, requests = [], []
        for _ in range(2):
            before = len(server.requests)
            job = evaluation.create_evaluation(runs=[subset], judge_config=config)
            for chunk in evaluation.pending_chunks(job):
                evaluation.evaluate_chunk(job.pk, chunk)
            jobs.append(job)
            requests.append(len(server.requests) - before)
    first = jobs[0]
    return {
        "trajectories": first.scores.count(),
        "calls": requests[0],
        "rerun_calls": requests[1],
        "naive": sum(_naive_calls(score) for score in first.scores.filter(error="")),
        "failed": first.scores.exclude(error="").count(),
    }


def _load_average() -> str:
    return "load average " + " ".join(f"{load:.1f}" for load in os.getloadavg())


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trajectories", type=int, default=812)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2],
                        help="Numbers of Celery workers, each measured on a cold decision cache")
    parser.add_argument("--llm-sample", type=int, default=100)
    parser.add_argument("--postgres-url", default="postgres://postgres@127.0.0.1:5432/postgres")
    parser.add_argument("--database", default="trajscope_bench_eval",
                        help="The database the benchmark creates (dropped first if it exists) and leaves behind")
    parser.add_argument("--broker", default="redis://127.0.0.1:6379/0")
    parser.add_argument("--profile", help="Write cProfile statistics of the in-process cold pass to this file")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    queue = f"bench-{uuid.uuid4().hex[:8]}"
    _setup_django(_recreate_database(args.postgres_url, args.database), args.broker, queue)
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    started = time.perf_counter()
    run = _generate(args.trajectories, random.Random(args.seed))
    _analyse()
    from trajectories.models import Step

    print(f"generated {run.trajectories.count()} trajectories, {Step.objects.count()} agent steps "
          f"in {time.perf_counter() - started:.1f} s (PostgreSQL {args.database}); {_load_average()}")

    for label, (units, elapsed, cpu, database_cpu, errors) in in_process(run, args.profile).items():
        print(f"in-process, offline judge, {label} cache: {units} trajectories in {elapsed:.1f} s = "
              f"{units / elapsed:.0f} trajectories/s; CPU {cpu:.1f} s = {units / cpu:.0f} trajectories/s, "
              f"PostgreSQL's {database_cpu:.1f} s, together {(cpu + database_cpu) / units * 1000:.2f} ms per "
              f"trajectory ({errors} errors); {_load_average()}")
    for workers in args.workers:
        total, elapsed, cpu, cpu_with_start, database_cpu, failed, status = through_workers(run, workers, queue)
        print(f"job through {workers} Celery worker(s) (PostgreSQL + Redis), offline judge, cold cache: "
              f"{total} trajectories in {elapsed:.1f} s = {total / elapsed:.0f} trajectories/s; workers' CPU "
              f"{cpu:.1f} s ({cpu_with_start:.1f} s with their start), PostgreSQL's {database_cpu:.1f} s, together "
              f"{(cpu + database_cpu) / total * 1000:.2f} ms per trajectory ({status}, {failed} failed); "
              f"{_load_average()}")
    llm = llm_calls(run, args.llm_sample)
    per = llm["trajectories"] or 1
    print(f"openai backend, {llm['trajectories']} trajectories: {llm['calls']} requests "
          f"({llm['calls'] / per:.1f} per trajectory) against {llm['naive']} the straightforward way "
          f"({llm['naive'] / per:.1f} per trajectory) = {llm['calls'] / max(llm['naive'], 1):.2f}x; "
          f"second evaluation of the same run: {llm['rerun_calls']} requests ({llm['failed']} failed)")


if __name__ == "__main__":
    main()
