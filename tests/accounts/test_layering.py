"""accounts is the bottom layer: it imports no other app of the project (they all import it)."""

import ast

from django.conf import settings

HIGHER = {"config", "trajectories", "annotation", "judges", "metrics"}


def _imported_modules(path) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
    return names


def test_accounts_imports_no_other_project_app():
    offending = {
        f"{path.relative_to(settings.BASE_DIR)}: {name}"
        for path in (settings.BASE_DIR / "accounts").rglob("*.py")
        for name in _imported_modules(path)
        if name.split(".")[0] in HIGHER
    }
    assert not offending


def test_no_app_imports_roles_from_annotation():
    stale = [
        str(path.relative_to(settings.BASE_DIR))
        for app in HIGHER
        for path in (settings.BASE_DIR / app).rglob("*.py")
        if "annotation.roles" in _imported_modules(path)
    ]
    assert not stale
