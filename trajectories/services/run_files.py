"""The files of an import beside its trajectories: harness results logs and their indexes, run
summaries (AgentLab's study results, WebArena-Infinity's `results.json`), format traces, run
descriptions and harness configs, and files that are none of these. Each says what became of it
in the import's report; run summaries and format traces are read once the trajectories they may
belong to are stored.
"""

import posixpath

from django.db import transaction

from trajectories.formats.browsergym_agentlab import companion_reason, is_study_results, parse_study_results
from trajectories.formats.canonical import RunSummary, TaskRef
from trajectories.formats.format_traces import FORMAT as TRACE
from trajectories.formats.harness import parse_harness_config, parse_results
from trajectories.formats.readers import NOT_UTF8, Record
from trajectories.formats.sources import Catalogue, Source
from trajectories.formats.text import decode_utf8
from trajectories.formats.values import load_json
from trajectories.models import AgentRun, Trajectory

from .harness_verdicts import record_verdicts
from .import_report import IMPORTED, SKIPPED_STATUS, UNCHANGED, FileReport, ImportReport
from .runs import describe_run, parse_run_description, record_harness_config
from .tasks import RunTasks

_LISTED_TASKS = 20


class RunFiles:
    """The files of one import into `run` that are not trajectory files. `held` (the run's
    trajectories by task pk: (id, content hash)) and `verdict_tasks` (the task pks with a kept
    harness verdict) are the import's own, shared with the trajectory files: what one stores, the
    other sees."""

    def __init__(self, run: AgentRun, report: ImportReport, catalogue: Catalogue, tasks: RunTasks,
                 held: dict[int, tuple[int, str]], verdict_tasks: set[int]):
        self.run, self.report, self.catalogue, self.tasks = run, report, catalogue, tasks
        self.held, self.verdict_tasks = held, verdict_tasks

    def skipped(self, source: Source, content=None) -> None:
        reason = ("archives inside archives are not opened" if source.suffix == ".zip"
                  else companion_reason(source.name) or "not a trajectory, result log or run description file")
        self.report.files.append(FileReport(file=source.name, status=SKIPPED_STATUS, kind="other", reason=reason))

    def trace(self, source: Source, record: Record) -> FileReport:
        """A format trace: the task's harness verdict, and its model outputs for the task's steps."""
        entry = FileReport(file=source.name, status=SKIPPED_STATUS, kind="harness_verdict", format=TRACE,
                           notes=list(record.notes))
        if record.error is not None:
            entry.reason = f"not a trajectory: prompt/response trace, not read: {record.error}"
            return entry
        trace = record.trace
        entry.task_id = trace.task_id
        verdict = {True: "PASS", False: "FAIL", None: "no verdict"}[trace.success]
        entry.notes.append(f"harness verdict {verdict}" + (f" ({trace.verdict_field})" if trace.verdict_field else "")
                           + f"; {len(trace.model_outputs)} model outputs")
        task = self.tasks.get(TaskRef(task_id=trace.task_id, benchmark=self.run.benchmark))
        if task is None:
            entry.reason = _unknown_tasks(self.run.benchmark, [trace.task_id])
            return entry
        applied = record_verdicts(self.run, {trace.task_id: trace.success}, source.name,
                                  {trace.task_id: trace.model_outputs})
        self.verdict_tasks |= applied.kept
        if trace.intent and " ".join(trace.intent.split()) != " ".join(task.intent.split()):
            entry.notes.append(f"the trace's intent differs from task {task}'s: {trace.intent!r}")
        for _, earlier, earlier_source in applied.overruled:
            entry.notes.append(f"replaces the verdict {'PASS' if earlier else 'FAIL'} from {earlier_source}")
        for _, steps in applied.attached:
            entry.notes.append(f"model outputs attached to the trajectory's {steps} steps, by order")
        for _, outputs, steps in applied.unaligned:
            entry.notes.append(f"{outputs} model outputs for {steps} steps: not attached to the steps")
        if applied.without_trajectory:
            entry.reason = ("verdict without trajectory: the run has no trajectory of this task; the verdict is "
                            "kept and shown on the run page" if trace.success is not None else
                            "not a trajectory: prompt/response trace, without a verdict or a trajectory of its task")
            return entry
        held = self.held.get(task.pk)
        entry.trajectory_id = held[0] if held else None
        entry.status = IMPORTED if applied.updated else UNCHANGED
        return entry

    def results(self, source: Source, content=None) -> None:
        if is_study_results(source.name):
            self._study_results(source)
            return
        text, valid = decode_utf8(source.read())
        verdicts = parse_results(text)
        entry = FileReport(file=source.name, status=UNCHANGED, kind="results", format="webarena_results",
                           notes=[] if valid else [NOT_UTF8])
        if not verdicts:
            entry.status, entry.reason = SKIPPED_STATUS, "no [Result] PASS|FAIL lines"
            self.report.files.append(entry)
            return
        applied = record_verdicts(self.run, verdicts, source.name)
        self.verdict_tasks |= applied.kept
        # Verdicts on tasks the database does not hold get an entry of their own, skipped.
        unknown = [FileReport(file=source.name, status=SKIPPED_STATUS, kind="results", format="webarena_results",
                              reason=_unknown_tasks(self.run.benchmark, applied.unknown))] if applied.unknown else []
        for task_id in applied.unknown:
            del verdicts[task_id]
        if not verdicts:
            self.report.files.extend(unknown)
            return
        passed = sum(verdicts.values())
        entry.notes.append(f"{len(verdicts)} results ({passed} PASS, {len(verdicts) - passed} FAIL); "
                           f"{len(applied.updated)} trajectories updated")
        missing = sorted(applied.without_trajectory, key=_natural)
        if missing:
            listed = ", ".join(missing[:_LISTED_TASKS]) + (" ..." if len(missing) > _LISTED_TASKS else "")
            entry.notes.append(f"{len(missing)} verdicts without trajectory in this run, kept for the run page: "
                               f"{listed}")
        if applied.overruled:
            entry.notes.append(f"{len(applied.overruled)} verdicts differ from an earlier file's; this file's are kept")
        if applied.updated or applied.records_changed:
            entry.status = IMPORTED
        self.report.files.extend([entry, *unknown])

    def _study_results(self, source: Source) -> None:
        self.run_summary(source, parse_study_results(source.read(), source.name))

    def run_summary(self, source: Source, summary: RunSummary, notes=()) -> None:
        """A harness's summary of the run (AgentLab's `result_df`, WebArena-Infinity's `results.json`), read once
        the trajectories of the import are stored. The verdicts of tasks whose folders are not in the import are
        kept as the run's task results; a trajectory read from its folder keeps its own verdict (the summary's is
        compared with it) or, having none, takes the summary's up."""
        present = {posixpath.basename(posixpath.dirname(other.name)) for other in self.catalogue
                   if posixpath.basename(other.name) in summary.folder_files}
        absent = [item for item in summary.entries if item.folder not in present]
        held = self._held_verdicts([item.task for item in summary.entries if item.folder in present])
        entry = FileReport(file=source.name, status=UNCHANGED, kind="results", format=summary.format, notes=[
            *notes, f"{len(summary.entries)} {summary.noun}, {len(summary.entries) - len(absent)} of them read from "
                    "their folders in this import", *summary.problems])
        unjudged = {key for key, (success, _) in held.items() if success is None}
        recorded = [item for item in summary.entries
                    if item.folder not in present or _task_key(item.task) in unjudged]
        unknown, updated, kept = [], 0, 0
        with transaction.atomic():
            if describe_run(self.run, summary.run):
                entry.status = IMPORTED
            if recorded and not (self.held or self.verdict_tasks) and self.run.benchmark != recorded[0].task.benchmark:
                # A run holding nothing yet is a run on the benchmark of its summary.
                self.run.benchmark = recorded[0].task.benchmark
                self.run.save(update_fields=["benchmark", "updated_at"])
            for benchmark in dict.fromkeys(item.task.benchmark for item in recorded):
                of_benchmark = [item for item in recorded if item.task.benchmark == benchmark]
                for item in of_benchmark:
                    if self.tasks.get(item.task) is None:
                        self.tasks.from_file(item.task)
                applied = record_verdicts(self.run, {item.task.task_id: item.success for item in of_benchmark},
                                          source.name, benchmark=benchmark)
                self.verdict_tasks |= applied.kept
                unknown += [f"{benchmark}/{task_id}" for task_id in applied.unknown]
                updated += len(applied.updated)
                kept += sum(item.success is not None and item.task.task_id not in applied.unknown
                            for item in of_benchmark if item.folder not in present)
                entry.status = IMPORTED if applied.updated or applied.records_changed else entry.status
        entry.notes.append(f"{kept} verdicts of {summary.noun} without their folder kept for the run page; "
                           f"{updated} trajectories updated")
        for item in summary.entries:
            own, own_source = held.get(_task_key(item.task), (None, ""))
            if None not in (own, item.success) and item.success != own and item.folder in present:
                place = item.line if isinstance(item.line, str) else f"line {item.line}"
                entry.notes.append(f"{place}: task {item.task.task_id}: the summary says "
                                   f"{'PASS' if item.success else 'FAIL'}, its trajectory {'PASS' if own else 'FAIL'} "
                                   f"({own_source}): the trajectory's verdict is kept")
        if unknown:
            listed = ", ".join(unknown[:_LISTED_TASKS]) + (" ..." if len(unknown) > _LISTED_TASKS else "")
            entry.notes.append(f"tasks not imported (run manage.py import_tasks), their verdicts not kept: {listed}")
        self.report.files.append(entry)

    def _held_verdicts(self, tasks: list[TaskRef]) -> dict[tuple[str, str], tuple[bool | None, str]]:
        """{(benchmark, task id): (its verdict, where that came from)} of the run's trajectories of these tasks."""
        found = {}
        for benchmark in dict.fromkeys(task.benchmark for task in tasks):
            ids = [task.task_id for task in tasks if task.benchmark == benchmark]
            found.update({(benchmark, task_id): (success, by or file) for task_id, success, by, file in
                          Trajectory.objects.filter(run=self.run, task__benchmark=benchmark, task__task_id__in=ids)
                          .values_list("task__task_id", "success", "success_by", "success_source")})
        return found

    def log_list(self, source: Source, content=None) -> None:
        listed = [line.strip() for line in decode_utf8(source.read())[0].splitlines() if line.strip()]
        present = [name for name in listed if self.catalogue.holds(name)]
        if present:
            reason = (f"an index of harness logs: {len(present)} of the {len(listed)} it lists are in the upload "
                      "and are read on their own")
        else:
            reason = (f"log file not in the folder: none of the {len(listed)} harness logs it lists is in the "
                      "upload; add them to read their [Result] PASS|FAIL lines")
        self.report.files.append(FileReport(file=source.name, status=SKIPPED_STATUS, kind="results",
                                            format="webarena_log_list", reason=reason))

    def run_description(self, source: Source, content=None) -> None:
        changed = describe_run(self.run, parse_run_description(source.read()))
        self.report.files.append(FileReport(file=source.name, status=IMPORTED if changed else UNCHANGED,
                                            kind="run_description", format="trajectory_v1_run"))

    def harness_config(self, source: Source, content=None) -> None:
        config = parse_harness_config(load_json(decode_utf8(source.read())[0]))
        changed = record_harness_config(self.run, config)
        self.report.files.append(FileReport(file=source.name, status=IMPORTED if changed else UNCHANGED,
                                            kind="harness_config", format="webarena_config"))


def _task_key(task: TaskRef) -> tuple[str, str]:
    return task.benchmark, task.task_id


def _natural(task_id: str) -> tuple:
    return (0, int(task_id), "") if task_id.isdigit() else (1, 0, task_id)


def _unknown_tasks(benchmark: str, task_ids: list[str]) -> str:
    """Why harness verdicts on tasks the database does not hold were not kept."""
    ordered = sorted(task_ids, key=_natural)
    listed = ", ".join(f"{benchmark}/{task_id}" for task_id in ordered[:_LISTED_TASKS])
    listed += " ..." if len(ordered) > _LISTED_TASKS else ""
    if len(ordered) == 1:
        return (f"task {listed} is not imported (run manage.py import_tasks): its harness verdict is not kept; "
                "import this file again once the task is")
    return (f"{len(ordered)} tasks are not imported (run manage.py import_tasks): their harness verdicts are not "
            f"kept; import this file again once they are: {listed}")
