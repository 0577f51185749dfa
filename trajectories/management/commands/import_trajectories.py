import json
import sys
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from trajectories.models import Paradigm
from trajectories.services.ingest import import_paths
from trajectories.services.runs import get_or_create_run


class Command(BaseCommand):
    help = (
        "Import agent trajectories into a run: WebArena render_<id>.html files, trajectory/v1 JSON or JSONL, "
        "html2json output, harness logs ([Result] PASS|FAIL) and config.json, as files, folders or zip archives."
    )

    def add_arguments(self, parser):
        parser.add_argument("paths", nargs="+", type=Path, help="Files, folders or zip archives")
        parser.add_argument("--run", required=True, help="Run name; created when new")
        parser.add_argument("--agent", default="", help="Agent name (for a new run, or a run without one)")
        parser.add_argument("--model", default="", help="Model name (for a new run, or a run without one)")
        parser.add_argument("--paradigm", default=Paradigm.STEP_BY_STEP, choices=Paradigm.values,
                            help="Planning paradigm of a new run")
        parser.add_argument("--replace", action="store_true",
                            help="Replace a run's trajectory for a task when the file holds a different one")
        parser.add_argument("--json", action="store_true", dest="as_json", help="Print the report as JSON")

    def handle(self, *args, paths, run, agent, model, paradigm, replace, as_json, **options):
        try:
            agent_run = get_or_create_run(run, agent=agent, model=model, paradigm=paradigm)
        except ValueError as error:
            raise CommandError(str(error)) from None
        with tqdm(total=0, unit="file", desc=f"import into {agent_run.name}", file=sys.stderr,
                  disable=options["verbosity"] == 0) as bar:

            def progress(done: int, total: int) -> None:
                bar.total = total
                bar.update(done - bar.n)

            report = import_paths(paths, agent_run, replace=replace, progress=progress)

        if as_json:
            self.stdout.write(json.dumps(report.to_dict(), indent=2, ensure_ascii=False))
        else:
            self._write_report(report)
        if report.refused:
            raise CommandError(report.refused)
        if report.failed:
            raise CommandError(f"{len(report.failed)} of {len(report.files)} entries failed: {report.failures_said()}")

    def _write_report(self, report) -> None:
        self.stdout.write(f"run {report.run}: {report.summary()}")
        for entry in report.files:
            if entry.status in ("failed", "skipped") or entry.notes:
                line = f"  {entry.status:9} {entry.location}"
                if entry.reason:
                    line += f": {entry.reason}"
                style = self.style.ERROR if entry.status == "failed" else self.style.WARNING
                self.stdout.write(style(line) if entry.status in ("failed", "skipped") else line)
                for note in entry.notes:
                    self.stdout.write(f"            {note}")
