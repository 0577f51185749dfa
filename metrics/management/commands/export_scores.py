import os
import sys
import tempfile
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from metrics import exports
from trajectories.models import AgentRun, TaskSubset


class Command(BaseCommand):
    help = (
        "Export a run's per-trajectory scores, per-step judge decisions or aggregates as CSV or JSON, from its "
        "latest finished evaluation unless --job names one. Columns: docs/exports.md."
    )

    def add_arguments(self, parser):
        parser.add_argument("--run", required=True, metavar="NAME", help="Run name")
        parser.add_argument("--what", required=True, choices=exports.RUN_EXPORTS)
        parser.add_argument("--format", default="csv", choices=tuple(exports.FORMATS))
        parser.add_argument("-o", "--output", required=True, metavar="FILE", help="Output file; '-' for stdout")
        parser.add_argument("--job", type=int, metavar="ID", help="Evaluation job to read instead of the latest")
        parser.add_argument("--judge", default="", metavar="NAME",
                            help="Latest finished evaluation with this judge configuration")
        parser.add_argument("--subset", default="", metavar="NAME",
                            help="Only the tasks of this subset (e.g. webarena-lite)")

    def handle(self, *args, run, what, format, output, job, judge, subset, **options):
        agent_run = AgentRun.objects.filter(name=run).first()
        if agent_run is None:
            raise CommandError(f"--run: no run named {run!r}")
        task_subset = TaskSubset.objects.filter(name=subset).first() if subset else None
        if subset and task_subset is None:
            raise CommandError(f"--subset: no subset named {subset!r}")
        try:
            selection = exports.run_selection(agent_run, job_id=job, judge=judge)
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        counted = []
        try:
            rows = exports.run_rows(what, selection, task_subset)
            chunks = exports.stream((counted.append(1) or row for row in rows), exports.EXPORTS[what], format)
        except exports.ExportTooLarge as exc:
            raise CommandError(str(exc)) from None
        if output == "-":
            for chunk in chunks:
                sys.stdout.buffer.write(chunk)
            sys.stdout.flush()
            return
        _write_whole(Path(output), chunks)
        [job_id] = selection.values()
        self.stdout.write(f"{output}: {len(counted)} rows of {what} of run {run!r} (evaluation #{job_id}, {format})")


def _write_whole(path: Path, chunks) -> None:
    """Write beside the target and rename, so a failure never leaves a half-written file."""
    folder = path.resolve().parent
    if not folder.is_dir():
        raise CommandError(f"-o: folder {folder} does not exist")
    handle, temporary = tempfile.mkstemp(dir=folder, prefix=f".{path.name}.")
    try:
        with os.fdopen(handle, "wb") as stream:
            for chunk in chunks:
                stream.write(chunk)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
