"""Import of a whole WebArena run of render files, on SQLite and on PostgreSQL, with one parsing
process and with a pool of them.

Generates, in a temporary folder, one render_<id>.html per task (812 files by default, one per
task of test.raw.json; more files renumber copies of those tasks, which the benchmark imports as
tasks of their own) shaped like the real samples in shared/data/trajectory-samples: their header
with the task's id and intent, 5-15 step blocks taken from the samples (accessibility trees,
reasoning, actions), every screenshot made unique (a PNG text chunk with the file and step
number) so that deduplication does not flatter the numbers, and endings in the samples'
proportions of answered / N/A / forced stop / no stop. Then, for each database and each number
of parsing processes (1, i.e. parsing on a thread of the importing process, and INGEST_WORKERS,
default the CPU count), a fresh child process migrates an empty database, imports the tasks, and times
`import_paths` on the folder (the same service as the command line, upload page and API), then
times a second import of the same folder (everything unchanged). Peak memory is the child's
peak resident set size (`resource.getrusage(RUSAGE_SELF).ru_maxrss`), i.e. Python, Django and
the import together; the largest parsing worker's is reported beside it. Before each import,
the I/O floor (`render_io_floor.py`: read every file, write its decoded screenshots, no parsing
and no database) runs with as many processes, and the import's time and CPU are reported as a
ratio to it, beside the database server's CPU during the import and the least time the import's
CPU and the server's could take with every core busy (their sum over the cores), which says how
far any scheduling of the same work could bring the ratio down. Each measurement starts with
nothing left for the kernel to write back, a minute after the files of the one before were
deleted.

With --fresh-filesystem (root, loop devices), the floor and the import each write their files
into a new ext4 file system (mkfs.ext4's defaults, journal included; a sparse image in the
scratch folder on a loop device with direct I/O, mounted for that one measurement), so both
start from the same empty disk whatever the machine's own file system went through before (see
`_settle`).

    .venv/bin/python benchmarks/ingest_render_run.py [--files 812] [--databases sqlite postgres]
        [--workers N] [--postgres-url postgres://postgres@127.0.0.1:5432/postgres]
        [--database trajscope_bench_ingest] [--seed 0] [--settle 61] [--fresh-filesystem]
"""

import argparse
import base64
import contextlib
import json
import os
import platform
import random
import re
import resource
import shutil
import struct
import subprocess
import sys
import tempfile
import time
import zlib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHARED_DATA = Path(os.environ.get("SHARED_DATA_DIR", ROOT.parent / "shared" / "data"))
SAMPLES = SHARED_DATA / "trajectory-samples"
TASKS = SHARED_DATA / "webarena" / "test.raw.json"
STEP_MARK = "<h2>New Page</h2>"
TAIL = "\n    </body>\n</html>\n"
_IMAGE = re.compile(r"(<img src='data:image/png;base64,)([^']+)(')")
_ACTION = re.compile(r"<div class='parsed_action'[^>]*><pre>(.*?)</pre>", re.S)


def _sample_parts():
    """Header template, agent step blocks and ending blocks (answered, N/A, forced stop) of the samples."""
    agent_blocks, endings, header = [], {}, None
    for sample in sorted(SAMPLES.glob("*.html")):
        head, *blocks = sample.read_text(encoding="utf-8").split(STEP_MARK)
        header = header or head
        blocks[-1] = blocks[-1][: blocks[-1].rindex("</body>")].rstrip() + "\n\n    "
        for block in blocks:
            action = _ACTION.search(block).group(1)
            if action.startswith("stop [Early stop"):
                endings["early_stop"] = block
            elif action.startswith("stop ['N/A']"):
                endings["na"] = block
            elif action.startswith("stop ["):
                endings["answered"] = block
            else:
                agent_blocks.append(block)
    return header, agent_blocks, endings


def _unique_png(png: bytes, label: str) -> bytes:
    """The same image with a text chunk naming its copy, inserted before IEND."""
    data = b"Comment\x00" + label.encode()
    chunk = struct.pack(">I", len(data)) + b"tEXt" + data + struct.pack(">I", zlib.crc32(b"tEXt" + data))
    return png[:-12] + chunk + png[-12:]


def generate_tasks(path: Path, count: int) -> list[dict]:
    """`count` task configs: those of test.raw.json, then renumbered copies of them."""
    originals = json.loads(TASKS.read_text(encoding="utf-8"))
    tasks = [{**originals[number % len(originals)], "task_id": number} for number in range(count)]
    path.write_text(json.dumps(tasks), encoding="utf-8")
    return tasks


def generate_run(folder: Path, tasks: list[dict], seed: int, steps: list[int] | None = None) -> int:
    """Write one render file per task into `folder` (with `steps[i]` steps for the i-th task, else
    5-15); returns their total size in bytes."""
    rng = random.Random(seed)
    header, agent_blocks, endings = _sample_parts()
    images = {block: base64.b64decode(_IMAGE.search(block).group(2)) for block in agent_blocks + list(endings.values())}
    folder.mkdir(parents=True, exist_ok=True)
    total = 0
    for position, task in enumerate(tasks):
        task_id = task["task_id"]
        head = re.sub(r"task_id: \d+", f"task_id: {task_id}", header)
        head = re.sub(r"intent: [^\n]*", lambda _: f"intent: {task['intent']}", head)
        ending = rng.choice(["answered", "na", "early_stop", "no_stop"])
        count = steps[position] if steps else rng.randint(5, 15)
        blocks = [rng.choice(agent_blocks) for _ in range(count if ending == "no_stop" else count - 1)]
        if ending != "no_stop":
            blocks.append(endings[ending])
        parts = [head]
        for number, block in enumerate(blocks, start=1):
            png = _unique_png(images[block], f"render_{task_id} step {number}")
            encoded = base64.b64encode(png).decode()
            parts.append(STEP_MARK + _IMAGE.sub(lambda match: match.group(1) + encoded + match.group(3), block))
        parts.append(TAIL)
        text = "".join(parts)
        path = folder / f"render_{task_id}.html"
        path.write_text(text, encoding="utf-8")
        total += path.stat().st_size
    return total


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _cpu_seconds() -> tuple[float, float, float, float]:
    """CPU time in user space and in the kernel of this process, and of its ended children (the
    parsing workers). The kernel's part is mostly the screenshot files' pages."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime, own.ru_stime, children.ru_utime, children.ru_stime


def _server_cpu_seconds() -> float:
    """CPU time of every PostgreSQL server process on this machine (the session's backend, the WAL
    writer, the checkpointer), user and kernel: the import's rows cost the server's CPU too, on the
    same cores. Zero where there is none (SQLite runs in the importing process)."""
    total = 0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)
        except OSError:  # the process ended meanwhile
            continue
        if fields[0].endswith("(postgres"):
            values = fields[1].split()
            total += int(values[11]) + int(values[12])  # utime and stime, the 14th and 15th fields
    return total / os.sysconf("SC_CLK_TCK")


def _children_peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024


def child(folder: Path, tasks: Path) -> None:
    """One measurement in a fresh process, on the database of DATABASE_URL (printed as JSON)."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.base")
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.conf import settings
    from django.core.management import call_command
    from django.db import connection

    from trajectories.services.ingest import import_paths
    from trajectories.services.runs import get_or_create_run
    from trajectories.services.tasks import import_task_file

    call_command("migrate", verbosity=0)
    import_task_file(tasks)
    run = get_or_create_run("benchmark-run", agent="generated", model="samples")
    baseline = _peak_mb()

    started, cpu, server = time.perf_counter(), _cpu_seconds(), _server_cpu_seconds()
    report = import_paths([folder], run)
    first = time.perf_counter() - started
    cpu = tuple(after - before for after, before in zip(_cpu_seconds(), cpu))
    server = _server_cpu_seconds() - server
    peak = _peak_mb()

    started = time.perf_counter()
    again = import_paths([folder], run)
    second = time.perf_counter() - started

    print(json.dumps({
        "vendor": connection.vendor,
        "workers": settings.INGEST_WORKERS,
        "peak_rss_mb_workers": _children_peak_mb(),
        "files": len(report.files),
        "counts": report.counts(),
        "seconds": first,
        "cpu_seconds": cpu[0] + cpu[1],
        "cpu_kernel_seconds": cpu[1],
        "worker_cpu_seconds": cpu[2] + cpu[3],
        "worker_cpu_kernel_seconds": cpu[3],
        "server_cpu_seconds": server,
        "files_per_second": len(report.files) / first,
        "reimport_seconds": second,
        "reimport_counts": again.counts(),
        "peak_rss_mb_before_import": baseline,
        "peak_rss_mb": peak,
    }))


def _postgres_database(admin_url: str, name: str, create: bool) -> str:
    import psycopg

    with psycopg.connect(admin_url, autocommit=True) as connection:
        connection.execute(f"DROP DATABASE IF EXISTS {name}")
        if create:
            connection.execute(f"CREATE DATABASE {name}")
    return admin_url.rsplit("/", 1)[0] + f"/{name}"


@contextlib.contextmanager
def _written_to(scratch: Path, fresh: bool):
    """Where one measurement writes its files, all gone afterwards: a folder in the scratch folder,
    or a new ext4 file system of its own."""
    with contextlib.ExitStack() as cleanup:
        if not fresh:
            folder = scratch / "written"
            folder.mkdir()
            cleanup.callback(shutil.rmtree, folder, ignore_errors=True)
            yield folder
            return
        image, mount = scratch / "written.img", scratch / "written"
        run_bytes = sum(path.stat().st_size for path in (scratch / "run").iterdir())
        with image.open("wb") as file:
            file.truncate(max(4 << 30, 3 * run_bytes))
        cleanup.callback(image.unlink)
        subprocess.run(["mkfs.ext4", "-q", "-F", str(image)], check=True)
        # Direct I/O: the image's blocks are not cached a second time in the page cache under it.
        device = subprocess.run(["losetup", "--direct-io=on", "--find", "--show", str(image)],
                                check=True, capture_output=True, text=True).stdout.strip()
        cleanup.callback(subprocess.run, ["losetup", "--detach", device], check=True)
        mount.mkdir(exist_ok=True)
        subprocess.run(["mount", device, str(mount)], check=True)
        cleanup.callback(subprocess.run, ["umount", str(mount)], check=True)
        yield mount


def _floor(scratch: Path, written: Path, workers: int) -> dict:
    """The I/O floor (`render_io_floor.py`) in a fresh process, with as many processes as the import."""
    output = written / "floor"
    command = [sys.executable, str(Path(__file__).with_name("render_io_floor.py")), str(scratch / "run"), str(output),
               "--workers", str(workers)]
    result = subprocess.run(command, check=True, capture_output=True, text=True, cwd=ROOT).stdout
    return json.loads(result.strip().splitlines()[-1])


def _measure(url: str, scratch: Path, written: Path, workers: int) -> dict:
    media = written / "media"
    environment = {**os.environ, "DATABASE_URL": url, "MEDIA_ROOT": str(media), "INGEST_WORKERS": str(workers),
                   "INGEST_MAX_FILES": "100000", "INGEST_MAX_UNCOMPRESSED_BYTES": str(1 << 40)}
    command = [sys.executable, __file__, "--child", str(scratch / "run"), str(scratch / "tasks.json")]
    output = subprocess.run(command, env=environment, check=True, capture_output=True, text=True, cwd=ROOT).stdout
    return json.loads(output.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=812)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=os.cpu_count(), help="The pool measured beside 1 process")
    parser.add_argument("--databases", nargs="+", choices=["sqlite", "postgres"], default=["sqlite", "postgres"])
    parser.add_argument("--postgres-url", default="postgres://postgres@127.0.0.1:5432/postgres",
                        help="An admin connection; the benchmark creates and drops its own databases")
    parser.add_argument("--database", default="trajscope_bench_ingest", help="The PostgreSQL database it creates and drops")
    parser.add_argument("--settle", type=int, default=61,
                        help="Seconds to wait after generating the run and after each measurement, for deleted files to stop costing")
    parser.add_argument("--fresh-filesystem", action="store_true",
                        help="Write each measurement's files into a new ext4 file system (needs root and loop devices)")
    parser.add_argument("--child", nargs=2, type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(*args.child)
        return

    with tempfile.TemporaryDirectory(prefix="trajscope-ingest-") as scratch:
        _run(args, Path(scratch))


def _settle(seconds: int) -> None:
    """Wait for the disk to settle after files were deleted: ext4 without a journal (as this
    machine's root file system) steps around recently freed inodes, so creating thousands of files
    just after deleting thousands costs the kernel several times the CPU of creating them on a
    quiet disk. An inode counts as recent for a minute, and for minutes more while its inode-table
    block has unwritten changes, which the next measurement's own new files cause: a minute is
    often not enough, and --fresh-filesystem compares like with like. Deleting the files instead of
    keeping them keeps the page cache from filling up (reclaiming it costs CPU too)."""
    os.sync()  # nothing left for the kernel to write back: that work would land on the same cores
    if seconds:
        print(f"waiting {seconds} s for the disk to settle")
        time.sleep(seconds)


def _run(args: argparse.Namespace, scratch: Path) -> None:
    started = time.perf_counter()
    tasks = generate_tasks(scratch / "tasks.json", args.files)
    size = generate_run(scratch / "run", tasks, args.seed)
    print(f"generated {args.files} render files, {size / 1e6:.0f} MB ({size / args.files / 1e6:.2f} MB each) "
          f"in {time.perf_counter() - started:.1f} s")
    _settle(args.settle)
    print(f"{os.cpu_count()} CPUs, Python {platform.python_version()}, load average before: "
          f"{' '.join(f'{load:.1f}' for load in os.getloadavg())}")
    for database in args.databases:
        results = {}
        for workers in (1, args.workers):
            with _written_to(scratch, args.fresh_filesystem) as written:
                floor = _floor(scratch, written, workers)
            print(f"I/O floor, {workers} process(es): read {floor['files']} files ({floor['bytes_read'] / 1e6:.0f} MB), "
                  f"wrote {floor['screenshots']} screenshots ({floor['bytes_written'] / 1e6:.0f} MB) in "
                  f"{floor['seconds']:.1f} s (CPU {floor['cpu_seconds']:.1f} s, {floor['cpu_kernel_seconds']:.1f} s "
                  f"in the kernel); load average {' '.join(f'{load:.1f}' for load in os.getloadavg())}")
            _settle(args.settle)
            if database == "sqlite":
                url = f"sqlite:///{scratch / 'bench.sqlite3'}"
            else:
                url = _postgres_database(args.postgres_url, args.database, create=True)
            try:
                with _written_to(scratch, args.fresh_filesystem) as written:
                    results[workers] = result = _measure(url, scratch, written, workers)
            finally:
                if database == "sqlite":
                    Path(url.removeprefix("sqlite:///")).unlink(missing_ok=True)
                else:
                    _postgres_database(args.postgres_url, args.database, create=False)
            print(
                f"{result['vendor']:10} {result['workers']} parsing process(es): {result['files']} files in "
                f"{result['seconds']:.1f} s = {result['files_per_second']:.0f} files/s (CPU: importing process "
                f"{result['cpu_seconds']:.1f} s ({result['cpu_kernel_seconds']:.1f} s in the kernel), parsing workers "
                f"{result['worker_cpu_seconds']:.1f} s ({result['worker_cpu_kernel_seconds']:.1f} s)); peak RSS "
                f"{result['peak_rss_mb']:.0f} MB (after setup: {result['peak_rss_mb_before_import']:.0f} MB; "
                f"largest worker {result['peak_rss_mb_workers']:.0f} MB); re-import "
                f"{result['reimport_seconds']:.1f} s {result['reimport_counts']}; counts {result['counts']}"
            )
            cpu = result["cpu_seconds"] + result["worker_cpu_seconds"]
            least = (cpu + result["server_cpu_seconds"]) / os.cpu_count()
            print(f"{result['vendor']:10} {result['workers']} parsing process(es) against the I/O floor: "
                  f"{result['seconds']:.1f} s / {floor['seconds']:.1f} s = {result['seconds'] / floor['seconds']:.2f}x "
                  f"wall; CPU {cpu:.1f} s / {floor['cpu_seconds']:.1f} s = {cpu / floor['cpu_seconds']:.2f}x, and "
                  f"{result['server_cpu_seconds']:.1f} s of the database server's; with all {os.cpu_count()} cores busy "
                  f"the import could take no less than {least:.1f} s = {least / floor['seconds']:.2f}x the floor; "
                  f"load average {' '.join(f'{load:.1f}' for load in os.getloadavg())}")
            _settle(args.settle)
        single, pooled = results[1]["seconds"], results[args.workers]["seconds"]
        print(f"{database:10} {args.workers} processes vs 1: {pooled:.1f} s vs {single:.1f} s = "
              f"{single / pooled:.2f}x faster; load average after: "
              f"{' '.join(f'{load:.1f}' for load in os.getloadavg())}")


if __name__ == "__main__":
    main()
