"""The I/O floor of importing a folder of WebArena render files: what no import of them can avoid.

Reads every render file of the folder whole, finds its base64 screenshots (the text between
`base64,` and the closing quote), decodes them with pybase64 as the importer does and writes each
to a new file (O_CREAT | O_EXCL, as the importer's screenshot storage) in one folder under the
output folder, as the importer's `screenshots/%Y/%m/` does. No parsing, no hashing, no Django, no
database. With --workers above 1 the files are shared out to that many forked processes, as the
importer's parsing pool does. Prints one JSON line: files, screenshots, bytes read and written,
wall seconds and CPU seconds (this process and its workers, with the kernel's part).

    .venv/bin/python benchmarks/render_io_floor.py FOLDER OUTPUT [--workers 1]
"""

import argparse
import json
import multiprocessing
import os
import resource
import time
from pathlib import Path

import pybase64

_START, _END = b"base64,", b"'"


def copy_screenshots(path: Path, folder: Path) -> tuple[int, int, int]:
    """Write the decoded screenshots of one render file; returns (screenshots, bytes read, bytes written)."""
    with path.open("rb") as file:
        data = file.read()
    count = written = 0
    position = data.find(_START)
    while position != -1:
        start = position + len(_START)
        end = data.index(_END, start)
        image = pybase64.b64decode(data[start:end])
        descriptor = os.open(folder / f"{path.stem}-{count}.png", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        with os.fdopen(descriptor, "wb") as output:
            output.write(image)
        count, written = count + 1, written + len(image)
        position = data.find(_START, end)
    return count, len(data), written


def _cpu() -> dict:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return {"cpu_seconds": own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime,
            "cpu_kernel_seconds": own.ru_stime + children.ru_stime}


def floor(source: Path, output: Path, workers: int) -> dict:
    files = sorted(source.glob("*.html"))
    folder = output / "screenshots"
    folder.mkdir(parents=True, exist_ok=True)
    before, started = _cpu(), time.perf_counter()
    if workers < 2:
        results = [copy_screenshots(path, folder) for path in files]
    else:
        with multiprocessing.get_context("fork").Pool(workers) as pool:
            results = pool.starmap(copy_screenshots, [(path, folder) for path in files], chunksize=4)
    seconds = time.perf_counter() - started
    cpu = {key: value - before[key] for key, value in _cpu().items()}
    return {"workers": workers, "files": len(files), "screenshots": sum(r[0] for r in results),
            "bytes_read": sum(r[1] for r in results), "bytes_written": sum(r[2] for r in results),
            "seconds": seconds, **cpu}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("output", type=Path)
    parser.add_argument("--workers", type=int, default=1)
    args = parser.parse_args()
    print(json.dumps(floor(args.folder, args.output, args.workers)))


if __name__ == "__main__":
    main()
