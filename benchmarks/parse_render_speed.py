"""Parse speed of the render-file parser against a straightforward BeautifulSoup parse.

Both parse the same texts, already read and decoded in memory: the three real samples of
shared/data/trajectory-samples and generated files shaped like them (see ingest_render_run.py).
The BeautifulSoup side is the parse the WebArena README suggests (`html.parser`, then
`find_all` per part: URLs, observations, screenshots, previous actions, reasoning, parsed
actions) and extracts the same fields as `parse_render`, without any of its checks. Times are
the best of `--repeats` passes over all files.

    .venv/bin/python benchmarks/parse_render_speed.py [--files 100] [--repeats 3] [--seed 0]
"""

import argparse
import platform
import sys
import tempfile
import time
from pathlib import Path

from bs4 import BeautifulSoup

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from ingest_render_run import SAMPLES, generate_run, generate_tasks  # noqa: E402

from trajectories.formats.webarena_render import parse_render  # noqa: E402


def parse_with_beautifulsoup(text: str) -> dict:
    soup = BeautifulSoup(text, "html.parser")
    return {
        "header": soup.find("pre").get_text(),
        "urls": [h3.get_text() for h3 in soup.find_all("h3", {"class": "url"})],
        "observations": [div.find("pre").get_text() for div in soup.find_all("div", {"class": "state_obv"})],
        "screenshots": [img["src"] for img in soup.find_all("img")],
        "previous_actions": [div.get_text() for div in soup.find_all("div", {"class": "prev_action"})],
        "reasoning": [div.get_text() for div in soup.find_all("div", {"class": "raw_parsed_prediction"})],
        "actions": [div.get_text() for div in soup.find_all("div", {"class": "parsed_action"})],
    }


def best_time(parse, texts: list[str], repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        for text in texts:
            parse(text)
        best = min(best, time.perf_counter() - started)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=100, help="Generated files besides the three samples")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="trajscope-parse-") as scratch:
        tasks = generate_tasks(Path(scratch) / "tasks.json", args.files)
        generate_run(Path(scratch) / "run", tasks, args.seed)
        paths = sorted(SAMPLES.glob("*.html")) + sorted((Path(scratch) / "run").glob("*.html"))
        texts = [path.read_text(encoding="utf-8") for path in paths]
    size = sum(len(text.encode("utf-8")) for text in texts)

    ours = best_time(parse_render, texts, args.repeats)
    soup = best_time(parse_with_beautifulsoup, texts, args.repeats)
    steps = sum(len(parse_render(text).steps) for text in texts)
    print(f"{len(texts)} render files ({len(texts) - args.files} real samples + {args.files} generated), "
          f"{size / 1e6:.0f} MB, {steps} agent steps; Python {platform.python_version()}")
    print(f"parse_render:  {ours:.3f} s  ({ours / len(texts) * 1000:.2f} ms/file, {size / ours / 1e6:.0f} MB/s)")
    print(f"BeautifulSoup: {soup:.3f} s  ({soup / len(texts) * 1000:.2f} ms/file, {size / soup / 1e6:.0f} MB/s)")
    print(f"ratio: parse_render is {soup / ours:.0f}x faster")


if __name__ == "__main__":
    main()
