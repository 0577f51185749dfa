"""One import of verdicts from any source (`manage.py import_verdicts`, its page and API).

The files benchmarks and judges publish beside runs (`formats.published_verdicts`) become named
sources' verdicts; a plain per-task table is the harness's outcomes of results-only runs or human
grades, stored as `import_outcomes` and `import_grades` store them.

A file is read (`read_verdicts`) before it is stored (`VerdictFileRead.store`), so that a page can
show between the two what it holds (`VerdictFileRead.look`): the agents it names (an `<Agent>_human_label`
column, an AgentRewardBench `exp_name`), their tasks and the runs that hold them. A mapping sends each
agent's verdicts to an existing run, a new run or nowhere; an agent it leaves out goes to the run found
automatically. Each file is one unit of work: every record is read and every run and task resolved
before anything is stored. A record that cannot be stored (its task unknown, a second verdict of the
same grader) is left out and reported, and the rest is stored in one transaction; a file none of whose
records can be stored, or under `strict` any of whose cannot, stores nothing, not even a run.
"""

from collections import Counter
from dataclasses import asdict, dataclass, field

from django.db import transaction

from trajectories.formats import agent_e, online_mind2web
from trajectories.formats.published_verdicts import (
    HUMAN_LABEL_SUFFIX, RecordProblem, VerdictFile, VerdictRecord, agent_reward_bench_judge_files, read_verdict_file,
)
from trajectories.formats.sources import ImportRefused, archive_members, is_archive
from trajectories.formats.verdict_files import GRADER_HEADERS, SUCCESS_HEADERS, VerdictFileError, place, read_rows
from trajectories.formats.wording import count_of
from trajectories.models import AgentRun, ResultOrigin, Task, TaskResult, Trajectory, Verdict, VerdictSource
from trajectories.permissions import can_import_into

from .ingest import ingest_limits
from .outcomes_and_grades import (
    GradeImportReport, OutcomeImportReport, import_grades, import_outcomes, summary_rows_line,
)
from .record_problems import SAID_PROBLEMS, problem, problem_dict, problems_lines, refuse_if, refusal
from .runs import get_or_create_run
from .storable import storable_json, storable_text
from .tallies import refresh_tallies
from .tasks import only_listed_tasks, task_from_file, unusable_task_id

OUTCOMES, GRADES = "outcomes", "grades"
TABLES = (OUTCOMES, GRADES)
HUMAN_LABELS, AGENT_REWARD_BENCH, AGENT_REWARD_BENCH_JUDGE = (
    "online_mind2web_human_labels", "agent_reward_bench_annotations", "agent_reward_bench_judge")
# Formats that name the benchmark of their verdicts by being that benchmark's.
_FORMAT_BENCHMARKS = {HUMAN_LABELS: online_mind2web.BENCHMARK, "webjudge": online_mind2web.BENCHMARK,
                      "agent_e": agent_e.BENCHMARK}
# Formats whose verdicts name no agent: the run they judge must be given (or mapped, as the agent "").
_NEEDS_RUN = ("webjudge", "browser_use_judge", "agent_e")
# What a verdict says. Where it came from (the file's name, the page or the command) is not compared:
# the same verdict from a file of another name, or first stored with its trajectory, is unchanged.
_VERDICT_CONTENT = ("success", "label", "score", "explanation", "labels")
_VERDICT_FIELDS = (*_VERDICT_CONTENT, "trajectory_id", "origin", "source_name")
_RUN_NAME_LENGTH = AgentRun._meta.get_field("name").max_length
_BENCHMARK_LENGTH = Task._meta.get_field("benchmark").max_length
MATCHING_RUNS = 5  # runs holding an agent's tasks offered beside the one matched


class UnknownAgents(ValueError):
    """A mapping names an agent that no file of the import holds: a misspelt agent would otherwise be matched
    automatically, against the mapping's intent."""


@dataclass(frozen=True)
class NewRun:
    """A mapping's choice: the agent's verdicts go to a new run of this name."""

    name: str


def parse_mapping(value) -> dict:
    """A mapping as the API takes it, `{agent or column: run name or id | {"new": name} | null}`; ValueError
    saying what is wrong."""
    if not isinstance(value, dict):
        raise ValueError('expected an object {"<agent or column>": "<run name or id>" | {"new": "<name>"} | null}')
    mapping = {}
    for agent, choice in value.items():
        if choice is None or (isinstance(choice, int) and not isinstance(choice, bool)):
            mapping[agent] = choice
        elif isinstance(choice, str) and choice.strip():
            mapping[agent] = choice.strip()
        elif isinstance(choice, dict) and choice.keys() == {"new"} and isinstance(choice["new"], str) \
                and choice["new"].strip():
            mapping[agent] = NewRun(choice["new"].strip())
        else:
            raise ValueError(f'{agent}: {choice!r} is not a run\'s name or id, {{"new": "<name>"}} or null')
    return mapping


def runs_refused_to(user, names) -> list[str]:
    """The names (or ids) among `names` of existing runs the user may not import into: asked before a request's
    body is read, so that importing into another's run is refused as such, whatever else the body holds."""
    names = [name for name in names if isinstance(name, (str, int)) and not isinstance(name, bool) and name != ""]
    by_name = AgentRun.objects.filter(name__in=[str(name) for name in names])
    by_id = AgentRun.objects.filter(pk__in=[name for name in names if isinstance(name, int)])
    return sorted({run.name for run in (*by_name, *by_id) if not can_import_into(user, run)})


def mapping_of_pairs(pairs: list[str]) -> dict:
    """The command's `--map AGENT=RUN`: the run of that name, made when there is none; `AGENT=` skips
    the agent."""
    mapping = {}
    for pair in pairs:
        agent, equals, run = pair.partition("=")
        if not equals or not agent.strip():
            raise ValueError(f"--map {pair!r}: expected AGENT=RUN, or AGENT= to leave the agent's verdicts out")
        run = run.strip()
        mapping[agent.strip()] = (run if AgentRun.objects.filter(name=run).exists() else NewRun(run)) if run else None
    return mapping


def _same_agent(name: str) -> str:
    """An agent as a mapping may name it: `Claude_Computer_Use_3.7_human_label` is the column of
    the agent `Claude Computer Use 3.7`."""
    return name.strip().removesuffix(HUMAN_LABEL_SUFFIX).replace("_", " ").strip().casefold()


def _unmapped(agents, mapping: dict) -> list[str]:
    """The keys of `mapping` that name none of `agents` (those of every file of one import)."""
    exact, loose = set(agents), {_same_agent(agent) for agent in agents}
    return [key for key in mapping if key not in exact and _same_agent(key) not in loose]


# Reports ----------------------------------------------------------------------------------------

@dataclass
class RunVerdicts:
    run: str
    run_id: int
    created: bool
    matched: str  # how the file's verdicts found the run: mapped, given, named in the file, benchmark and model
    verdicts: int
    agents: list[str] = field(default_factory=list)  # the file's agents whose verdicts went here ("": none named)
    tasks_not_held: list[str] = field(default_factory=list)  # the file's tasks the run held nothing of before

    @property
    def other_agents(self) -> str:
        """The file's agents whose verdicts went here, when the run is not named after them."""
        return "" if self.agents in ([self.run], [""]) else ", ".join(self.agents)


@dataclass
class SkippedAgent:
    agent: str
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
    skipped: list[SkippedAgent] = field(default_factory=list)  # agents the mapping left out
    problems: list[RecordProblem] = field(default_factory=list)  # records left out, each named
    table: OutcomeImportReport | GradeImportReport | None = None  # a plain table's own report

    def to_dict(self) -> dict:
        found = asdict(self)
        found["table"] = self.table.to_dict() if self.table is not None else None
        found["problems"] = [problem_dict(self.source, item) for item in self.problems]
        return found

    def __str__(self):
        if self.table is not None:
            return str(self.table)
        runs = "; ".join(
            f"{run.run!r} ({'created' if run.created else run.matched}: {count_of(run.verdicts, 'verdict')})"
            for run in self.runs)
        return "\n".join([
            f"{self.source}: {self.format}: {count_of(self.new + self.changed + self.unchanged, 'verdict')} of "
            f"{', '.join(self.sources) or 'no source'} ({self.new} new, {self.changed} changed, {self.unchanged} "
            f"unchanged); runs {runs or 'none'}",
            *(f"{self.source}: {note}" for note in self.notes),
            *(f"{self.source}: {not_held_line(run)}" for run in self.runs if run.tasks_not_held),
            *([f"{self.source}: left out by the mapping: " + ", ".join(
                f"{agent.agent or 'the file'} ({count_of(agent.verdicts, 'verdict')})" for agent in self.skipped)]
              if self.skipped else []),
            *summary_rows_line(self.source, self.summary_rows),
            *problems_lines(self.source, self.problems)])


def not_held_line(run: RunVerdicts) -> str:
    shown = ", ".join(run.tasks_not_held[:SAID_PROBLEMS])
    more = len(run.tasks_not_held) - SAID_PROBLEMS
    return (f"run {run.run!r} held no trajectory or result of {count_of(len(run.tasks_not_held), 'task')} of the "
            f"file, listed with it now as tasks without a trajectory: {shown}" + (f" and {more} more" if more > 0 else ""))


@dataclass
class RunMatch:
    run: str
    run_id: int
    held: int  # of the agent's tasks, those the run holds a trajectory or a task result of


@dataclass
class AgentLook:
    """One agent of a file, as the second step of the import page shows it."""

    agent: str  # as the file names it; "" when the file names none
    verdicts: int
    tasks: int
    benchmark: str
    model: str
    run: str  # where its verdicts go without a mapping ("" when no run is found)
    matched: str  # how that run was found, or why none was
    match: RunMatch | None  # that run, when it exists; None: a new run named `run`
    others: list[RunMatch]  # further runs holding its tasks, those holding most first


@dataclass
class VerdictFileLook:
    source: str
    format: str
    verdicts: int = 0
    sources: list[str] = field(default_factory=list)
    agents: list[AgentLook] = field(default_factory=list)
    problems: list[RecordProblem] = field(default_factory=list)  # as automatic matching would leave out
    notes: list[str] = field(default_factory=list)
    summary_rows: list[str] = field(default_factory=list)
    table: str = ""  # a plain table of outcomes or grades: stored as it is, no agents to map

    def to_dict(self) -> dict:
        return {**asdict(self), "problems": [problem_dict(self.source, item) for item in self.problems]}


# Reading -----------------------------------------------------------------------------------------

@dataclass
class VerdictFileRead:
    """A verdict file read and not yet stored."""

    source: str
    data: bytes
    run: str
    published: VerdictFile | None  # None: a plain table
    table: str = ""
    table_options: dict = field(default_factory=dict)

    @property
    def agents(self) -> list[str]:
        """The agents the file names, in file order ("" for a file naming none); none for a plain table."""
        if self.published is None:
            return []
        return list(dict.fromkeys(_agent(self.published.format, record) for record in self.published.records))

    def look(self, *, benchmark: str = "", user=None) -> VerdictFileLook:
        if self.published is None:
            return VerdictFileLook(source=self.source, format=self.table, table=self.table)
        return _Import(self, mapping={}, benchmark=benchmark, strict=False, user=user,
                       origin=ResultOrigin.IMPORT).look()

    def store(self, *, mapping: dict | None = None, benchmark: str = "", strict: bool = False, user=None,
              origin: str = ResultOrigin.IMPORT) -> VerdictImportReport:
        """Store the verdicts: `mapping` {agent: run name or id | NewRun | None} sends an agent's verdicts to
        a run, or leaves them out; `strict` refuses a file with any record that cannot be stored rather than
        leaving it out (a task the platform does not hold among them). With a `user`, runs that exist must
        be theirs (or they an admin)."""
        if self.published is None:
            return _import_table(self.source, self.data, self.table, run=self.run, benchmark=benchmark,
                                 strict=strict, user=user, origin=origin, **self.table_options)
        return _Import(self, mapping=mapping or {}, benchmark=benchmark, strict=strict, user=user,
                       origin=origin).store()


def read_verdicts(source: str, data: bytes, *, run: str = "", source_name: str = "", threshold: float | None = None,
                  table: str = "", **table_options) -> VerdictFileRead:
    """Read one file. `table` reads it as a plain table of outcomes or grades without looking for a
    published format. A zip archive is read as a folder (`read_verdict_folder`)."""
    if table and table not in TABLES:
        raise ValueError(f"table: {table!r} is not one of {', '.join(TABLES)}")
    if is_archive(data) and not table:
        try:
            files = archive_members(data, ingest_limits())
        except ImportRefused as error:
            raise VerdictFileError(source, f"refused, nothing was read: {error}") from None
        return read_verdict_folder(source, files, run=run, source_name=source_name, data=data)
    published = None if table else read_verdict_file(source, data, source_name=source_name, run=run,
                                                      threshold=threshold)
    return VerdictFileRead(source, data, run, published, table or ("" if published else _table_kind(source, data)),
                           table_options)


def read_verdict_folder(source: str, files: list[tuple[str, bytes]], *, run: str = "", source_name: str = "",
                        data: bytes = b"") -> VerdictFileRead:
    """A folder or zip `source` of AgentRewardBench judge files (name, bytes), one per trajectory, read as one
    file whose records are named by their files (`data`: the archive, kept to be read again)."""
    return VerdictFileRead(source, data, run, agent_reward_bench_judge_files(source, files, source_name=source_name))


def import_verdicts(source: str, data: bytes, *, run: str = "", source_name: str = "", benchmark: str = "",
                    threshold: float | None = None, table: str = "", strict: bool = False, user=None,
                    origin: str = ResultOrigin.IMPORT, mapping: dict | None = None,
                    **table_options) -> VerdictImportReport:
    """Read and store the verdicts of one file (`read_verdicts`, then `VerdictFileRead.store`)."""
    read = read_verdicts(source, data, run=run, source_name=source_name, threshold=threshold, table=table,
                         **table_options)
    return read.store(mapping=mapping, benchmark=benchmark, strict=strict, user=user, origin=origin)


def import_files(reads: list[VerdictFileRead], mappings: list[dict], *, benchmark: str = "", strict: bool = False,
                 user=None, origin: str = ResultOrigin.IMPORT) -> list[VerdictImportReport | VerdictFileError]:
    """Store files read together, each with its mapping, in order: the report of each, or why it was refused.
    A new run one file makes for a mapping takes the same agent's verdicts of the files after it. UnknownAgents,
    before anything is stored, when a mapping names an agent no file holds."""
    agents = [agent for read in reads for agent in read.agents]
    unknown = list(dict.fromkeys(key for mapping in mappings for key in _unmapped(agents, mapping)))
    if unknown:
        held = ", ".join(sorted({agent for agent in agents if agent})) or "none"
        raise UnknownAgents(f"no file holds the agent {', '.join(map(repr, unknown))} of the mapping; the files' agents: "
                         f"{held}")
    made, results = set(), []
    for read, mapping in zip(reads, mappings, strict=True):
        mapping = {agent: choice.name if isinstance(choice, NewRun) and choice.name in made else choice
                   for agent, choice in mapping.items()}
        try:
            report = read.store(mapping=mapping, benchmark=benchmark, strict=strict, user=user, origin=origin)
        except VerdictFileError as error:
            results.append(error)
            continue
        made |= {run.run for run in report.runs if run.created}
        results.append(report)
    return results


def _table_kind(source: str, data: bytes) -> str:
    """Grades when the table names graders or has no verdict column (a column per grader), else outcomes."""
    columns = {column.strip().lower() for column in read_rows(source, data)[0]}
    return OUTCOMES if columns & set(SUCCESS_HEADERS) and not columns & set(GRADER_HEADERS) else GRADES


def _import_table(source, data, table, *, run, benchmark, strict, user, origin, **options) -> VerdictImportReport:
    if table == OUTCOMES:
        report = import_outcomes(source, data, run=run, benchmark=benchmark or "webarena", user=user, origin=origin,
                                 strict=strict, **options)
    else:
        if not run:
            raise VerdictFileError(source, "human grades name no run: give the run they grade (--run)")
        agent_run = AgentRun.objects.filter(name=run).first()
        if agent_run is None:
            raise VerdictFileError(source, f"no run named {run!r}")
        if user is not None and not can_import_into(user, agent_run):
            raise VerdictFileError(source, f"run {agent_run.name!r} belongs to another account")
        # The account whose own grades these may be: the user, or the reviewer a page or the API let in.
        report = import_grades(agent_run, source, data, importer=options.get("importer", user), origin=origin,
                               strict=strict)
    return VerdictImportReport(source=source, format=table, table=report, summary_rows=report.summary_rows,
                               problems=report.problems)


def _agent(format: str, record: VerdictRecord) -> str:
    """The agent a record's verdict is on, as the file names it: a column of human labels, an
    AgentRewardBench experiment (else its model on its benchmark); "" for a file naming none."""
    if format in _NEEDS_RUN:
        return ""
    if format in (AGENT_REWARD_BENCH, AGENT_REWARD_BENCH_JUDGE) and not record.run:
        return f"{record.agent_model} on {record.benchmark}" if record.benchmark else record.agent_model
    return record.run


# Storing -----------------------------------------------------------------------------------------

@dataclass
class _RunTarget:
    name: str
    model: str
    matched: str
    run: AgentRun | None = None  # None: made when the verdicts are stored
    created: bool = False
    agents: list[str] = field(default_factory=list)
    records: list = field(default_factory=list)
    stored: list = field(default_factory=list)  # (record, (benchmark, task id)) of the records to store


class _NoRun(Exception):
    """Why no run is found for an agent's verdicts without a mapping."""


class _Import:
    def __init__(self, read: VerdictFileRead, *, mapping, benchmark, strict, user, origin):
        self.read, self.source, self.published = read, read.source, read.published
        self.format, self.run_name = read.published.format, read.run
        self.mapping, self.benchmark, self.strict, self.user, self.origin = mapping, benchmark, strict, user, origin
        self.problems = list(read.published.problems)
        self.unmatched: dict[str, str] = {}  # agent: why no run is found for it, when looking
        self.report = VerdictImportReport(source=self.source, format=self.format, notes=list(read.published.notes),
                                          summary_rows=[str(row) for row in read.published.summary_rows])

    def store(self) -> VerdictImportReport:
        targets = self._runs(self._agents())
        tasks, missing = self._tasks(targets)
        self._left_out_repeats(targets)
        self.problems.sort(key=lambda item: _position(item.line))
        stored = [target for target in targets.values() if target.stored]
        refuse_if(self.source, self.problems, stored=sum(len(target.stored) for target in stored),
                  strict=self.strict)
        intents = {key: record.intent for target in stored for record, key in target.stored if record.intent}
        not_held = {target.name: self._not_held(target, tasks) for target in stored if target.run is not None}
        with transaction.atomic():
            for target in stored:
                if target.run is None:
                    self._make_run(target)
            for benchmark, task_id in missing:
                tasks[(benchmark, task_id)], _ = task_from_file(
                    benchmark, task_id, storable_text(intents.get((benchmark, task_id), "")))
            self._store(stored, tasks, not_held)
            refresh_tallies(target.run.pk for target in stored)
        if missing:
            self.report.notes.append(f"{count_of(len(missing), 'task')} created from this file: the platform holds "
                                     f"no task of these ids in {', '.join(sorted({b for b, _ in missing}))}")
        self.report.problems = self.problems
        return self.report

    def look(self) -> VerdictFileLook:
        agents = self._agents()
        targets = self._runs(agents, looking=True)
        tasks, _ = self._tasks(targets)
        self._left_out_repeats(targets)
        self.problems.sort(key=lambda item: _position(item.line))
        run_of = {agent: target.run for target in targets.values() for agent in target.agents}
        keys = {agent: {self._task_key(record, run_of.get(agent)) for record in records}
                for agent, records in agents.items()}
        task_pks = {agent: {tasks[key].pk for key in agent_keys if key in tasks} for agent, agent_keys in keys.items()}
        holding = self._runs_holding(set().union(*task_pks.values()))
        runs = {run.pk: run for run, _ in holding if self.user is None or can_import_into(self.user, run)}
        by_agent = {agent: target for target in targets.values() for agent in target.agents}
        found = []
        for agent, records in agents.items():
            target = by_agent.get(agent)
            held = Counter(run.pk for run, task_pk in holding if task_pk in task_pks[agent])
            match = RunMatch(target.run.name, target.run.pk, held[target.run.pk]) if target and target.run else None
            others = sorted((RunMatch(runs[pk].name, pk, count) for pk, count in held.items()
                             if pk in runs and (match is None or pk != match.run_id)),
                            key=lambda run: (-run.held, run.run))
            found.append(AgentLook(
                agent=agent, verdicts=len(records), tasks=len(keys[agent]),
                benchmark=self._task_key(records[0], run_of.get(agent))[0], model=records[0].agent_model,
                run=target.name if target else "", matched=target.matched if target else self.unmatched.get(agent, ""),
                match=match, others=others[:MATCHING_RUNS]))
        counts = Counter(record.source for records in agents.values() for record in records)
        return VerdictFileLook(
            source=self.source, format=self.format, verdicts=sum(counts.values()),
            sources=[f"{_source(ref)} ({count})" for ref, count in counts.items()], agents=found,
            problems=self.problems, notes=self.report.notes, summary_rows=self.report.summary_rows)

    @staticmethod
    def _runs_holding(task_pks: set[int]) -> set[tuple[AgentRun, int]]:
        """(run, task) of every run holding a trajectory or a task result of these tasks."""
        pairs = set(Trajectory.objects.filter(task__in=task_pks).values_list("run_id", "task_id"))
        pairs |= set(TaskResult.objects.filter(task__in=task_pks).values_list("run_id", "task_id"))
        runs = AgentRun.objects.in_bulk({run_id for run_id, _ in pairs})
        return {(runs[run_id], task_pk) for run_id, task_pk in pairs}

    def _agents(self) -> dict[str, list[VerdictRecord]]:
        """{agent: its records}, in file order."""
        records = self.published.records
        if self.run_name and self.format == HUMAN_LABELS:  # one agent's column
            agents = sorted({record.run for record in records})
            records = [record for record in records if record.run == self.run_name]
            if not records:
                raise VerdictFileError(self.source,
                                       f"no column of agent {self.run_name!r}; agents: {', '.join(agents)}")
        if not records:
            if self.problems:
                raise refusal(self.source, self.problems, "no record can be read")
            raise VerdictFileError(self.source, "no verdicts")
        agents: dict[str, list] = {}
        for record in records:
            agents.setdefault(_agent(self.format, record), []).append(record)
        return agents

    def _choice(self, agent: str):
        """(True, the mapping's choice for the agent) or (False, None) when the mapping leaves it out."""
        if agent in self.mapping:
            return True, self.mapping[agent]
        loose = [key for key in self.mapping if _same_agent(key) == _same_agent(agent)]
        return (True, self.mapping[loose[0]]) if loose else (False, None)

    def _runs(self, agents, *, looking: bool = False) -> dict[str, _RunTarget]:
        """{run name: the run an agent's verdicts go to}: the one mapped, else the one given, else the one the
        file names, else (AgentRewardBench) the run of the same benchmark and model, else a results-only run
        made for them. `looking`: an agent no run can be found for is left without one, and why kept in
        `unmatched`, for a choice to be made, rather than refusing the file."""
        given = AgentRun.objects.filter(name=self.run_name).first() if self.run_name else None
        found: dict[tuple, _RunTarget | _NoRun] = {}
        targets: dict[str, _RunTarget] = {}
        for agent, records in agents.items():
            mapped, choice = self._choice(agent)
            if mapped and choice is None:
                self.report.skipped.append(SkippedAgent(agent, len(records)))
                continue
            for record in records:
                key = ("mapped", agent) if mapped else (record.run, record.benchmark, record.agent_model)
                if key not in found:
                    try:
                        found[key] = self._mapped(agent, choice, record) if mapped else self._automatic(record, given)
                    except _NoRun as why:
                        found[key] = why
                if isinstance(found[key], _NoRun):
                    if not looking:
                        raise VerdictFileError(self.source, str(found[key]))
                    self.unmatched[agent] = str(found[key])
                    continue
                target = targets.setdefault(found[key].name, found[key])
                if agent not in target.agents:
                    target.agents.append(agent)
                target.records.append(record)
        for name in [name for name, target in targets.items() if not name.strip() or len(name) > _RUN_NAME_LENGTH]:
            for record in targets.pop(name).records:
                self.problems.append(problem(record.line, "run", name, f"no run can be named so (an empty name, or "
                                                                      f"more than {_RUN_NAME_LENGTH} characters): "
                                                                      "map the agent to a run"))
        for name, target in list(targets.items()):
            if target.run is not None and self.user is not None and not can_import_into(self.user, target.run):
                if not looking:
                    raise VerdictFileError(self.source, f"run {target.run.name!r} belongs to another account")
                self.unmatched.update(dict.fromkeys(targets.pop(name).agents, f"run {name!r} is another account's"))
        return targets

    def _mapped(self, agent: str, choice, record: VerdictRecord) -> _RunTarget:
        shown = agent or "the file's verdicts"
        if isinstance(choice, NewRun):
            if len(choice.name) > _RUN_NAME_LENGTH:
                raise VerdictFileError(self.source, f"{shown}: a run's name has at most {_RUN_NAME_LENGTH} characters")
            if AgentRun.objects.filter(name=choice.name).exists():
                raise VerdictFileError(self.source, f"{shown}: a run named {choice.name!r} exists; map to it by name, "
                                                    "or name the new run otherwise")
            return _RunTarget(choice.name, record.agent_model, "mapped")
        run = AgentRun.objects.filter(name=str(choice)).first()
        if run is None and str(choice).isdigit():
            run = AgentRun.objects.filter(pk=int(choice)).first()
        if run is None:
            raise VerdictFileError(self.source, f'{shown}: no run {choice!r}; a new run is mapped as {{"new": name}}')
        return _RunTarget(run.name, record.agent_model, "mapped", run)

    def _automatic(self, record: VerdictRecord, given: AgentRun | None) -> _RunTarget:
        """The run found for the record's agent without a mapping; _NoRun saying why there is none."""
        if self.run_name and self.format != HUMAN_LABELS:
            if given is None and self.format in _NEEDS_RUN:
                raise _NoRun(f"no run named {self.run_name!r}: import its trajectories or outcomes first, or map the "
                             "verdicts to a new run")
            return _RunTarget(self.run_name, record.agent_model, "given", given)
        if self.format in _NEEDS_RUN:
            raise _NoRun(f"{self.format} verdicts do not say which run they judge: give the run (--run), or map them "
                         "to one")
        if self.format in (AGENT_REWARD_BENCH, AGENT_REWARD_BENCH_JUDGE):
            return self._by_benchmark_and_model(record)
        run = AgentRun.objects.filter(name=record.run).first()
        return _RunTarget(record.run, record.agent_model, "named in the file" if run else "created", run)

    def _by_benchmark_and_model(self, record: VerdictRecord) -> _RunTarget:
        benchmark, model = self._named_benchmark(record), record.agent_model or record.run
        name = record.run or f"{model} on {benchmark}"
        candidates = list(AgentRun.objects.filter(benchmark=benchmark, model=model)) or list(
            AgentRun.objects.filter(benchmark=benchmark, name=name))
        if len(candidates) > 1:
            candidates = [run for run in candidates if run.name == name] or candidates
            if len(candidates) > 1:
                raise _NoRun(f"{len(candidates)} {benchmark} runs of model {model!r} "
                             f"({', '.join(run.name for run in candidates)}): map the agent "
                             f"{_agent(self.format, record)!r} to one")
        if candidates:
            return _RunTarget(candidates[0].name, model, "benchmark and model", candidates[0])
        return _RunTarget(name, model, "created")

    def _named_benchmark(self, record: VerdictRecord) -> str:
        """The benchmark the file names for the record's task (else the one given for it); tasks are
        made only in a benchmark so named."""
        return record.benchmark or _FORMAT_BENCHMARKS.get(self.format) or self.benchmark

    def _task_key(self, record: VerdictRecord, run: AgentRun | None) -> tuple[str, str]:
        """(benchmark, task id). AgentRewardBench names tasks as BrowserGym does (`webarena.310`): the task is
        WebArena's 310. A file naming no benchmark has its tasks looked up in its run's."""
        benchmark = self._named_benchmark(record) or (run.benchmark if run is not None else "")
        task_id = record.task_id.strip()
        prefix = f"{benchmark}."
        if benchmark and task_id.lower().startswith(prefix.lower()) and len(task_id) > len(prefix):
            task_id = task_id[len(prefix):]
        return benchmark, task_id

    def _tasks(self, targets) -> tuple[dict, list]:
        """({(benchmark, task id): task} of the tasks held, the tasks to make from the file); each target's
        `stored` gets its records whose task is held or can be made, and the others are problems."""
        keyed = [(target, record, self._task_key(record, target.run)) for target in targets.values()
                 for record in target.records]
        wanted: dict[str, set] = {}
        for _, _, (benchmark, task_id) in keyed:
            if benchmark:
                wanted.setdefault(benchmark, set()).add(task_id)
        tasks = {(task.benchmark, task.task_id): task for benchmark, ids in wanted.items()
                 for task in Task.objects.filter(benchmark=benchmark, task_id__in=ids)}
        listed = {benchmark: only_listed_tasks(benchmark) for benchmark in wanted}
        missing = set()
        for target, record, key in keyed:
            why = None if key in tasks else self._not_made(record, target, key, listed)
            if why is None:
                target.stored.append((record, key))
                missing |= {key} - tasks.keys()
            else:
                self.problems.append(problem(record.line, *why))
        return tasks, sorted(missing)

    def _not_made(self, record: VerdictRecord, target: _RunTarget, key: tuple[str, str],
                  listed: dict[str, bool]) -> tuple[str, object, str] | None:
        """(field, value, why) when the platform holds no task of the record's and none can be made; None
        when one is made from the file."""
        benchmark, task_id = key
        if not benchmark:
            return "benchmark", record.benchmark, (
                f"the file names no benchmark for its tasks and run {target.name!r} is new: give the benchmark "
                "(--benchmark)")
        if not self._named_benchmark(record):
            return "task_id", record.task_id, (
                f"run {target.name!r} is of {benchmark}, which holds no task of this id, and the file names no "
                f"benchmark to make it in: give the benchmark (--benchmark) to make it there")
        if unusable := unusable_task_id(task_id):
            return "task_id", record.task_id, unusable
        if len(benchmark) > _BENCHMARK_LENGTH or not benchmark.isprintable():
            return "benchmark", benchmark, f"no benchmark can be named so (more than {_BENCHMARK_LENGTH} characters, " \
                                           "or control characters)"
        if self.strict:
            return "task_id", record.task_id, (f"the platform holds no {benchmark} task of this id, and a strict "
                                               "import makes none")
        if listed[benchmark]:
            return "task_id", record.task_id, (f"the task list of {benchmark} (imported with manage.py import_tasks) "
                                               "has no task of this id")
        return None

    def _left_out_repeats(self, targets) -> None:
        """A second verdict of one source's grader on one task of a run is left out, naming the first."""
        for target in targets.values():
            first, kept = {}, []
            for record, key in target.stored:
                said = (key, record.source, record.grader)
                if said not in first:
                    first[said] = record.line
                    kept.append((record, key))
                    continue
                grader = f" by {record.grader}" if record.grader else ""
                self.problems.append(problem(record.line, "task_id", record.task_id, (
                    f"a second verdict of {_source(record.source)}{grader} on this task of run {target.name!r} "
                    f"(the first at {place(first[said])}): left out")))
            target.stored = kept

    def _not_held(self, target: _RunTarget, tasks: dict) -> list[str]:
        """The file's tasks of which the run holds neither a trajectory nor a task result, before the import."""
        held = set(Trajectory.objects.filter(run=target.run).values_list("task_id", flat=True))
        held |= set(TaskResult.objects.filter(run=target.run).values_list("task_id", flat=True))
        return sorted({key[1] for _, key in target.stored if key not in tasks or tasks[key].pk not in held})

    def _make_run(self, target: _RunTarget) -> None:
        run = get_or_create_run(target.name, agent=target.name, model=target.model, user=self.user)
        if self.user is not None and not can_import_into(self.user, run):  # made by another account meanwhile
            raise VerdictFileError(self.source, f"run {run.name!r} belongs to another account")
        run.benchmark = Counter(benchmark for _, (benchmark, _) in target.stored).most_common(1)[0][0]
        run.save(update_fields=["benchmark", "updated_at"])
        target.run, target.created = run, True

    def _store(self, targets, tasks, not_held) -> None:
        refs = list(dict.fromkeys(record.source for target in targets for record, _ in target.stored))
        sources = {}
        for ref in refs:
            sources[ref], _ = VerdictSource.objects.get_or_create(
                kind=ref.kind, name=ref.name, model=ref.model, screenshot_threshold=ref.screenshot_threshold,
                defaults={"threshold": ref.threshold})
        for target in targets:
            run = target.run
            trajectories = dict(Trajectory.objects.filter(run=run).values_list("task_id", "pk"))
            stored = {(verdict.task_id, verdict.source_id, verdict.grader): verdict
                      for verdict in Verdict.objects.filter(run=run, source__in=sources.values())}
            to_create, to_update, relinked = [], [], []
            for record, key in target.stored:
                task, source, grader = tasks[key], sources[record.source], storable_text(record.grader[:200])
                values = {"success": record.success, "label": storable_text(record.label[:200]), "score": record.score,
                          "explanation": storable_text(record.explanation), "labels": storable_json(record.labels),
                          "trajectory_id": trajectories.get(task.pk), "origin": self.origin,
                          "source_name": self.source[-500:]}
                verdict = stored.get((task.pk, source.pk, grader))
                if verdict is None:
                    to_create.append(Verdict(run=run, task=task, source=source, grader=grader, **values))
                elif any(getattr(verdict, name) != values[name] for name in _VERDICT_CONTENT):
                    for name, value in values.items():
                        setattr(verdict, name, value)
                    to_update.append(verdict)
                else:
                    self.report.unchanged += 1
                    if verdict.trajectory_id != values["trajectory_id"]:  # its trajectory imported since
                        verdict.trajectory_id = values["trajectory_id"]
                        relinked.append(verdict)
            Verdict.objects.bulk_create(to_create, batch_size=500)
            Verdict.objects.bulk_update(to_update, list(_VERDICT_FIELDS), batch_size=500)
            Verdict.objects.bulk_update(relinked, ["trajectory_id"], batch_size=500)
            # Tasks without a trajectory are listed with the run through a task result without a harness verdict.
            without = {tasks[key].pk for _, key in target.stored} - set(trajectories)
            held = set(TaskResult.objects.filter(run=run, task_id__in=without).values_list("task_id", flat=True))
            TaskResult.objects.bulk_create([TaskResult(run=run, task_id=task_pk, success=None, source_name=self.source,
                                                       origin=self.origin) for task_pk in sorted(without - held)])
            self.report.new += len(to_create)
            self.report.changed += len(to_update)
            self.report.runs.append(RunVerdicts(
                run.name, run.pk, target.created, target.matched, len(target.stored),
                agents=target.agents, tasks_not_held=not_held.get(target.name, [])))
        counts = Counter(record.source for target in targets for record, _ in target.stored)
        self.report.sources = [f"{source} ({counts[ref]})" for ref, source in sources.items()]


def _source(ref) -> str:
    """A source as the pages name it, before it is stored."""
    return str(VerdictSource(kind=ref.kind, name=ref.name, model=ref.model,
                             screenshot_threshold=ref.screenshot_threshold))


def _position(line: int | str) -> int:
    """Where a record is in its file: its line, or N of "item N"."""
    return line if isinstance(line, int) else int("".join(filter(str.isdigit, line)) or 0)
