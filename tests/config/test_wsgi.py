import subprocess
import sys

from django.conf import settings


def test_a_served_process_keeps_what_it_loaded_out_of_full_collections():
    """A full pass of the collector over a loaded Django process took 60-150 ms of a request."""
    probe = ("import gc, sys, config.wsgi; "
             "print(gc.get_freeze_count(), 'metrics.views' in sys.modules, len(gc.get_objects()))")
    output = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True,
                            cwd=settings.BASE_DIR).stdout.split()
    frozen, views_loaded, tracked = int(output[0]), output[1] == "True", int(output[2])
    assert views_loaded  # the URL map, and through it every view, was loaded before freezing
    assert frozen > 100_000 and tracked < frozen / 10
