"""The store decision alone, from hand-written cases: what the run holds of the task, the file's
content, whether replacing was asked, and which file of the upload gave the run its trajectory."""

import pytest

from trajectories.services.store_decision import Given, Store, store_decision

OTHER_FILE = Given(file="alpha/result.json", run="alpha")


@pytest.mark.parametrize(("held", "content", "replace", "given", "run", "expected"), [
    # The run holds nothing of the task: stored, whatever else is said.
    (None, "h1", False, None, "", Store.NEW),
    (None, "h1", True, None, "", Store.NEW),
    (None, "h1", False, OTHER_FILE, "beta", Store.NEW),
    # The run holds this very content: nothing to write, even when replacing or given by another run's file.
    ("h1", "h1", False, None, "", Store.UNCHANGED),
    ("h1", "h1", True, None, "", Store.UNCHANGED),
    ("h1", "h1", False, OTHER_FILE, "beta", Store.UNCHANGED),
    # Another content, without replace: refused.
    ("h1", "h2", False, None, "", Store.REFUSE),
    # ... with replace: replaced.
    ("h1", "h2", True, None, "", Store.REPLACE),
    # Another content, given by this upload's results of another run: skipped, replace or not.
    ("h1", "h2", False, OTHER_FILE, "beta", Store.SKIP),
    ("h1", "h2", True, OTHER_FILE, "beta", Store.SKIP),
    ("h1", "h2", True, Given(file="alpha/result.json", run=""), "beta", Store.SKIP),
    # ... by results naming the same run: the ordinary refusal or replacement.
    ("h1", "h2", False, OTHER_FILE, "alpha", Store.REFUSE),
    ("h1", "h2", True, OTHER_FILE, "alpha", Store.REPLACE),
    # A giver without a file is no giver.
    ("h1", "h2", False, Given(file="", run="alpha"), "beta", Store.REFUSE),
])
def test_store_decision(held, content, replace, given, run, expected):
    assert store_decision(held, content, replace=replace, given=given, run=run) is expected


def test_the_decision_module_needs_no_django():
    import subprocess
    import sys

    code = ("import sys; import trajectories.services.store_decision; "
            "sys.exit(any(name == 'django' or name.startswith('django.') for name in sys.modules))")
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0
