"""The apps import one way: the import-linter contracts in pyproject.toml (`[tool.importlinter]`).

accounts <- infrastructure <- trajectories <- judges <- annotation <- failures <- metrics <- config: a module
never imports one from a layer above it, directly or through others; services never import tasks;
and no module imports itself through others (no circle, even between files of one app). The rules
are checked on the project itself, and on a copy with forbidden imports added, so that they are
known to bite.
"""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from django.conf import settings

PACKAGES = ("accounts", "infrastructure", "trajectories", "judges", "annotation", "failures", "metrics", "config")


def lint_imports(root: Path) -> subprocess.CompletedProcess:
    """`lint-imports` as a developer runs it in `root`, without writing its cache there."""
    return subprocess.run(
        [sys.executable, "-c", "from importlinter.cli import lint_imports_command; lint_imports_command()",
         "--config", str(root / "pyproject.toml"), "--no-cache"],
        cwd=root, env={**os.environ, "PYTHONPATH": str(root)},
        capture_output=True, text=True, timeout=300,
    )


def test_the_apps_keep_their_import_contracts():
    result = lint_imports(settings.BASE_DIR)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "2 kept, 0 broken" in result.stdout


def _append(path: Path, line: str) -> None:
    path.write_text(path.read_text() + line + "\n")


def test_an_upward_import_breaks_the_contracts(tmp_path):
    for package in PACKAGES:
        shutil.copytree(settings.BASE_DIR / package, tmp_path / package, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(settings.BASE_DIR / "pyproject.toml", tmp_path)
    _append(tmp_path / "trajectories" / "selectors.py", "from metrics.models import TrajectoryScore")
    _append(tmp_path / "judges" / "calibration.py", "import annotation.agreement")  # pure, but a layer above
    _append(tmp_path / "infrastructure" / "jobs.py", "from trajectories.models import ImportJob")  # helper -> app
    _append(tmp_path / "metrics" / "services" / "evaluation.py", "from metrics import tasks")

    result = lint_imports(tmp_path)

    report = result.stdout
    assert result.returncode == 1, report + result.stderr
    assert "0 kept, 2 broken" in report
    assert "trajectories is not allowed to import metrics" in report
    assert "trajectories.selectors -> metrics.models" in report
    assert "judges.calibration -> annotation.agreement" in report
    assert "infrastructure.jobs -> trajectories.models" in report
    assert "metrics.services.evaluation -> metrics.tasks" in report


def circles(root: Path) -> list[list[str]]:
    """Groups of the project's modules that import each other, directly or through others (at any depth,
    imports inside functions included)."""
    code = (
        "import grimp, json, sys\n"
        f"graph = grimp.build_graph(*{PACKAGES!r}, cache_dir=None)\n"
        "index, low, stack, on, found = {}, {}, [], set(), []\n"
        "sys.setrecursionlimit(20000)\n"
        "def visit(module):\n"
        "    index[module] = low[module] = len(index)\n"
        "    stack.append(module); on.add(module)\n"
        "    for other in graph.find_modules_directly_imported_by(module):\n"
        "        if other not in index:\n"
        "            visit(other); low[module] = min(low[module], low[other])\n"
        "        elif other in on:\n"
        "            low[module] = min(low[module], index[other])\n"
        "    if low[module] == index[module]:\n"
        "        group = []\n"
        "        while not group or group[-1] != module:\n"
        "            group.append(stack.pop()); on.discard(group[-1])\n"
        "        if len(group) > 1:\n"
        "            found.append(sorted(group))\n"
        "for module in sorted(graph.modules):\n"
        "    if module not in index:\n"
        "        visit(module)\n"
        "print(json.dumps(sorted(found)))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=root, env={**os.environ, "PYTHONPATH": str(root)},
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_no_module_imports_itself_through_others():
    assert circles(settings.BASE_DIR) == []


def test_a_circle_between_two_files_of_one_app_is_found(tmp_path):
    for package in PACKAGES:
        shutil.copytree(settings.BASE_DIR / package, tmp_path / package, ignore=shutil.ignore_patterns("__pycache__"))
    _append(tmp_path / "annotation" / "gold_records.py", "from annotation import mind2web")

    assert ["annotation.gold_records", "annotation.mind2web"] in circles(tmp_path)
