"""Time of the failure theme job's work on 5,000 failed trajectories: encoding their texts with the
shipped sentence model and grouping them (`failures/themes.py`).

The texts are made from templates of web-agent failures with varied values (seeded), each about
as long as a note plus a decisive step's action and reasoning. Reading them from the database is one
query and is left out.

    .venv/bin/python benchmarks/failure_themes.py [--failures 5000] [--seed 0]
"""

import argparse
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from failures.themes import FailureText, themes  # noqa: E402
from judges.embeddings import sentence_encoder  # noqa: E402

TEMPLATES = (
    "A captcha on {site} blocked the login. click [{n}] I will try to sign in to {site} again with the account.",
    "Typed {value} instead of {other} into the {field} field. type [{n}] [{value}] Entering the {field} now.",
    "Kept scrolling the {site} results without opening one. scroll [down] The item may be further down the list.",
    "Answered {value} although the page showed {other}. stop [{value}] The answer is {value} as I remember it.",
    "Opened the {field} menu of {site} instead of the orders. click [{n}] Orders should be under {field}.",
    "The {site} page returned an error 500 and the agent stopped. goto [{site}/{field}] Reloading the page.",
)
SITES = ("shopping", "gitlab", "reddit", "maps", "wikipedia", "booking", "airline", "cms", "forum", "bank")
FIELDS = ("date", "quantity", "search", "address", "price", "title", "account", "settings", "filter", "review")


def texts(count: int, seed: int) -> list[FailureText]:
    rng = random.Random(seed)
    return [FailureText(index, rng.choice(TEMPLATES).format(
        site=rng.choice(SITES), field=rng.choice(FIELDS), n=rng.randint(1, 900),
        value=str(rng.randint(1, 3000)), other=str(rng.randint(1, 3000)))) for index in range(count)]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--failures", type=int, default=5000)
    parser.add_argument("--seed", type=int, default=0)
    options = parser.parse_args()
    failures = texts(options.failures, options.seed)
    encoder = sentence_encoder()
    encoder.encode(["warm up"])
    started = time.perf_counter()
    vectors = encoder.encode([item.text for item in failures])
    encoded = time.perf_counter()
    found = themes(failures, vectors)
    grouped = time.perf_counter()
    print(f"{len(failures)} failures: encoding {encoded - started:.1f} s, grouping {grouped - encoded:.1f} s, "
          f"total {grouped - started:.1f} s; {len(found)} themes, the largest: "
          + "; ".join(f"{theme.label} ({theme.size})" for theme in found[:6]))


if __name__ == "__main__":
    main()
