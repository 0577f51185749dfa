"""Soak: concurrent clients for minutes on production settings, with the broker and cache stopped in the middle.

Serving as deployed on one host: `config.settings.production` (DEBUG off), gunicorn with 2 sync workers,
PostgreSQL (a fresh database of its own, `--database`), a Redis of the benchmark's own (`--redis-port`) as
broker AND cache, and 2 Celery workers (prefork, concurrency 1). Data: the 812 WebArena tasks with an
approved reference gold each and the offline judge (`scale_data.base_fixtures`), one account per client
(no role: each imports and evaluates its own runs, under the per-account job limits), and a seed run of
`--seed-files` generated render files imported through the API.

Each client (a thread with its own keep-alive connection, API token and page session) loops for
`--duration` seconds, waiting 0-1 s between requests, over a weighted mix: the leaderboard (page, API,
CSV export), the run list, a run (page, API), a trajectory (page, API), the scores and decisions exports,
an import job's progress, imports (a zip of `--import-files` render files that go in chunks over both
workers; a zip whose files all fail, so that its new run is removed again) and evaluations of the
client's own runs by the offline judge. At the middle, the Redis is killed (as a crash: every queued
message is lost) for `--outage` seconds and started again empty.

Reported: per endpoint the requests, answers by class, 503s (documented: `workers_unreachable`) and
p50/p95; every 5xx that is not a documented 503 (must be none: the server's log is kept beside); the RSS
of every gunicorn and Celery process after the warm-up and at the end; every job's end (done, or failed
with a reason) once the workers have drained; the load average through the run.

    .venv/bin/python benchmarks/soak.py                          # 20 clients, 10 minutes, outage of 30 s
    .venv/bin/python benchmarks/soak.py [--clients 20] [--duration 600] [--outage 30] [--warm-up 60]
        [--import-files 8] [--chunk-files 4] [--seed-files 40] [--redis-port 6390] [--logs FOLDER]
        [--postgres-url postgres://postgres@127.0.0.1:5432/postgres] [--database trajscope_bench_soak]
"""

import argparse
import collections
import contextlib
import http.client
import io
import json
import os
import random
import re
import secrets
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from ingest_render_run import ROOT, _postgres_database, generate_run, generate_tasks  # noqa: E402
from web_load import HOST, _serve  # noqa: E402

PYTHON = str(ROOT / ".venv" / "bin" / "python")
PASSWORD = "soak-client-password-9"
# Weights of the client's requests; writes are rare, as on a shared research service.
MIX = {"leaderboard page": 10, "leaderboard API": 10, "leaderboard export": 3, "run list API": 8,
       "run page": 8, "run API": 8, "trajectory page": 10, "trajectory API": 10, "scores export": 3,
       "decisions export": 2, "import job API": 6, "import (good)": 2, "import (failing)": 1, "evaluation": 2}
ENDED = ("done", "failed", "cancelled")


def _seed_code(clients: int) -> str:
    """Django shell code: the tasks, gold and offline judge, then an admin and the clients' accounts, with
    an API token each, printed as JSON."""
    return f"""
import json
from django.contrib.auth import get_user_model
from accounts.services import create_api_token
from benchmarks.scale_data import base_fixtures
base_fixtures()
User = get_user_model()
admin = User.objects.create_superuser("soak-admin", "soak@example.org", {PASSWORD!r})
users = [admin] + [User.objects.create_user(f"soak-{{k}}", f"soak{{k}}@example.org", {PASSWORD!r})
                   for k in range({clients})]
print(json.dumps({{user.username: create_api_token(user, name="soak", expires_in_days=1)[1] for user in users}}))
"""


class Redis:
    """A redis-server of the benchmark's own: killing it disturbs nothing else on the machine."""

    def __init__(self, port: int, folder: Path):
        self.port, self.folder, self.process = port, folder, None

    def start(self) -> None:
        self.process = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
             "--dir", str(self.folder)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 20
        while subprocess.run(["redis-cli", "-p", str(self.port), "ping"], capture_output=True).returncode:
            if time.monotonic() > deadline:
                raise SystemExit(f"redis-server did not start on port {self.port}")
            time.sleep(0.1)

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(timeout=10)


def _tree(pid: int) -> list[int]:
    """A process and its live descendants."""
    try:
        children = [int(child) for task in Path(f"/proc/{pid}/task").iterdir()
                    for child in (task / "children").read_text().split()]
    except OSError:
        return []
    return [pid, *(descendant for child in children for descendant in _tree(child))]


def _rss(roots: dict[str, int]) -> dict[str, float]:
    """MB resident of each process under the named roots, keyed by name and pid."""
    sizes = {}
    for name, root in roots.items():
        for pid in _tree(root):
            try:
                status = Path(f"/proc/{pid}/status").read_text()
            except OSError:
                continue
            kib = int(re.search(r"VmRSS:\s+(\d+)", status).group(1))
            sizes[f"{name} {'main' if pid == root else 'child'} (pid {pid})"] = kib / 1024
    return sizes


class Stats:
    """Latencies and statuses by endpoint, shared by the clients."""

    def __init__(self):
        self.lock = threading.Lock()
        self.latencies = collections.defaultdict(list)
        self.statuses = collections.defaultdict(collections.Counter)
        self.undocumented = []  # (endpoint, status, path, body) of every 5xx that is not a documented 503

    def record(self, endpoint: str, status: int, seconds: float, path: str, body: bytes) -> None:
        documented = status == 503 and b"workers_unreachable" in body
        with self.lock:
            self.latencies[endpoint].append(seconds)
            self.statuses[endpoint]["503 documented" if documented else f"{status // 100}xx"] += 1
            if status >= 500 and not documented:
                self.undocumented.append((endpoint, status, path, body[:300].decode("utf-8", "replace")))


class Client(threading.Thread):
    """One user: a keep-alive connection, an API token, a page session; loops over the mix until stopped."""

    def __init__(self, number: int, port: int, token: str, shared: dict, stats: Stats, stop: threading.Event):
        super().__init__(daemon=True)
        self.number, self.port, self.token, self.shared, self.stats, self.stop = number, port, token, shared, stats, stop
        self.rng = random.Random(number)
        self.connection = None
        self.cookies: dict[str, str] = {}
        self.runs: list[str] = []  # this client's runs, which it may evaluate
        self.jobs: list[int] = []  # import jobs it started
        self.imports = 0

    def request(self, endpoint: str, method: str, path: str, body: bytes | None = None,
                headers: dict | None = None, api: bool = True) -> tuple[int, bytes]:
        headers = {**(headers or {})}
        if api:
            headers["Authorization"] = f"Token {self.token}"
        elif self.cookies:
            headers["Cookie"] = "; ".join(f"{name}={value}" for name, value in self.cookies.items())
        for attempt in range(2):  # a keep-alive connection the server closed meanwhile is opened again
            if self.connection is None:
                self.connection = http.client.HTTPConnection(HOST, self.port, timeout=300)
            started = time.perf_counter()
            try:
                self.connection.request(method, path, body=body, headers=headers)
                response = self.connection.getresponse()
                content = response.read()
            except (ConnectionError, http.client.HTTPException, OSError):
                self.connection.close()
                self.connection = None
                if attempt:
                    raise
                continue
            break
        elapsed = time.perf_counter() - started
        for header, value in response.getheaders():
            if header.lower() == "set-cookie":
                name, _, rest = value.partition("=")
                self.cookies[name] = rest.split(";", 1)[0]
        if response.getheader("Connection", "").lower() == "close":
            self.connection.close()
            self.connection = None
        if endpoint:
            self.stats.record(endpoint, response.status, elapsed, path, content)
        return response.status, content

    def log_in(self) -> None:
        _status, page = self.request("", "GET", "/accounts/login/", api=False)
        token = re.search(rb'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1).decode()
        form = f"username=soak-{self.number}&password={PASSWORD}&csrfmiddlewaretoken={token}".encode()
        status, _ = self.request("", "POST", "/accounts/login/", form, api=False, headers={
            "Content-Type": "application/x-www-form-urlencoded", "Origin": f"http://{HOST}:{self.port}",
            "Referer": f"http://{HOST}:{self.port}/accounts/login/"})
        if status != 302:
            raise SystemExit(f"client {self.number} could not log in: {status}")

    def run(self) -> None:
        self.log_in()
        names, weights = zip(*MIX.items())
        while not self.stop.is_set():
            endpoint = self.rng.choices(names, weights)[0]
            try:
                getattr(self, "_" + re.sub(r"\W+", "_", endpoint).strip("_"))(endpoint)
            except (ConnectionError, http.client.HTTPException, OSError) as error:
                self.stats.record(endpoint, 599, 0.0, endpoint, f"connection failed: {error}".encode())
            self.stop.wait(self.rng.random())

    def _pick(self, key: str):
        with self.stats.lock:
            return self.rng.choice(self.shared[key])

    def _leaderboard_page(self, endpoint):
        self.request(endpoint, "GET", "/leaderboard/", api=False)

    def _leaderboard_API(self, endpoint):
        self.request(endpoint, "GET", "/api/leaderboard/")

    def _leaderboard_export(self, endpoint):
        self.request(endpoint, "GET", "/api/exports/leaderboard.csv")

    def _run_list_API(self, endpoint):
        self.request(endpoint, "GET", "/api/runs/")

    def _run_page(self, endpoint):
        self.request(endpoint, "GET", f"/runs/{self._pick('runs')}/", api=False)

    def _run_API(self, endpoint):
        self.request(endpoint, "GET", f"/api/runs/{self._pick('runs')}/")

    def _trajectory_page(self, endpoint):
        self.request(endpoint, "GET", f"/trajectories/{self._pick('trajectories')}/", api=False)

    def _trajectory_API(self, endpoint):
        self.request(endpoint, "GET", f"/api/trajectories/{self._pick('trajectories')}/")

    def _scores_export(self, endpoint):
        self.request(endpoint, "GET", f"/api/exports/scores.csv?run={self.shared['seed run']}")

    def _decisions_export(self, endpoint):
        self.request(endpoint, "GET", f"/api/exports/decisions.json?run={self.shared['seed run']}")

    def _import_job_API(self, endpoint):
        if self.jobs:
            self.request(endpoint, "GET", f"/api/import-jobs/{self.rng.choice(self.jobs)}/")

    def _upload(self, endpoint: str, archive: bytes, run: str) -> None:
        boundary = uuid.uuid4().hex
        body = b"".join([
            f'--{boundary}\r\nContent-Disposition: form-data; name="run"\r\n\r\n{run}\r\n'.encode(),
            f'--{boundary}\r\nContent-Disposition: form-data; name="background"\r\n\r\ntrue\r\n'.encode(),
            f'--{boundary}\r\nContent-Disposition: form-data; name="files"; filename="results.zip"\r\n'
            f"Content-Type: application/zip\r\n\r\n".encode(), archive, f"\r\n--{boundary}--\r\n".encode()])
        status, content = self.request(endpoint, "POST", "/api/runs/import/", body,
                                       headers={"Content-Type": f"multipart/form-data; boundary={boundary}"})
        if status == 202:
            self.jobs.append(json.loads(content)["id"])
            if run not in self.runs and endpoint == "import (good)":
                self.runs.append(run)

    def _import_good(self, endpoint):
        self.imports += 1
        self._upload(endpoint, self._pick("good zips"), f"soak-{self.number}-{self.imports}")

    def _import_failing(self, endpoint):
        self.imports += 1
        self._upload(endpoint, self.shared["failing zip"], f"soak-{self.number}-{self.imports}-failing")

    def _evaluation(self, endpoint):
        if self.runs:
            self.request(endpoint, "POST", "/api/evaluations/",
                         json.dumps({"runs": [self.rng.choice(self.runs)], "judge": "offline"}).encode(),
                         headers={"Content-Type": "application/json"})


def _zips(folder: Path, files: int, count: int, rng: random.Random) -> list[bytes]:
    """`count` zips of `files` render files drawn from `folder`."""
    renders = sorted(folder.iterdir())
    archives = []
    for _ in range(count):
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as archive:
            for path in rng.sample(renders, files):
                archive.write(path, f"results/{path.name}")
        archives.append(buffer.getvalue())
    return archives


def _failing_zip() -> bytes:
    """Files that all fail: a render file cut short, and JSON that is no trajectory."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("results/render_1.html", "<html><body><pre>task_id: 1\n")
        archive.writestr("results/broken.json", '{"not": "a trajectory"}')
    return buffer.getvalue()


def _jobs(database_url: str) -> dict:
    """Every job's status, and those that failed without a reason, by kind of job."""
    import psycopg

    ends = {}
    with psycopg.connect(database_url) as connection:
        for kind, table, reason in (("import", "trajectories_importjob", "error"),
                                    ("evaluation", "metrics_evaluationjob", "errors::text <> '[]'")):
            rows = connection.execute(f"SELECT status, {reason} FROM {table}").fetchall()
            ends[kind] = {"statuses": dict(collections.Counter(status for status, _ in rows)),
                          "failed without a reason": sum(status == "failed" and not error for status, error in rows)}
    return ends


def _unfinished(ends: dict) -> int:
    return sum(count for kind in ends.values() for status, count in kind["statuses"].items() if status not in ENDED)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--duration", type=float, default=600, help="Seconds the clients run.")
    parser.add_argument("--outage", type=float, default=30, help="Seconds Redis is down, centred in the run.")
    parser.add_argument("--warm-up", type=float, default=60, help="Seconds before the first RSS reading.")
    parser.add_argument("--import-files", type=int, default=8)
    parser.add_argument("--chunk-files", type=int, default=4, help="IMPORT_CHUNK_FILES of the workers.")
    parser.add_argument("--seed-files", type=int, default=40)
    parser.add_argument("--settle", type=float, default=600, help="Seconds to wait for the jobs to end.")
    parser.add_argument("--redis-port", type=int, default=6390)
    parser.add_argument("--logs", type=Path, default=None, help="Folder for the servers' logs (default: kept "
                                                                    "in a new folder under /tmp).")
    parser.add_argument("--postgres-url", default="postgres://postgres@127.0.0.1:5432/postgres")
    parser.add_argument("--database", default="trajscope_bench_soak")
    args = parser.parse_args()
    logs = args.logs or Path(tempfile.mkdtemp(prefix="soak-logs-"))
    logs.mkdir(parents=True, exist_ok=True)
    loads = [("start", os.getloadavg())]

    with tempfile.TemporaryDirectory(prefix="soak-") as folder:
        scratch = Path(folder)
        (scratch / "static").mkdir()
        redis = Redis(args.redis_port, scratch)
        redis.start()
        with contextlib.ExitStack() as cleanup:
            cleanup.callback(redis.kill)
            broker = f"redis://127.0.0.1:{args.redis_port}/0"
            env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings.production",
                   "DATABASE_URL": _postgres_database(args.postgres_url, args.database, True),
                   "SECRET_KEY": secrets.token_urlsafe(64), "METRICS_TOKEN": secrets.token_urlsafe(32),
                   "ALLOWED_HOSTS": HOST, "SECURE_SSL_REDIRECT": "false", "SECURE_HSTS_SECONDS": "0",
                   "LOG_LEVEL": "WARNING", "MEDIA_ROOT": str(scratch / "media"), "STATIC_ROOT": str(scratch / "static"),
                   "CELERY_BROKER_URL": broker, "CACHE_URL": f"redis://127.0.0.1:{args.redis_port}/1",
                   "IMPORT_CHUNK_FILES": str(args.chunk_files), "IMPORT_CHUNK_RETRY_SECONDS": "2",
                   "GUNICORN_CMD_ARGS": "--timeout 300"}
            env.pop("DEBUG", None)
            for command in (["migrate", "--noinput"], ["collectstatic", "--noinput"]):
                subprocess.run([PYTHON, "manage.py", *command], cwd=ROOT, env=env, check=True, capture_output=True)
            seeded = subprocess.run([PYTHON, "manage.py", "shell", "-c", _seed_code(args.clients)], cwd=ROOT, env=env,
                                    check=True, capture_output=True, text=True).stdout
            tokens = json.loads(seeded.strip().splitlines()[-1])
            rng = random.Random(0)
            tasks = generate_tasks(scratch / "tasks.json", 812)
            generate_run(scratch / "renders", tasks[:200], 0)
            shared = {"good zips": _zips(scratch / "renders", args.import_files, 12, rng), "failing zip": _failing_zip()}

            gunicorn_log = cleanup.enter_context((logs / "gunicorn.log").open("w"))
            server, port = _serve(2, env, log=gunicorn_log)
            cleanup.callback(_stop, server)
            workers = [subprocess.Popen(
                [PYTHON, "-m", "celery", "-A", "config", "worker", "--concurrency", "1", "-n", f"soak{k}@%h",
                 "-l", "WARNING"], cwd=ROOT, env=env, stdout=(logs / f"worker-{k}.log").open("w"),
                stderr=subprocess.STDOUT) for k in range(2)]
            for worker in workers:
                cleanup.callback(_stop, worker)
            stop, stats = threading.Event(), Stats()
            admin = Client(-1, port, tokens["soak-admin"], shared, stats, stop)
            seed = _zips(scratch / "renders", args.seed_files, 1, rng)[0]
            admin._upload("", seed, "soak-seed")
            _wait_for(lambda: _jobs(env["DATABASE_URL"])["import"]["statuses"] == {"done": 1}, 600, "the seed import")
            admin.request("", "POST", "/api/evaluations/", json.dumps({"runs": ["soak-seed"], "judge": "offline"}).encode(),
                          headers={"Content-Type": "application/json"})
            _wait_for(lambda: _unfinished(_jobs(env["DATABASE_URL"])) == 0, 600, "the seed evaluation")
            runs = json.loads(admin.request("", "GET", "/api/runs/")[1])
            trajectories = json.loads(admin.request("", "GET", "/api/trajectories/?run=soak-seed&page_size=100")[1])
            shared.update({"seed run": "soak-seed", "runs": [run["id"] for run in _results(runs)],
                           "trajectories": [trajectory["id"] for trajectory in _results(trajectories)]})

            roots = {"gunicorn": server.pid, **{f"celery worker {k}": worker.pid for k, worker in enumerate(workers)}}
            clients = [Client(k, port, tokens[f"soak-{k}"], shared, stats, stop) for k in range(args.clients)]
            started = time.monotonic()
            for client in clients:
                client.start()
            time.sleep(args.warm_up)
            rss_warm = _rss(roots)
            loads.append(("after warm-up", os.getloadavg()))
            outage_at = max(args.duration / 2 - args.outage / 2, args.warm_up)
            time.sleep(max(0.0, outage_at - (time.monotonic() - started)))
            loads.append(("Redis killed", os.getloadavg()))
            redis.kill()
            outage_started = time.monotonic() - started
            time.sleep(args.outage)
            redis.start()
            outage_ended = time.monotonic() - started
            time.sleep(max(0.0, args.duration - (time.monotonic() - started)))
            stop.set()
            for client in clients:
                client.join(timeout=330)
            loads.append(("clients stopped", os.getloadavg()))
            rss_end = _rss(roots)
            settled = time.monotonic()
            while _unfinished(ends := _jobs(env["DATABASE_URL"])) and time.monotonic() - settled < args.settle:
                time.sleep(5)
            settle_s = time.monotonic() - settled
            loads.append(("jobs ended", os.getloadavg()))
        _postgres_database(args.postgres_url, args.database, False)

    _print_report(args, stats, rss_warm, rss_end, ends, settle_s, loads, (outage_started, outage_ended), logs)


def _stop(process: subprocess.Popen) -> None:
    process.terminate()
    process.wait(timeout=120)


def _wait_for(condition, seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise SystemExit(f"{what} did not end within {seconds:.0f} s")
        time.sleep(1)


def _results(page) -> list[dict]:
    return page["results"] if isinstance(page, dict) else page


def _percentile(values: list[float], fraction: float) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[round(fraction * 100) - 1] if len(values) > 1 \
        else values[0]


def _print_report(args, stats: Stats, rss_warm, rss_end, ends, settle_s, loads, outage, logs) -> None:
    print(f"{args.clients} clients for {args.duration:.0f} s; Redis (broker and cache) down from "
          f"{outage[0]:.0f} s to {outage[1]:.0f} s; {os.cpu_count()} CPUs; servers' logs in {logs}")
    print("\n| endpoint | requests | 2xx | 3xx | 4xx | 503 documented | other 5xx | p50 | p95 |")
    print("|---|---|---|---|---|---|---|---|---|")
    total = collections.Counter()
    for endpoint in MIX:
        latencies, statuses = stats.latencies.get(endpoint), stats.statuses[endpoint]
        if not latencies:
            continue
        total.update(statuses)
        print(f"| {endpoint} | {len(latencies)} | {statuses['2xx']} | {statuses['3xx']} | {statuses['4xx']} | "
              f"{statuses['503 documented']} | {statuses['5xx']} | {_percentile(latencies, 0.5) * 1000:.0f} ms | "
              f"{_percentile(latencies, 0.95) * 1000:.0f} ms |")
    print(f"\nAll: {sum(total.values())} requests, {dict(total)}; 5xx other than the documented 503: "
          f"{len(stats.undocumented)}")
    for endpoint, status, path, body in stats.undocumented[:20]:
        print(f"  {status} {endpoint} {path}: {body}")
    print("\n| process | RSS after warm-up | at the end | change |")
    print("|---|---|---|---|")
    for name in sorted(set(rss_warm) | set(rss_end)):
        warm, end = rss_warm.get(name), rss_end.get(name)
        change = f"{(end - warm) / warm * 100:+.1f} %" if warm and end else "(not alive at both)"
        print(f"| {name} | {f'{warm:.0f} MB' if warm else '-'} | {f'{end:.0f} MB' if end else '-'} | {change} |")
    print(f"\nJobs, {settle_s:.0f} s after the clients stopped:")
    for kind, end in ends.items():
        print(f"  {kind}: {end['statuses']}; failed without a reason: {end['failed without a reason']}")
    print("\nLoad average (1, 5, 15 min): " + "; ".join(
        f"{moment} {one:.1f} / {five:.1f} / {fifteen:.1f}" for moment, (one, five, fifteen) in loads))


if __name__ == "__main__":
    main()
