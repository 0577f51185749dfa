"""The apps import one way: the import-linter contracts in pyproject.toml (`[tool.importlinter]`).

accounts <- config's shared helpers <- trajectories <- judges <- annotation <- metrics <- config's
glue: a module never imports one from a layer above it, directly or through others; every config
module is declared glue or shared helper; services never import tasks. The contracts are checked
on the project itself, and on a copy with forbidden imports added, so that they are known to bite.
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

from django.conf import settings

PACKAGES = ("accounts", "trajectories", "judges", "annotation", "metrics", "config")


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
    assert "3 kept, 0 broken" in result.stdout


def _append(path: Path, line: str) -> None:
    path.write_text(path.read_text() + line + "\n")


def test_an_upward_import_breaks_the_contracts(tmp_path):
    for package in PACKAGES:
        shutil.copytree(settings.BASE_DIR / package, tmp_path / package, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(settings.BASE_DIR / "pyproject.toml", tmp_path)
    _append(tmp_path / "trajectories" / "selectors.py", "from metrics.models import TrajectoryScore")
    _append(tmp_path / "judges" / "calibration.py", "import annotation.agreement")  # pure, but a layer above
    _append(tmp_path / "config" / "jobs.py", "from trajectories.models import ImportJob")  # shared helper -> app
    _append(tmp_path / "metrics" / "services" / "evaluation.py", "from metrics import tasks")
    (tmp_path / "config" / "reports.py").write_text('"""A config module that says neither glue nor shared."""\n')

    result = lint_imports(tmp_path)

    report = result.stdout
    assert result.returncode == 1, report + result.stderr
    assert "0 kept, 3 broken" in report
    assert "trajectories is not allowed to import metrics" in report
    assert "trajectories.selectors -> metrics.models" in report
    assert "judges.calibration -> annotation.agreement" in report
    assert "config.jobs -> trajectories.models" in report
    assert "metrics.services.evaluation -> metrics.tasks" in report
    assert "config.reports" in report
