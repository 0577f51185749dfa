"""One import of verdicts from any source (`manage.py import_verdicts`, its page and API).

The files benchmarks and judges publish beside runs (`formats.published_verdicts`) become named
sources' verdicts; a plain per-task table is the harness's outcomes of results-only runs or human
grades, stored as `import_outcomes` and `import_grades` store them. Each file is one unit of work:
every record is read, every run and task resolved, before anything is stored, then all of it is
stored in one transaction or none of it.
"""

from collections import Counter
from dataclasses import asdict, dataclass, field

from django.db import transaction

from trajectories.formats import agent_e, online_mind2web
from trajectories.formats.published_verdicts import VerdictFile, VerdictRecord, read_verdict_file
from trajectories.formats.verdict_files import (
    GRADER_COLUMNS, SUCCESS_COLUMNS, VerdictFileError, read_rows,
)
from trajectories.formats.wording import count_of
from trajectories.models import AgentRun, ResultOrigin, Task, TaskResult, Trajectory, Verdict, VerdictSource
from trajectories.permissions import can_import_into

from .ingest import TASKS_NAMED_BY_RESULTS, has_task_list
from .runs import get_or_create_run
from .storable import storable_text
from .tallies import refresh_tallies
from .tasks import task_from_file
from .verdicts import GradeImportReport, OutcomeImportReport, import_grades, import_outcomes, summary_rows_line

OUTCOMES, GRADES = "outcomes", "grades"
TABLES = (OUTCOMES, GRADES)
HUMAN_LABELS, AGENT_REWARD_BENCH, AGENT_REWARD_BENCH_JUDGE = (
    "online_mind2web_human_labels", "agent_reward_bench_annotations", "agent_reward_bench_judge")
# Formats that name the benchmark of their verdicts by being that benchmark's.
_FORMAT_BENCHMARKS = {HUMAN_LABELS: online_mind2web.BENCHMARK, "webjudge": online_mind2web.BENCHMARK,
                      "agent_e": agent_e.BENCHMARK}
# Formats whose verdicts name no run: the run they judge must be given.
_NEEDS_RUN = ("webjudge", "browser_use_judge", "agent_e")
_VERDICT_FIELDS = ("trajectory_id", "success", "label", "score", "explanation", "labels", "origin", "source_name")


@dataclass
class RunVerdicts:
    run: str
    run_id: int
    created: bool
    matched: str  # how the file's verdicts found the run
    verdicts: int


@dataclass
class VerdictImportReport:
    source: str
    format: str
    new: int = 0
    changed: int = 0
    unchanged: int = 0
    runs: list[RunVerdicts] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)
    summary_rows: list[str] = field(default_factory=list)  # rows that summarise the others, skipped
    notes: list[str] = field(default_factory=list)
    table: OutcomeImportReport | GradeImportReport | None = None  # a plain table's own report

    def to_dict(self) -> dict:
        found = asdict(self)
        found["table"] = self.table.to_dict() if self.table is not None else None
        return found

    def __str__(self):
        if self.table is not None:
            return str(self.table)
        runs = "; ".join(
            f"{run.run!r} ({'created' if run.created else run.matched}: {count_of(run.verdicts, 'verdict')})"
            for run in self.runs)
        return "\n".join([
            f"{self.source}: {self.format}: {count_of(self.new + self.changed + self.unchanged, 'verdict')} of "
            f"{', '.join(self.sources)} ({self.new} new, {self.changed} changed, {self.unchanged} unchanged); "
            f"runs {runs}",
            *(f"{self.source}: {note}" for note in self.notes),
            *summary_rows_line(self.source, self.summary_rows)])


def import_verdicts(source: str, data: bytes, *, run: str = "", source_name: str = "", benchmark: str = "",
                    threshold: float | None = None, table: str = "", strict: bool = False, user=None,
                    origin: str = ResultOrigin.IMPORT, **table_options) -> VerdictImportReport:
    """Store the verdicts of one file. `table` reads it as a plain table of outcomes or grades without
    looking for a published format; `strict` refuses verdicts on tasks the platform does not hold
    rather than creating them. With a `user`, runs that exist must be theirs (or they an admin)."""
    if table and table not in TABLES:
        raise ValueError(f"table: {table!r} is not one of {', '.join(TABLES)}")
    published = None if table else read_verdict_file(source, data, source_name=source_name, run=run,
                                                      threshold=threshold)
    if published is None:
        return _import_table(source, data, table or _table_kind(source, data), run=run, benchmark=benchmark,
                             user=user, origin=origin, **table_options)
    return _Import(source, published, run=run, benchmark=benchmark, strict=strict, user=user, origin=origin).store()


def _table_kind(source: str, data: bytes) -> str:
    """Grades when the table names graders or has no verdict column (a column per grader), else outcomes."""
    columns = {column.strip().lower() for column in read_rows(source, data)[0]}
    return OUTCOMES if columns & set(SUCCESS_COLUMNS) and not columns & set(GRADER_COLUMNS) else GRADES


def _import_table(source, data, table, *, run, benchmark, user, origin, **options) -> VerdictImportReport:
    if table == OUTCOMES:
        report = import_outcomes(source, data, run=run, benchmark=benchmark or "webarena", user=user, origin=origin,
                                 **options)
        return VerdictImportReport(source=source, format=OUTCOMES, table=report,
                                   summary_rows=report.summary_rows)
    if not run:
        raise VerdictFileError(source, "human grades name no run: give the run they grade (--run)")
    agent_run = AgentRun.objects.filter(name=run).first()
    if agent_run is None:
        raise VerdictFileError(source, f"no run named {run!r}")
    if user is not None and not can_import_into(user, agent_run):
        raise VerdictFileError(source, f"run {agent_run.name!r} belongs to another account")
    # The account whose own grades these may be: the user, or the reviewer a page or the API let in.
    report = import_grades(agent_run, source, data, importer=options.get("importer", user), origin=origin)
    return VerdictImportReport(source=source, format=GRADES, table=report, summary_rows=report.summary_rows)


@dataclass
class _RunTarget:
    name: str
    benchmark: str
    model: str
    matched: str
    run: AgentRun | None = None
    records: list = field(default_factory=list)


class _Import:
    def __init__(self, source: str, published: VerdictFile, *, run, benchmark, strict, user, origin):
        self.source, self.published, self.run_name, self.benchmark = source, published, run, benchmark
        self.strict, self.user, self.origin = strict, user, origin
        self.report = VerdictImportReport(source=source, format=published.format, notes=list(published.notes))

    def store(self) -> VerdictImportReport:
        records = self._records()
        targets = self._runs(records)
        tasks, missing = self._tasks(targets)
        intents = {self._task_key(record, target.benchmark): record.intent
                   for target in targets.values() for record in target.records if record.intent}
        with transaction.atomic():
            for target in targets.values():
                if target.run is None:
                    target.matched = "created"
                    target.run = get_or_create_run(target.name, agent=target.name, model=target.model, user=self.user)
                    target.run.benchmark = target.benchmark
                    target.run.save(update_fields=["benchmark", "updated_at"])
            for benchmark, task_id in missing:
                tasks[(benchmark, task_id)], _ = task_from_file(
                    benchmark, task_id, storable_text(intents.get((benchmark, task_id), "")))
            self._store(targets, tasks)
            refresh_tallies(target.run.pk for target in targets.values())
        if missing:
            self.report.notes.append(f"{count_of(len(missing), 'task')} created from this file: the platform holds "
                                     f"no task of these ids in {', '.join(sorted({b for b, _ in missing}))}")
        return self.report

    def _records(self) -> list[VerdictRecord]:
        records = self.published.records
        self.report.summary_rows = [str(row) for row in self.published.summary_rows]
        if self.run_name and self.published.format == HUMAN_LABELS:  # one agent's column
            agents = sorted({record.run for record in records})
            records = [record for record in records if record.run == self.run_name]
            if not records:
                raise VerdictFileError(self.source,
                                       f"no column of agent {self.run_name!r}; agents: {', '.join(agents)}")
        if not records:
            raise VerdictFileError(self.source, "no verdicts")
        if self.published.format in _NEEDS_RUN and not self.run_name:
            raise VerdictFileError(self.source, f"{self.published.format} verdicts do not say which run they judge: "
                                                "give the run (--run)")
        return records

    def _benchmark(self, record: VerdictRecord, run: AgentRun | None) -> str:
        return (record.benchmark or self.benchmark or (run.benchmark if run else "")
                or _FORMAT_BENCHMARKS.get(self.published.format) or "webarena")

    def _runs(self, records) -> dict[str, _RunTarget]:
        """{run name: the run the file's verdicts go to}: the run given, else the one the file names, else
        (AgentRewardBench) the run of the same benchmark and model, else a results-only run made for them."""
        given = AgentRun.objects.filter(name=self.run_name).first() if self.run_name else None
        found: dict[tuple, _RunTarget] = {}
        targets: dict[str, _RunTarget] = {}
        for record in records:
            key = (record.run, record.benchmark, record.agent_model)
            if key not in found:
                found[key] = self._target(record, given)
            target = targets.setdefault(found[key].name, found[key])
            target.records.append(record)
        for target in targets.values():
            if len(target.name) > AgentRun._meta.get_field("name").max_length or not target.name.strip():
                raise VerdictFileError(self.source, f"run name {target.name[:40]!r}: empty or too long",
                                       target.records[0].line)
            if target.run is not None and self.user is not None and not can_import_into(self.user, target.run):
                raise VerdictFileError(self.source, f"run {target.run.name!r} belongs to another account")
            if target.run is None and self.published.format in _NEEDS_RUN:
                raise VerdictFileError(self.source, f"no run named {self.run_name!r}: import its trajectories or "
                                                    "outcomes first")
        return targets

    def _target(self, record: VerdictRecord, given: AgentRun | None) -> _RunTarget:
        if self.run_name and self.published.format != HUMAN_LABELS:
            return _RunTarget(self.run_name, self._benchmark(record, given), record.agent_model, "given", given)
        if self.published.format in (AGENT_REWARD_BENCH, AGENT_REWARD_BENCH_JUDGE):
            return self._by_benchmark_and_model(record)
        run = AgentRun.objects.filter(name=record.run).first()
        return _RunTarget(record.run, self._benchmark(record, run), record.agent_model,
                          "named in the file" if run else "created", run)

    def _by_benchmark_and_model(self, record: VerdictRecord) -> _RunTarget:
        benchmark, model = self._benchmark(record, None), record.agent_model or record.run
        name = record.run or f"{model} on {benchmark}"
        candidates = list(AgentRun.objects.filter(benchmark=benchmark, model=model)) or list(
            AgentRun.objects.filter(benchmark=benchmark, name=name))
        if len(candidates) > 1:
            candidates = [run for run in candidates if run.name == name] or candidates
            if len(candidates) > 1:
                raise VerdictFileError(self.source, f"{len(candidates)} {benchmark} runs of model {model!r} "
                                                    f"({', '.join(run.name for run in candidates)}): give the run "
                                                    "(--run)", record.line)
        if candidates:
            return _RunTarget(candidates[0].name, benchmark, model, "benchmark and model", candidates[0])
        return _RunTarget(name, benchmark, model, "created")

    def _task_key(self, record: VerdictRecord, benchmark: str) -> tuple[str, str]:
        """AgentRewardBench names tasks as BrowserGym does (`webarena.310`): the task is WebArena's 310."""
        task_id = record.task_id.strip()
        prefix = f"{benchmark}."
        if task_id.lower().startswith(prefix.lower()) and len(task_id) > len(prefix):
            task_id = task_id[len(prefix):]
        return benchmark, task_id

    def _tasks(self, targets) -> tuple[dict, list]:
        wanted = {self._task_key(record, target.benchmark) for target in targets.values() for record in target.records}
        tasks = {}
        for benchmark in {benchmark for benchmark, _ in wanted}:
            ids = {task_id for b, task_id in wanted if b == benchmark}
            tasks.update({(benchmark, task.task_id): task
                          for task in Task.objects.filter(benchmark=benchmark, task_id__in=ids)})
        missing = sorted(wanted - set(tasks))
        # A benchmark whose results name the version of the task they ran (Online-Mind2Web) gets the tasks they name.
        listed = {benchmark: self.strict or (benchmark not in TASKS_NAMED_BY_RESULTS and has_task_list(benchmark))
                  for benchmark, _ in missing}
        longest = Task._meta.get_field("task_id").max_length
        refused = [key for key in missing
                   if listed[key[0]] or not (key[1].isprintable() and key[1] and len(key[1]) <= longest)
                   or len(key[0]) > Task._meta.get_field("benchmark").max_length]
        if refused:
            shown = ", ".join(f"{b} {t}" for b, t in refused[:10]) + (
                f" and {len(refused) - 10} more" if len(refused) > 10 else "")
            raise VerdictFileError(self.source, f"no task {shown}: import the task configs first "
                                                "(manage.py import_tasks)")
        return tasks, missing

    def _store(self, targets, tasks) -> None:
        sources = {}
        for ref in self.published.sources:
            sources[ref], _ = VerdictSource.objects.get_or_create(kind=ref.kind, name=ref.name, model=ref.model,
                                                                  defaults={"threshold": ref.threshold})
        self.report.sources = [str(source) for source in sources.values()]
        for target in targets.values():
            run = target.run
            trajectories = dict(Trajectory.objects.filter(run=run).values_list("task_id", "pk"))
            stored = {(verdict.task_id, verdict.source_id, verdict.grader): verdict
                      for verdict in Verdict.objects.filter(run=run, source__in=sources.values())}
            seen, to_create, to_update = {}, [], []
            for record in target.records:
                task = tasks[self._task_key(record, target.benchmark)]
                source = sources[record.source]
                key = (task.pk, source.pk, record.grader)
                if key in seen:
                    raise VerdictFileError(self.source, f"a second verdict of {source} on task {task.task_id} of run "
                                                        f"{run.name!r} (first at line {seen[key]})", record.line)
                seen[key] = record.line
                values = {"trajectory_id": trajectories.get(task.pk), "success": record.success,
                          "label": record.label[:200], "score": record.score,
                          "explanation": storable_text(record.explanation), "labels": record.labels,
                          "origin": self.origin, "source_name": self.source[-500:]}
                verdict = stored.get(key)
                if verdict is None:
                    to_create.append(Verdict(run=run, task=task, source=source, grader=record.grader[:200], **values))
                elif any(getattr(verdict, name) != values[name] for name in _VERDICT_FIELDS if name != "origin"):
                    for name, value in values.items():
                        setattr(verdict, name, value)
                    to_update.append(verdict)
                else:
                    self.report.unchanged += 1
            Verdict.objects.bulk_create(to_create, batch_size=500)
            Verdict.objects.bulk_update(to_update, list(_VERDICT_FIELDS), batch_size=500)
            # Tasks without a trajectory are listed with the run through a task result without a harness verdict.
            without = {task_pk for task_pk, _, _ in seen} - set(trajectories)
            held = set(TaskResult.objects.filter(run=run, task_id__in=without).values_list("task_id", flat=True))
            TaskResult.objects.bulk_create([TaskResult(run=run, task_id=task_pk, success=None, source_name=self.source,
                                                       origin=self.origin) for task_pk in sorted(without - held)])
            self.report.new += len(to_create)
            self.report.changed += len(to_update)
            self.report.runs.append(RunVerdicts(run.name, run.pk, target.matched == "created", target.matched,
                                                len(target.records)))
        counts = Counter(record.source for target in targets.values() for record in target.records)
        self.report.sources = [f"{source} ({counts[ref]})" for ref, source in sources.items()]
