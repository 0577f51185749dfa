"""Roles live in accounts, the bottom layer (tests/test_layers.py checks that no app below imports one
above): no module still imports them from annotation, their former home."""

import ast

from django.conf import settings

APPS = {"config", "trajectories", "annotation", "judges", "metrics"}


def _imported_modules(path) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
    return names


def test_no_app_imports_roles_from_annotation():
    stale = [
        str(path.relative_to(settings.BASE_DIR))
        for app in APPS
        for path in (settings.BASE_DIR / app).rglob("*.py")
        if "annotation.roles" in _imported_modules(path)
    ]
    assert not stale
