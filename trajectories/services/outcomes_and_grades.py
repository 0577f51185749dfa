"""Writes of verdicts: harness outcomes of results-only runs, and human outcome grades.

Each file is one unit of work: every row is read and every task resolved before anything is
stored, then all of it is stored in one transaction or none of it. A row naming a task the platform
does not hold is left out and reported (a table names tasks, it makes none); a file none of whose rows
names one, or with any such row under `strict`, is refused.
"""

from collections import Counter
from dataclasses import asdict, dataclass, field, replace

from django.contrib.auth import get_user_model
from django.db import transaction

from trajectories.formats.published_verdicts import RecordProblem
from trajectories.formats.text import name_key
from trajectories.formats.verdict_files import VerdictFileError, parse_grades, parse_outcomes
from trajectories.formats.wording import count_of
from trajectories.models import AgentRun, OutcomeGrade, ResultOrigin, Task, TaskResult, Trajectory
from trajectories.permissions import can_import_into
from trajectories.services.record_problems import problem, problem_dict, problems_lines, refuse_if
from trajectories.services.runs import get_or_create_run
from trajectories.services.tallies import refresh_tallies
from trajectories.services.tasks import has_task_list, unusable_task_id
from trajectories.verdict_agreement import grade_value, uniform_verdicts


def _held_tasks(benchmark: str, records: list, source: str, strict: bool) -> tuple[dict[str, Task], list, list]:
    """{task id: task} of the tasks the rows name, the rows whose task the platform holds, and a problem
    for each other row."""
    found = {task.task_id: task for task in Task.objects.filter(
        benchmark=benchmark, task_id__in={record.task_id for record in records})}
    listed = has_task_list(benchmark)
    kept, problems = [], []
    for record in records:
        if record.task_id in found:
            kept.append(record)
            continue
        reason = unusable_task_id(record.task_id) or (
            f"the task list of {benchmark} (imported with manage.py import_tasks) has no such task" if listed else
            f"the platform holds no {benchmark} task of this id: a table of outcomes or grades names tasks already "
            "held (import the benchmark's task list, or the run's trajectories, first)")
        problems.append(problem(record.line, "task_id", record.task_id, reason))
    refuse_if(source, problems, stored=len(kept), strict=strict)
    return found, kept, problems


@dataclass
class RunOutcomes:
    run: str
    run_id: int
    created: bool
    tasks: int
    passed: int
    new: int
    updated: int
    uniform: bool | None  # every verdict the same over many tasks: likely scraped wrongly


def summary_rows_line(source: str, rows: list[str]) -> list[str]:
    return [f"{source}: skipped {count_of(len(rows), 'summary row')}: {', '.join(rows)}"] if rows else []


@dataclass
class OutcomeImportReport:
    source: str
    runs: list[RunOutcomes] = field(default_factory=list)
    summary_rows: list[str] = field(default_factory=list)  # rows that summarise the others, skipped
    problems: list[RecordProblem] = field(default_factory=list)  # rows left out

    def to_dict(self) -> dict:
        return {**asdict(self), "problems": [problem_dict(self.source, item) for item in self.problems]}

    def __str__(self):
        lines = []
        for run in self.runs:
            line = (f"{self.source}: run {run.run!r} {'created' if run.created else 'updated'}: {run.tasks} task "
                    f"verdicts ({run.passed} pass; {run.new} new, {run.updated} changed)")
            if run.uniform is not None:
                line += (f". Warning: every verdict is {'pass' if run.uniform else 'fail'}; check the file was "
                         f"read right")
            lines.append(line)
        return "\n".join(lines + summary_rows_line(self.source, self.summary_rows)
                         + problems_lines(self.source, self.problems))


def import_outcomes(source: str, data: bytes, *, run: str = "", run_column: str = "", task_column: str = "",
                    success_column: str = "", benchmark: str = "webarena", user=None,
                    origin: str = ResultOrigin.IMPORT, strict: bool = False) -> OutcomeImportReport:
    """Create or update results-only runs from a file of per-task verdicts.

    With a `user`, runs that exist must be theirs (or they must be an admin); the command line
    (no user) may update any run.
    """
    read = parse_outcomes(source, data, run=run, run_column=run_column, task_column=task_column,
                          success_column=success_column)
    tasks, records, problems = _held_tasks(benchmark, read.records, source, strict)
    by_run: dict[str, list] = {}
    for record in records:
        by_run.setdefault(record.run, []).append(record)
    if user is not None:
        for existing in AgentRun.objects.filter(name__in=list(by_run)):
            if not can_import_into(user, existing):
                raise VerdictFileError(source, f"run {existing.name!r} belongs to another account")
    report = OutcomeImportReport(source=source, summary_rows=[str(row) for row in read.summary_rows],
                                 problems=problems)
    with transaction.atomic():
        for name, rows in by_run.items():
            created = not AgentRun.objects.filter(name=name).exists()
            agent_run = get_or_create_run(name, agent=name if created else "", user=user)
            if created:
                agent_run.benchmark = benchmark
                agent_run.save(update_fields=["benchmark", "updated_at"])
            stored = {result.task_id: result for result in TaskResult.objects.filter(run=agent_run)}
            to_create, to_update = [], []
            for record in rows:
                task = tasks[record.task_id]
                result = stored.get(task.pk)
                if result is None:
                    to_create.append(TaskResult(run=agent_run, task=task, success=record.success,
                                                source_name=source, origin=origin))
                elif result.success != record.success:  # the same verdict from another file is unchanged
                    result.success, result.source_name, result.origin = record.success, source, origin
                    to_update.append(result)
            TaskResult.objects.bulk_create(to_create, batch_size=500)
            TaskResult.objects.bulk_update(to_update, ["success", "source_name", "origin"], batch_size=500)
            verdicts = [record.success for record in rows]
            report.runs.append(RunOutcomes(
                run=name, run_id=agent_run.pk, created=created, tasks=len(rows), passed=sum(verdicts),
                new=len(to_create), updated=len(to_update), uniform=uniform_verdicts(verdicts),
            ))
        refresh_tallies(run.run_id for run in report.runs)
    return report


@dataclass
class GradeImportReport:
    source: str
    run: str
    grades: int = 0
    new: int = 0
    updated: int = 0
    graders: dict = field(default_factory=dict)  # {grader: grades}
    tasks: int = 0
    without_trajectory: int = 0
    summary_rows: list[str] = field(default_factory=list)  # rows that summarise the others, skipped
    problems: list[RecordProblem] = field(default_factory=list)  # rows left out

    def to_dict(self) -> dict:
        return {**asdict(self), "problems": [problem_dict(self.source, item) for item in self.problems]}

    def __str__(self):
        graders = ", ".join(f"{name} ({count})" for name, count in self.graders.items())
        return "\n".join([
            f"{self.source}: {self.grades} grades of {self.tasks} tasks in run {self.run!r} by {graders} "
            f"({self.new} new, {self.updated} changed; {self.without_trajectory} tasks have no trajectory "
            f"and are kept with the run's task results)",
            *summary_rows_line(self.source, self.summary_rows), *problems_lines(self.source, self.problems)])


def _as_known_graders(records, run: AgentRun, importer, source: str) -> list:
    """Each row under the spelling an account or the run's grades already give its grader (names compared by
    `name_key`, so `ANN` is `ann`). An account's grade is given and changed only by that account: a file
    may name the importer (recorded as the importer's grades) or graders without an account here, never
    another account."""
    importer_pk = importer.pk if importer is not None else None
    known: dict[str, tuple[str, int | None]] = {}
    for name, owner in get_user_model().objects.values_list("username", "pk"):
        known.setdefault(name_key(name), (name, owner))
    for name, owner in OutcomeGrade.objects.filter(run=run).values_list("grader_name", "grader_id").distinct():
        known.setdefault(name_key(name), (name, owner))
    kept = []
    for record in records:
        name, owner = known.get(name_key(record.grader), (record.grader, None))
        if owner is not None and owner != importer_pk:
            raise VerdictFileError(source, f"grader {record.grader!r} is another account's name: an account's "
                                           "grades are given only by that account (rename the grader in the file)",
                                   record.line)
        kept.append(replace(record, grader=name))
    return kept


def import_grades(run: AgentRun, source: str, data: bytes, *, importer=None, origin: str = ResultOrigin.IMPORT,
                  strict: bool = False) -> GradeImportReport:
    """Graders' marks per task for one run; a task without a trajectory gets a task result row
    (verdict unknown) so its grades are listed with the run. `importer` is the account importing
    (None: the operator's command)."""
    read = parse_grades(source, data)
    tasks, records, problems = _held_tasks(run.benchmark, read.records, source, strict)
    trajectories = dict(Trajectory.objects.filter(run=run, task__in=tasks.values()).values_list("task_id", "pk"))
    records = _as_known_graders(records, run, importer, source)
    report = GradeImportReport(source=source, run=run.name, grades=len(records),
                               graders=dict(Counter(record.grader for record in records)),
                               tasks=len({record.task_id for record in records}),
                               summary_rows=[str(row) for row in read.summary_rows], problems=problems)
    with transaction.atomic():
        stored = {(grade.task_id, grade.grader_name): grade for grade in OutcomeGrade.objects.filter(run=run)}
        own_name = importer.get_username() if importer is not None else None
        to_create, to_update = [], []
        for record in records:
            task = tasks[record.task_id]
            grade = stored.get((task.pk, record.grader))
            if grade is None:
                to_create.append(OutcomeGrade(
                    run=run, task=task, trajectory_id=trajectories.get(task.pk), grader_name=record.grader,
                    grader=importer if record.grader == own_name else None,
                    value=record.value, note=record.note, origin=origin, source_name=source,
                ))
            elif (grade.value, grade.note) != (record.value, record.note):
                grade.value, grade.note, grade.origin, grade.source_name = record.value, record.note, origin, source
                to_update.append(grade)
        OutcomeGrade.objects.bulk_create(to_create, batch_size=500)
        OutcomeGrade.objects.bulk_update(to_update, ["value", "note", "origin", "source_name", "updated_at"],
                                         batch_size=500)
        without = {task.pk for task in tasks.values()} - set(trajectories)
        have_results = set(TaskResult.objects.filter(run=run, task_id__in=without).values_list("task_id", flat=True))
        TaskResult.objects.bulk_create([TaskResult(run=run, task_id=task_id, success=None, source_name=source,
                                                   origin=origin) for task_id in sorted(without - have_results)])
        refresh_tallies([run.pk])
    report.new, report.updated, report.without_trajectory = len(to_create), len(to_update), len(without)
    return report


def record_grade(trajectory: Trajectory, user, value, note: str = "", *,
                 origin: str = ResultOrigin.WEB) -> OutcomeGrade:
    """The user's grade of the trajectory's outcome (a second grade replaces their first)."""
    value = grade_value(value)
    with transaction.atomic():
        grade, _ = OutcomeGrade.objects.update_or_create(
            run_id=trajectory.run_id, task_id=trajectory.task_id, grader_name=user.get_username(),
            defaults={"trajectory": trajectory, "grader": user, "value": value, "note": (note or "").strip(),
                      "origin": origin, "source_name": ""},
        )
        refresh_tallies([trajectory.run_id])
    return grade
