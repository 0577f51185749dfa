"""Mutation testing of the modules the numbers and the security rest on (`bin/mutation`).

mutmut (pinned in requirements.txt) changes one small thing at a time in a module (a `<` into
`<=`, a constant, a condition dropped) and runs the module's own tests against each change: a
change that no test notices is a surviving mutant, logic the tests let through. The units, each a
few modules with the tests that are theirs, are listed in `tests/mutation.toml`; mutants that
cannot be told apart from the original by any test are written down, with the reason, in
`tests/mutation_equivalents.toml`. A unit fails when a mutant survives that is not written down
there, and when an entry there no longer matches a surviving mutant (the list stays true).

Each unit runs in a folder of its own under `var/mutation/` (mutmut's copy of the code in
`mutants/` and its configuration), so that units never share results and the project's own
`pyproject.toml` needs no mutmut section.
"""

import argparse
import fnmatch
import json
import os
import resource
import shutil
import subprocess
import sys
import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
UNITS_FILE = ROOT / "tests" / "mutation.toml"
EQUIVALENTS_FILE = ROOT / "tests" / "mutation_equivalents.toml"
WORK = ROOT / "var" / "mutation"
# What the tests import or read beside the code: linked into each unit's folder and copied by mutmut.
APPS = ("accounts", "infrastructure", "trajectories", "judges", "annotation", "failures", "metrics", "config")
ALSO_COPY = ("templates", "static", "fixtures", "docs", "manage.py")

# Mutants are tested two at a time by default, each in a process forked from the one that ran the tests
# first: they share one SQLite test database in the unit's folder (made once, kept by --reuse-db), on which
# each test's transaction waits for the other's. Browser and worker tests start processes of their own.
PYTEST_ARGS = ("-p", "no:cacheprovider", "--reuse-db", "-m", "not browser and not worker")

# mutmut's exit codes per mutant (mutmut.stats.status_by_exit_code): a test failed, or ran out of time.
KILLED = {1, 3}
TIMEOUT = {36, 24, -24, 152, 255}


@dataclass
class Unit:
    name: str
    modules: list[str]
    tests: list[str]
    ci: bool = False


@dataclass
class Equivalent:
    module: str
    function: str
    removed: list[str]
    added: list[str]
    reason: str


@dataclass
class Mutant:
    key: str
    module: str
    function: str
    exit_code: int | None
    removed: list[str] = field(default_factory=list)
    added: list[str] = field(default_factory=list)


@dataclass
class Outcome:
    unit: Unit
    total: int = 0
    killed: int = 0
    timeouts: int = 0
    equivalent: int = 0
    survivors: list[Mutant] = field(default_factory=list)
    stale: list[Equivalent] = field(default_factory=list)
    seconds: float = 0.0
    cpu_seconds: float = 0.0
    error: str = ""

    @property
    def passed(self) -> bool:
        return not (self.error or self.survivors or self.stale)


def load_units(path: Path = UNITS_FILE) -> list[Unit]:
    data = tomllib.loads(path.read_text())
    return [Unit(name=name, modules=sorted({str(found.relative_to(ROOT)) for pattern in spec["modules"]
                                            for found in ROOT.glob(pattern)}),
                 tests=spec["tests"], ci=spec.get("ci", False))
            for name, spec in data["unit"].items()]


def _lines(text: str) -> list[str]:
    return [line.strip() for line in text.strip().splitlines() if line.strip()]


def load_equivalents(path: Path = EQUIVALENTS_FILE) -> list[Equivalent]:
    data = tomllib.loads(path.read_text())
    return [Equivalent(module=entry["module"], function=entry["function"], removed=_lines(entry["removed"]),
                       added=_lines(entry["added"]), reason=entry["reason"].strip())
            for entry in data.get("equivalent", [])]


def function_name(key: str) -> str:
    """`pkg.mod.xǁClassǁmethod__mutmut_3` -> `Class.method`; `pkg.mod.x_func__mutmut_1` -> `func`."""
    mangled = key.rsplit("__mutmut_", 1)[0].rsplit(".", 1)[1]
    if mangled.startswith("xǁ"):
        _, cls, method = mangled.split("ǁ", 2)
        return f"{cls}.{method}"
    return mangled.removeprefix("x_")


def matches(equivalent: Equivalent, mutant: Mutant) -> bool:
    return (equivalent.module == mutant.module and equivalent.function == mutant.function
            and equivalent.removed == mutant.removed and equivalent.added == mutant.added)


def select_units(units: list[Unit], patterns: list[str], ci: bool, changed: set[str] | None) -> list[Unit]:
    """Units named (or holding a module a pattern matches), or the CI set; with `changed`, also those a change touches.
    With neither patterns, the CI set nor a change: every unit."""
    def named(unit):
        return any(fnmatch.fnmatch(unit.name, p) or any(fnmatch.fnmatch(m, p) for m in unit.modules) for p in patterns)

    def touched(unit):
        return any(m in changed for m in unit.modules) or any(
            path == test or path.startswith(test.rstrip("/") + "/") for path in changed for test in unit.tests)

    everything = not patterns and not ci and changed is None
    return [unit for unit in units
            if everything or (patterns and named(unit)) or (ci and unit.ci) or (changed is not None and touched(unit))]


def changed_files(ref: str) -> set[str] | None:
    """Files changed since this branch left `ref` (None when `ref` is not known here)."""
    base = subprocess.run(["git", "merge-base", ref, "HEAD"], cwd=ROOT, capture_output=True, text=True)
    if base.returncode != 0:
        return None
    diff = subprocess.run(["git", "diff", "--name-only", base.stdout.strip()], cwd=ROOT, capture_output=True,
                          text=True, check=True)
    return set(diff.stdout.split())


def _toml_list(items) -> str:
    return "[" + ", ".join(json.dumps(str(item)) for item in items) + "]"


def prepare(unit: Unit) -> Path:
    """A fresh folder for the unit: links to the code and mutmut's configuration for this unit."""
    folder = WORK / unit.name
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    for name in (*APPS, *ALSO_COPY, "tests"):
        (folder / name).symlink_to(ROOT / name)
    project = (ROOT / "pyproject.toml").read_text()
    (folder / "pyproject.toml").write_text(
        project + "\n[tool.mutmut]\n"
        f"source_paths = {_toml_list(APPS)}\n"
        f"only_mutate = {_toml_list(unit.modules)}\n"
        f"also_copy = {_toml_list(ALSO_COPY)}\n"
        f"pytest_add_cli_args_test_selection = {_toml_list(unit.tests)}\n"
        f"pytest_add_cli_args = {_toml_list(PYTEST_ARGS)}\n"
    )
    (folder / "mutants" / "var").mkdir(parents=True)
    return folder


def _mutmut(folder: Path, *args: str, env: dict, log) -> subprocess.CompletedProcess:
    return subprocess.run([str(Path(sys.executable).parent / "mutmut"), *args], cwd=folder, env=env,
                          stdout=log, stderr=subprocess.STDOUT, text=True)


def mutant_diff(folder: Path, mutant: Mutant) -> str:
    """The mutant's diff against the original function, as `mutmut show` prints it (read in this process:
    a `mutmut show` per surviving mutant costs a second each)."""
    from mutmut.mutation.diff_apply import get_diff_for_mutant

    here = Path.cwd()
    os.chdir(folder)
    try:
        return get_diff_for_mutant(mutant.key, path=mutant.module)
    finally:
        os.chdir(here)


def diff_lines(show_output: str) -> tuple[list[str], list[str]]:
    """The removed and added lines of `mutmut show`'s diff, stripped."""
    removed, added = [], []
    for line in show_output.splitlines():
        if line.startswith(("---", "+++")):
            continue
        if line.startswith("-") and line[1:].strip():
            removed.append(line[1:].strip())
        elif line.startswith("+") and line[1:].strip():
            added.append(line[1:].strip())
    return removed, added


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_unit(unit: Unit, equivalents: list[Equivalent], max_children: int, log_to, rerun: bool = True) -> Outcome:
    outcome = Outcome(unit)
    folder = WORK / unit.name
    log_path = folder / "mutmut.log"
    if rerun:
        prepare(unit)
        env = {key: value for key, value in os.environ.items() if key != "DATABASE_URL"}
        env.update(HYPOTHESIS_PROFILE="ci", PYTHONDONTWRITEBYTECODE="1")
        env.setdefault("SHARED_DATA_DIR", str(ROOT.parent / "shared" / "data"))
        started, cpu = time.monotonic(), _children_cpu()
        with log_path.open("w") as log:
            run = _mutmut(folder, "run", "--max-children", str(max_children), env=env, log=log)
        outcome.seconds, outcome.cpu_seconds = time.monotonic() - started, _children_cpu() - cpu
        if run.returncode != 0:
            outcome.error = f"mutmut stopped with exit code {run.returncode}: see {log_path.relative_to(ROOT)}"
            return outcome
    mutants = []
    for module in unit.modules:
        meta = folder / "mutants" / f"{module}.meta"
        if not meta.exists():
            outcome.error = f"mutmut made no mutants of {module} (is the path right?)"
            return outcome
        for key, exit_code in json.loads(meta.read_text())["exit_code_by_key"].items():
            mutants.append(Mutant(key=key, module=module, function=function_name(key), exit_code=exit_code))
    outcome.total = len(mutants)
    listed = [e for e in equivalents if e.module in unit.modules]
    used = set()
    for mutant in mutants:
        if mutant.exit_code in KILLED:
            outcome.killed += 1
            continue
        if mutant.exit_code in TIMEOUT:
            outcome.timeouts += 1
            continue
        mutant.removed, mutant.added = diff_lines(mutant_diff(folder, mutant))
        match = next((i for i, e in enumerate(listed) if matches(e, mutant)), None)
        if match is None:
            outcome.survivors.append(mutant)
        else:
            used.add(match)
            outcome.equivalent += 1
    outcome.stale = [e for i, e in enumerate(listed) if i not in used]
    print(f"  (log: {log_path.relative_to(ROOT)})", file=log_to)
    return outcome


STATUS = {0: "survived", 33: "no test reaches it", 5: "no test reaches it", 34: "skipped", None: "not checked"}


def report(outcome: Outcome, out) -> None:
    unit = outcome.unit
    if outcome.error:
        print(f"{unit.name}: ERROR {outcome.error}", file=out)
        return
    print(f"{unit.name}: {outcome.killed + outcome.timeouts}/{outcome.total} killed "
          f"({outcome.timeouts} by timeout), {outcome.equivalent} equivalent, {len(outcome.survivors)} not written down, "
          f"{outcome.seconds:.0f} s ({outcome.cpu_seconds:.0f} s of CPU)", file=out)
    for mutant in outcome.survivors:
        print(f"  {STATUS.get(mutant.exit_code, 'suspicious')}: {mutant.module} {mutant.function} ({mutant.key})",
              file=out)
        for line in mutant.removed:
            print(f"    - {line}", file=out)
        for line in mutant.added:
            print(f"    + {line}", file=out)
    for entry in outcome.stale:
        print(f"  written down as equivalent, but no such mutant survived: {entry.module} {entry.function}: "
              f"{entry.removed} -> {entry.added}", file=out)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="bin/mutation", description=__doc__.split("\n\n")[0])
    parser.add_argument("patterns", nargs="*", help="units or module paths (globs) to run; all units when none")
    parser.add_argument("--ci", action="store_true", help="the units marked ci in tests/mutation.toml")
    parser.add_argument("--changed", metavar="REF",
                        help="also the units whose modules or tests changed since this branch left REF")
    parser.add_argument("--max-children", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--list", action="store_true", help="print the chosen units and stop")
    parser.add_argument("--last", action="store_true",
                        help="report the last run of the chosen units again (after editing the equivalents)")
    args = parser.parse_args(argv)

    units = load_units()
    changed = changed_files(args.changed) if args.changed else None
    chosen = select_units(units, args.patterns, args.ci, changed)
    if not chosen:
        print("No unit matches.", file=sys.stderr)
        return 2
    if args.list:
        for unit in chosen:
            print(unit.name, " ".join(unit.modules))
        return 0
    equivalents = load_equivalents()
    started = time.monotonic()
    failed = False
    for unit in chosen:
        print(f"{unit.name}: {' '.join(unit.modules)} against {' '.join(unit.tests)}", flush=True)
        outcome = run_unit(unit, equivalents, args.max_children, sys.stdout, rerun=not args.last)
        report(outcome, sys.stdout)
        sys.stdout.flush()
        failed |= not outcome.passed
    print(f"Mutation testing of {len(chosen)} units took {time.monotonic() - started:.0f} s.")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
