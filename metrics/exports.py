"""Downloads of scores, judge decisions, aggregates and the leaderboard, built with pandas.

Each export is one table whose columns are declared below with their meaning (docs/exports.md
lists the same columns); CSV and JSON carry the same columns, and a null is an empty CSV cell or
a JSON null. Scores, decisions and aggregates are exported for a selection of runs, each read
from one evaluation job: the run's latest finished evaluation unless a job is named. The gold
dataset has its own export in annotation (`annotation.formats.export_bytes`).
"""

import hashlib
import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from itertools import islice
from types import SimpleNamespace

import pandas as pd
from django.conf import settings
from django.db.models import F, Q, Subquery, Sum
from django.utils.text import slugify

from judges import questions as q
from judges.models import JudgeDecision
from judges.selectors import judge_step_from_agent
from metrics.aggregation import METRICS
from metrics.definitions import DEFAULT_TAU
from metrics.definitions.judges_vs_humans import JudgesVsHumans
from metrics.models import Aggregate, EvaluationJob, TrajectoryScore
from metrics.permissions import visible_decisions
from metrics.registry import SCORE_REGISTRY
from metrics.selectors.comparison import NotEvaluated
from metrics.selectors.latest_evaluations import latest_evaluations
from metrics.selectors.leaderboard import Leaderboard
from metrics.services.scoring import SCORE_FIELDS
from metrics.subsets import subset_numbers
from trajectories.formats.canonical import EARLY_STOP_REASONS, OUTCOME_STATUSES
from trajectories.formats.spreadsheet import spreadsheet_cell
from trajectories.models import AgentRun, Step, TaskSubset
from trajectories.verdict_agreement import COMBINED, SOURCES as BUILT_IN_SOURCES, named_source_id

FORMATS = {"csv": "text/csv; charset=utf-8", "json": "application/json"}


@dataclass(frozen=True)
class Column:
    name: str
    dtype: str  # pandas dtype: string, Int64, Float64, boolean or object (nested JSON)
    meaning: str


def _score_field_columns() -> tuple[Column, ...]:
    return tuple(Column(field.name, field.dtype, field.description) for field in SCORE_REGISTRY)


# The columns naming the run, first in the scores and leaderboard exports.
RUN_IDENTITY_COLUMNS = (
    Column("run", "string", "Run name"),
    Column("agent", "string", "Agent"),
    Column("model", "string", "Model"),
    Column("paradigm", "string", "Planning paradigm: step_by_step, tree_search, full_plan or other"),
    Column("benchmark", "string", "Benchmark"),
)
SCORE_COLUMNS = RUN_IDENTITY_COLUMNS + (
    Column("task_id", "string", "Task id within its benchmark"),
    Column("sites", "string", "The task's sites, joined by '+'"),
    Column("trajectory_id", "Int64", "Trajectory id (its page: /trajectories/<id>/)"),
    Column("evaluation", "Int64", "Evaluation job id"),
    Column("judge", "string", "Judge configuration of the evaluation"),
    Column("gold_id", "Int64", "Gold trajectory scored against (empty: the task had no gold)"),
    Column("gold_annotator", "string", "Who recorded that gold trajectory"),
    Column("gold_version", "Int64", "Version of that gold trajectory"),
    Column("gold_policy", "string", "How the evaluation chose the gold: `reference` (the task's reference gold), "
                                    "`best` (the best of the approved golds, per trajectory), `each` or `annotator`"),
    Column("gold_is_reference", "boolean", "Whether that gold is the task's reference gold at export time (false: "
                                           "the reference changed since, or another policy)"),
) + _score_field_columns() + (
    Column("null_reasons", "object", "Why each empty metric of the row could not be computed: `{metric: reason}`, "
                                     "e.g. `{\"element_accuracy\": \"the agent acts by screen coordinates; no element "
                                     "was recorded\"}` (JSON text in CSV); empty when every metric has a value"),
    Column("error", "string", "Why the trajectory could not be scored (its metrics are then empty)"),
    Column("failed_questions", "Int64", "Judge questions that failed for the trajectory (partly scored): the "
                                        "metrics needing them are empty, each with the judge's error in "
                                        "`null_reasons`; 0 when every question was answered"),
)

DECISION_COLUMNS = (
    Column("run", "string", "Run name"),
    Column("task_id", "string", "Task id within its benchmark"),
    Column("trajectory_id", "Int64", "Trajectory id"),
    Column("evaluation", "Int64", "Evaluation job id"),
    Column("gold_id", "Int64", "Gold trajectory scored against"),
    Column("decision_id", "Int64", "Judge decision id (a whole-trajectory step match gives one row per step pair)"),
    Column("kind", "string", "step_match, plan_step_match, repetition, element_at_point, requirements, "
                              "groundedness or fuzzy_answer"),
    Column("gold_step", "Int64", "Gold step number (step matches)"),
    Column("agent_step", "Int64", "Agent step number (plan step for plan_step_match; the repeating step for "
                                  "repetition; the step acting at the point for element_at_point; empty when the "
                                  "step could not be placed)"),
    Column("subject", "string", "Gold step text, previous agent step, the action at a point, requirement, aspect "
                                "(grounded/relevant) or reference answer"),
    Column("agent_text", "string", "Agent step (or plan step), the repeating step, the element the judge found at "
                                   "the point, or the final answer"),
    Column("judge_score", "Float64", "The judge's score in [0, 1]"),
    Column("human_score", "Float64", "A reviewer's verdict, when one overruled the judge"),
    Column("score", "Float64", "The score the metric used (the human verdict wins)"),
    Column("counted", "boolean", "The metric counted it as a yes: the pair is in the Step Success matching, the "
                                 "step counted as a repeat, the element at the point is the one the step's reasoning "
                                 "meant, the requirement was satisfied, the answer was "
                                 "grounded/relevant, the reference answer matched"),
    Column("backend", "string", "Judge backend: exact, offline or openai"),
    Column("model", "string", "Judge model"),
    Column("prompt_version", "string", "Prompt version"),
    Column("rationale", "string", "The judge's rationale (on a decision's first row only; cut beyond "
                                  "`EXPORT_MAX_TEXT_CHARS` with its length and SHA-256)"),
    Column("error", "string", "Why the judge gave no answer"),
    Column("prompt_tokens", "Int64", "Tokens sent (LLM judges)"),
    Column("completion_tokens", "Int64", "Tokens received (LLM judges)"),
    Column("cost", "Float64", "Cost in USD of the decision"),
)

AGGREGATE_COLUMNS = (
    Column("evaluation", "Int64", "Evaluation job id"),
    Column("judge", "string", "Judge configuration of the evaluation"),
    Column("run", "string", "Run name"),
    Column("scope", "string", "run, site, paradigm, successful (within successful tasks), or subset (the export "
                              "restricted to a task subset)"),
    Column("group", "string", "Site group, paradigm or subset name; empty for run and successful"),
    Column("metric", "string", "A metric column of the scores export, agent_steps, gold_steps, "
                               "outcomes or lengths"),
    Column("mean", "Float64", "Mean over the non-null values (a yes/no metric's mean is a rate)"),
    Column("std", "Float64", "Sample standard deviation (n - 1); empty below two values"),
    Column("count", "Int64", "Values in the mean (outcomes, lengths: scored trajectories)"),
    Column("null_count", "Int64", "Trajectories whose value is null, left out of the mean"),
    Column("data", "object", "outcomes: {total, rows: [{status, reason, count, share, successes}]}; lengths: "
                             "{pairs, without_gold, agent_steps, gold_steps, mean_difference}; as JSON text in CSV"),
)

OUTCOME_CATEGORIES = tuple(
    f"{status}_{reason}" if status == "early_stop" else status
    for status in OUTCOME_STATUSES
    for reason in (EARLY_STOP_REASONS if status == "early_stop" else ("",))
)
LEADERBOARD_COLUMNS = RUN_IDENTITY_COLUMNS + (
    Column("created_at", "string", "When the run was created (ISO 8601)"),
    Column("evaluation", "Int64", "The evaluation job the numbers come from (the run's latest finished one)"),
    Column("judge", "string", "Its judge configuration"),
    Column("evaluated_at", "string", "When it finished (ISO 8601)"),
    Column("scope", "string", "'run', or the site group or task subset the numbers are restricted to"),
    Column("trajectories", "Int64", "Trajectories in the run"),
    Column("scored", "Int64", "Trajectories scored in the scope (errored scores excluded)"),
    Column("partly_scored", "Int64", "Of those scored, trajectories some of whose judge questions failed (the "
                                     "metrics needing them are empty); empty for an evaluation whose numbers were "
                                     "stored before partly scored trajectories were counted"),
) + tuple(
    column
    for metric in METRICS
    for column in (
        Column(metric, "Float64", f"Mean {metric} (a yes/no metric's mean is a rate)"),
        Column(f"{metric}_std", "Float64", f"Standard deviation of {metric}"),
        Column(f"{metric}_count", "Int64", f"Trajectories with a {metric} value"),
        Column(f"{metric}_nulls", "Int64", f"Trajectories whose {metric} is null"),
    )
) + tuple(
    Column(f"outcome_{category}", "Int64", f"Trajectories with outcome {category}") for category in OUTCOME_CATEGORIES
) + (
    Column("mean_agent_steps", "Float64", "Mean agent steps n over trajectories with gold"),
    Column("mean_gold_steps", "Float64", "Mean gold steps m over the same trajectories"),
    Column("length_pairs", "Int64", "Trajectories with both n and m"),
    Column("mean_length_difference", "Float64", "Mean of n - m"),
    Column("success_from", "string", "Which verdict `success` is: the chosen source (`success_source`; by default "
                                     "combined, the harness's, else the offline check's), or, where that source has "
                                     "no verdict on the run, the first of combined, harness, check, human and the "
                                     "named sources that has one: its key (`source:<id>` for a named source), so "
                                     "`success` is empty only when no source has a verdict on the run"),
    Column("results_only", "boolean", "The run has per-task verdicts and no agent steps: no other metric"),
    Column("failure_types_from", "string", "Whose failure types `failure_types` counts: `people` (their consensus) "
                                           "or an attribution source's id; empty when none was asked for "
                                           "(`failure_source`)"),
    Column("failure_types", "string", "Share of the run's attributed failures of each type, most first: "
                                      "`key share; key share`"),
) + tuple(
    column
    for source, label in zip(BUILT_IN_SOURCES, ("the harness's verdicts", "the offline check's verdicts",
                                                "the human graders' consensus"))
    for column in (
        Column(f"success_{source}", "Float64", f"Success rate by {label}"),
        Column(f"success_{source}_count", "Int64", f"Tasks that success_{source} is the rate over"),
    )
)

JUDGES_COLUMNS = (
    Column("benchmark", "string", "The benchmark whose runs these are"),
    Column("reference", "string", "What the sources are read against: human consensus, or the chosen human source"),
    Column("run", "string", "The run (agent); empty over all runs of the benchmark"),
    Column("source", "string", "The source's key: source:<id> (built-in sources are sources too), or "
                               "human-ceiling"),
    Column("source_label", "string", "The source's name (and model)"),
    Column("kind", "string", "harness, rule_check, llm_judge, agent_self_report; human for the ceiling"),
    Column("n", "Int64", "Tasks where both the source and the reference said yes or no"),
    Column("unsure", "Int64", "Tasks both spoke on where one of them said neither (unsure, not executable, a tie)"),
    Column("accuracy", "Float64", "Share of the n tasks where the source agrees with the reference"),
    Column("precision", "Float64", "Of the source's successes, the share the reference calls successes"),
    Column("recall", "Float64", "Of the reference's successes, the share the source calls successes"),
    Column("f1", "Float64", "Harmonic mean of precision and recall"),
    Column("npv", "Float64", "Of the source's failures, the share the reference calls failures"),
    Column("tnr", "Float64", "Of the reference's failures, the share the source calls failures"),
    Column("kappa", "Float64", "Cohen's kappa of the source and the reference"),
    Column("kappa_low", "Float64", "Lower end of kappa's 95 % bootstrap interval (seeded)"),
    Column("kappa_high", "Float64", "Upper end of kappa's 95 % bootstrap interval"),
    Column("true_positive", "Int64", "Both say success"),
    Column("false_positive", "Int64", "The source says success, the reference failure"),
    Column("false_negative", "Int64", "The source says failure, the reference success"),
    Column("true_negative", "Int64", "Both say failure"),
    Column("sparse", "boolean", "Fewer than 30 tasks: too few to compare sources by"),
)

EXPORTS = {
    "scores": SCORE_COLUMNS,
    "decisions": DECISION_COLUMNS,
    "aggregates": AGGREGATE_COLUMNS,
    "leaderboard": LEADERBOARD_COLUMNS,
    "judges": JUDGES_COLUMNS,
}
RUN_EXPORTS = ("scores", "decisions", "aggregates")


def frame_of(rows: Iterable[Mapping], columns: tuple[Column, ...]) -> pd.DataFrame:
    names = [column.name for column in columns]
    frame = pd.DataFrame.from_records(list(rows), columns=names)
    return frame.astype({column.name: column.dtype for column in columns})


def _csv_text(value):
    """A text or nested cell as CSV text; formula-looking text gets a leading quote (spreadsheet_cell)."""
    if value is None or value is pd.NA:
        return None
    return spreadsheet_cell(value if isinstance(value, str) else json.dumps(value, ensure_ascii=False))


class ExportTooLarge(ValueError):
    """An export over EXPORT_MAX_ROWS, refused before its first byte is sent."""


CHUNK_ROWS = 500


def stream(rows: Iterable[Mapping], columns: tuple[Column, ...], fmt: str) -> Iterator[bytes]:
    """The table as CSV or JSON, written a chunk of rows at a time, so memory holds one chunk whatever the
    table's size. The first chunk is read at once: a refusal (ExportTooLarge) comes before any byte."""
    if fmt not in FORMATS:
        raise ValueError(f"format: {fmt!r} is not one of {', '.join(FORMATS)}")
    rows = iter(rows)
    return _chunks(list(islice(rows, CHUNK_ROWS)), rows, columns, fmt)


def _chunks(first: list, rows: Iterator, columns: tuple[Column, ...], fmt: str) -> Iterator[bytes]:
    chunk, index = first, 0
    if fmt == "json":
        yield b"[\n"
    while chunk or index == 0:
        data = to_bytes(frame_of(chunk, columns), fmt)
        if fmt == "csv":
            yield data if index == 0 else data.split(b"\n", 1)[1]
        elif chunk:
            yield (b",\n" if index else b"") + data[2:-2]  # the records between "[\n" and "\n]"
        chunk, index = list(islice(rows, CHUNK_ROWS)), index + 1
    if fmt == "json":
        yield b"\n]"


def cut_text(value: str | None) -> str | None:
    """A text over EXPORT_MAX_TEXT_CHARS cut there, ending with its full length and SHA-256 (to match it
    against the judge decision it came from)."""
    limit = settings.EXPORT_MAX_TEXT_CHARS
    if value is None or len(value) <= limit:
        return value
    digest = hashlib.sha256(value.encode("utf-8", "replace")).hexdigest()
    return f"{value[:limit]} [cut: {len(value):,} characters, sha256 {digest}]"


def to_bytes(frame: pd.DataFrame, fmt: str) -> bytes:
    """CSV opens safely in a spreadsheet (text columns through `spreadsheet_cell`, numbers as they are);
    JSON keeps every value verbatim."""
    if fmt == "csv":
        texts = [name for name in frame.columns if frame[name].dtype == object or frame[name].dtype == "string"]
        flat = frame.assign(**{name: frame[name].astype(object).map(_csv_text) for name in texts})
        return flat.to_csv(index=False).encode("utf-8")
    if fmt == "json":
        return frame.to_json(orient="records", force_ascii=False, indent=1).encode("utf-8")
    raise ValueError(f"format: {fmt!r} is not one of {', '.join(FORMATS)}")


# Which runs, from which evaluation --------------------------------------------------------------

Selection = Mapping[int, int]  # run id -> evaluation job id


def run_selection(run: AgentRun, *, job_id: int | None = None, judge: str = "") -> Selection:
    """The run with the named job (which must include it), else its latest finished evaluation."""
    if job_id is not None:
        if not EvaluationJob.objects.filter(pk=job_id, runs=run).exists():
            raise ValueError(f"evaluation #{job_id} did not evaluate run {run.name!r}")
        return {run.pk: job_id}
    evaluation = latest_evaluations([run.pk], judge=judge).get(run.pk)
    if evaluation is None:
        raise NotEvaluated(run, judge)
    return {run.pk: evaluation.job_id}


def _selected(selection: Selection, job_field: str, run_field: str) -> Q:
    condition = Q(pk__in=[])
    for run_id, job_id in selection.items():
        condition |= Q(**{job_field: job_id, run_field: run_id})
    return condition


def _iso(value) -> str | None:
    return value.isoformat() if value else None


# Scores ---------------------------------------------------------------------------------------

_SCORE_ORDER = ("trajectory__run__name", "trajectory__task__number", "trajectory__task__task_id", "gold_id")


def _scores(selection: Selection, subset: TaskSubset | None):
    scores = TrajectoryScore.objects.filter(_selected(selection, "job_id", "trajectory__run_id"))
    return scores if subset is None else scores.filter(subset.task_filter("trajectory__task__"))


def scores_frame(selection: Selection, subset: TaskSubset | None = None) -> pd.DataFrame:
    return frame_of(score_rows(selection, subset), SCORE_COLUMNS)


def score_rows(selection: Selection, subset: TaskSubset | None = None) -> Iterator[dict]:
    scores = _scores(selection, subset).order_by(
        *_SCORE_ORDER
    ).values(
        "trajectory__run__name", "trajectory__run__agent", "trajectory__run__model", "trajectory__run__paradigm",
        "trajectory__run__benchmark", "trajectory__task__task_id", "trajectory__task__sites", "trajectory_id",
        "job_id", "job__judge_config__name", "gold_id", "gold__annotator__username", "gold__version",
        "job__gold_policy", "gold__is_reference", *SCORE_FIELDS, "error", "failed_questions", "details__null_reasons",
    )
    rows = (
        {
            "run": row["trajectory__run__name"], "agent": row["trajectory__run__agent"],
            "model": row["trajectory__run__model"], "paradigm": row["trajectory__run__paradigm"],
            "benchmark": row["trajectory__run__benchmark"], "task_id": row["trajectory__task__task_id"],
            "sites": "+".join(row["trajectory__task__sites"] or []), "trajectory_id": row["trajectory_id"],
            "evaluation": row["job_id"], "judge": row["job__judge_config__name"], "gold_id": row["gold_id"],
            "gold_annotator": row["gold__annotator__username"], "gold_version": row["gold__version"],
            "gold_policy": row["job__gold_policy"], "gold_is_reference": row["gold__is_reference"],
            **{name: row[name] for name in SCORE_FIELDS}, "null_reasons": row["details__null_reasons"],
            "error": row["error"], "failed_questions": row["failed_questions"],
        }
        for row in scores.iterator(chunk_size=CHUNK_ROWS)
    )
    return rows


# Judge decisions, one row per step where a decision concerns steps ---------------------------------

_KIND_ORDER = ("step_match", "plan_step_match", "repetition", "element_at_point", "requirements", "groundedness",
               "fuzzy_answer")


def _key(value) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def _agent_inputs(steps: list[tuple]) -> list[dict]:
    """Agent steps as the judge's questions describe them, from stored step fields; an element
    resolved from the page's tree at judging time may be missing here (see _place_repetitions)."""
    return [
        q.step_inputs(judge_step_from_agent(SimpleNamespace(
            action=action, action_type=action_type, action_value=value, element_id=element_id,
            element_label=label, observation="", url="",
        )))
        for action, action_type, value, element_id, label, *_ in steps
    ]


class _ScoreDecisions:
    """The rows of one trajectory score."""

    def __init__(self, score: dict, decisions: list[JudgeDecision], steps: list[tuple]):
        self.score, self.steps = score, steps
        self.details = score["details"] or {}
        self.tau = (score["job__parameters"] or {}).get("tau", DEFAULT_TAU)
        self.rows: list[dict] = []
        by_kind: dict[str, list[JudgeDecision]] = {}
        for decision in decisions:
            by_kind.setdefault(decision.kind, []).append(decision)
        self.by_kind = by_kind
        self.reviewed_pairs = {
            (_key(d.inputs.get("gold")), _key(d.inputs.get("agent"))): d
            for d in by_kind.get(q.STEP_MATCH, []) if d.human_score is not None
        }
        self.used: set[int] = set()
        self.written: set[int] = set()

    def row(self, decision: JudgeDecision, kind: str, **fields) -> None:
        """A whole-trajectory decision gives n x m rows: its rationale is written on the first of them
        only (the others name the same decision_id), and every long text is cut (`cut_text`)."""
        judge_score = fields.pop("judge_score", decision.score)
        human = fields.pop("human", decision if decision.human_score is not None else None)
        human_score = human.human_score if human is not None else None
        rationale = None if decision.pk in self.written else cut_text(decision.rationale)
        self.written.add(decision.pk)
        for name in ("subject", "agent_text"):
            if isinstance(fields.get(name), str):
                fields[name] = cut_text(fields[name])
        self.rows.append({
            "run": self.score["trajectory__run__name"], "task_id": self.score["trajectory__task__task_id"],
            "trajectory_id": self.score["trajectory_id"], "evaluation": self.score["job_id"],
            "gold_id": self.score["gold_id"], "decision_id": decision.pk, "kind": kind,
            "judge_score": judge_score, "human_score": human_score,
            "score": human_score if human_score is not None else judge_score,
            "backend": decision.backend, "model": decision.model, "prompt_version": decision.prompt_version,
            "rationale": rationale, "error": cut_text(decision.error), "prompt_tokens": decision.prompt_tokens,
            "completion_tokens": decision.completion_tokens, "cost": float(decision.cost), **fields,
        })

    def build(self) -> list[dict]:
        agent_inputs = self._step_matches()
        self._place_repetitions(agent_inputs)
        self._elements_at_points()
        self._answers()
        for decision in self.by_kind.get(q.STEP_MATCH, []):
            if decision.pk not in self.used:
                self.row(decision, "step_match", subject=decision.inputs.get("gold", {}).get("text"),
                         agent_text=decision.inputs.get("agent", {}).get("text"), counted=None)
        return self.rows

    def _step_matches(self) -> list[dict] | None:
        """Cells of the whole-trajectory step questions; returns the agent steps' inputs, if asked."""
        plan = [text.strip() for text in self.score["trajectory__plan"] or []]
        agent_inputs = None
        for decision in self.by_kind.get(q.TRAJECTORY_MATCH, []):
            gold, agent = decision.inputs.get("gold", []), decision.inputs.get("agent", [])
            is_plan = (bool(plan) and [step.get("text") for step in agent] == plan
                       and "plan_step_success" in self.details)
            kind, metric = ("plan_step_match", "plan_step_success") if is_plan else ("step_match", "step_success")
            if not is_plan:
                agent_inputs = agent
            if decision.error:
                self.row(decision, kind, counted=None)
                continue
            matrix = (decision.output or {}).get("matrix", [])
            matched = {(p["gold_step"], p["agent_step"]) for p in (self.details.get(metric) or {}).get("matched", [])}
            for j, gold_step in enumerate(gold):
                for i, agent_step in enumerate(agent):
                    human = self.reviewed_pairs.get((_key(gold_step), _key(agent_step)))
                    if human is not None:
                        self.used.add(human.pk)
                    self.row(
                        decision, kind, gold_step=j + 1, agent_step=i + 1, subject=gold_step.get("text"),
                        agent_text=agent_step.get("text"), judge_score=matrix[j][i] if j < len(matrix) else None,
                        human=human, counted=(j + 1, i + 1) in matched,
                    )
        return agent_inputs

    def _place_repetitions(self, agent_inputs: list[dict] | None) -> None:
        """Each repetition decision at the agent steps it judged: by the steps' full inputs,
        else (an element resolved from the page's tree) by their action texts when unambiguous."""
        decisions = self.by_kind.get(q.REPETITION, [])
        if not decisions:
            return
        inputs = agent_inputs or _agent_inputs(self.steps)
        exact = {(_key(d.inputs.get("previous")), _key(d.inputs.get("step"))): d for d in decisions}
        by_text: dict[tuple, list[JudgeDecision]] = {}
        for d in decisions:
            by_text.setdefault((d.inputs["previous"]["text"], d.inputs["step"]["text"]), []).append(d)
        repeated = set((self.details.get("repetitiveness") or {}).get("repeated_steps", []))
        placed = set()
        for k in range(2, len(inputs) + 1):
            previous, step = inputs[k - 2], inputs[k - 1]
            decision = exact.get((_key(previous), _key(step)))
            if decision is None:
                candidates = by_text.get((previous["text"], step["text"]), [])
                decision = candidates[0] if len(candidates) == 1 else None
            if decision is not None:
                placed.add(decision.pk)
                self.row(decision, "repetition", agent_step=k, subject=previous["text"], agent_text=step["text"],
                         counted=k in repeated)
        for decision in decisions:
            if decision.pk not in placed:
                self.row(decision, "repetition", subject=decision.inputs["previous"]["text"],
                         agent_text=decision.inputs["step"]["text"], counted=None)

    def _elements_at_points(self) -> None:
        """Each element-at-point decision at the step it resolved: the step with its action and point."""
        steps = {(action, x, y): number for number, (action, *_, x, y) in enumerate(self.steps, start=1)}
        for decision in self.by_kind.get(q.ELEMENT_AT_POINT, []):
            inputs = decision.inputs
            x, y = (inputs.get("point") or [None, None])[:2]
            score = decision.effective_score
            self.row(decision, "element_at_point", agent_step=steps.get((inputs.get("action"), x, y)),
                     subject=inputs.get("action"), agent_text=(decision.output or {}).get("element"),
                     counted=None if score is None else score >= self.tau)

    def _answers(self) -> None:
        satisfied = {check["requirement"]: check["satisfied"]
                     for check in (self.details.get("partial_success") or {}).get("requirements", [])}
        quality = self.details.get("answer_quality") or {}
        for decision in self.by_kind.get(q.REQUIREMENTS, []):
            requirement = decision.inputs.get("requirement")
            self.row(decision, "requirements", subject=requirement, agent_text=decision.inputs.get("answer"),
                     counted=satisfied.get(requirement))
        for decision in self.by_kind.get(q.GROUNDEDNESS, []):
            aspect = decision.inputs.get("aspect")
            self.row(decision, "groundedness", subject=aspect, agent_text=decision.inputs.get("answer"),
                     counted=quality.get(aspect))
        for decision in self.by_kind.get(q.FUZZY_ANSWER, []):
            score = decision.effective_score
            self.row(decision, "fuzzy_answer", subject=decision.inputs.get("reference"),
                     agent_text=decision.inputs.get("answer"), counted=None if score is None else score >= self.tau)


def decisions_frame(selection: Selection, subset: TaskSubset | None = None, *, viewer=None) -> pd.DataFrame:
    return frame_of(decision_rows(selection, subset, viewer=viewer), DECISION_COLUMNS)


SCORES_PER_READ = 50


def decision_rows(selection: Selection, subset: TaskSubset | None = None, *, viewer=None) -> Iterator[dict]:
    """For a `viewer`, decisions holding gold text they may not read are left out (`visible_decisions`);
    without one (the operator's command), every decision is exported. Read a few scores at a time; an
    export over EXPORT_MAX_ROWS is refused (ExportTooLarge) before its first row."""
    scores = _scores(selection, subset)
    links = TrajectoryScore.decisions.through.objects.filter(trajectoryscore__in=Subquery(scores.values("pk")))
    estimate = (scores.aggregate(cells=Sum(F("agent_steps") * F("gold_steps")))["cells"] or 0) + links.count()
    if estimate > settings.EXPORT_MAX_ROWS:
        raise ExportTooLarge(f"about {estimate:,} rows of judge decisions, more than the limit of "
                             f"{settings.EXPORT_MAX_ROWS:,} (EXPORT_MAX_ROWS): export fewer runs, one run, or a "
                             "subset of tasks")
    return _decision_rows(list(scores.order_by(*_SCORE_ORDER).values_list("pk", flat=True)), viewer)


def _decision_rows(score_ids: list[int], viewer) -> Iterator[dict]:
    for start in range(0, len(score_ids), SCORES_PER_READ):
        chunk = score_ids[start:start + SCORES_PER_READ]
        scores = TrajectoryScore.objects.filter(pk__in=chunk)
        score_rows = sorted(scores.values(
            "pk", "job_id", "job__parameters", "trajectory_id", "trajectory__run__name", "trajectory__task__task_id",
            "trajectory__plan", "gold_id", "details",
        ), key=lambda row: chunk.index(row["pk"]))
        links = TrajectoryScore.decisions.through.objects.filter(trajectoryscore__in=chunk)
        by_score: dict[int, list[int]] = {}
        for score_id, decision_id in links.values_list("trajectoryscore_id", "judgedecision_id"):
            by_score.setdefault(score_id, []).append(decision_id)
        used = JudgeDecision.objects.filter(pk__in=Subquery(links.values("judgedecision_id")))
        if viewer is not None:
            used = visible_decisions(viewer, used)
        decisions = {decision.pk: decision for decision in used}
        steps: dict[int, list[tuple]] = {}
        for trajectory_id, *fields in Step.objects.filter(
            trajectory__in=Subquery(scores.values("trajectory_id"))
        ).order_by("trajectory_id", "index").values_list(
            "trajectory_id", "action", "action_type", "action_value", "element_id", "element_label", "point_x",
            "point_y"
        ):
            steps.setdefault(trajectory_id, []).append(tuple(fields))
        for score in score_rows:
            own = [decisions[pk] for pk in by_score.get(score["pk"], []) if pk in decisions]
            built = _ScoreDecisions(score, own, steps.get(score["trajectory_id"], [])).build()
            built.sort(key=lambda row: (_KIND_ORDER.index(row["kind"]), row.get("gold_step") or 0,
                                        row.get("agent_step") or 0, row["decision_id"]))
            yield from built


# Aggregates and the leaderboard ----------------------------------------------------------------


def aggregates_frame(selection: Selection, subset: TaskSubset | None = None) -> pd.DataFrame:
    return frame_of(aggregate_rows(selection, subset), AGGREGATE_COLUMNS)


def aggregate_rows(selection: Selection, subset: TaskSubset | None = None) -> Iterable[dict]:
    if subset is not None:
        return _subset_aggregate_rows(selection, subset)
    aggregates = Aggregate.objects.filter(_selected(selection, "job_id", "run_id")).order_by(
        "run__name", "job_id", "scope", "group", "metric"
    ).values("job_id", "job__judge_config__name", "run__name", "scope", "group", "metric", "mean", "std", "count",
             "null_count", "data")
    rows = (
        {"evaluation": row["job_id"], "judge": row["job__judge_config__name"], "run": row["run__name"],
         "scope": row["scope"], "group": row["group"], "metric": row["metric"], "mean": row["mean"], "std": row["std"],
         "count": row["count"], "null_count": row["null_count"], "data": row["data"] or None}
        for row in aggregates
    )
    return rows


def _subset_aggregate_rows(selection: Selection, subset: TaskSubset) -> list[dict]:
    """The aggregates rows of the runs restricted to the subset (computed from their scores)."""
    numbers = subset_numbers(dict(selection), subset)
    runs = dict(AgentRun.objects.filter(pk__in=list(selection)).values_list("pk", "name"))
    judges = dict(EvaluationJob.objects.filter(pk__in=set(selection.values()))
                  .values_list("pk", "judge_config__name"))
    rows = []
    for run_id in sorted(numbers, key=lambda run_id: runs[run_id]):
        found, job_id = numbers[run_id], selection[run_id]
        base = {"evaluation": job_id, "judge": judges[job_id], "run": runs[run_id], "scope": "subset",
                "group": subset.name}
        tables = {"lengths": found.lengths, "outcomes": found.outcomes}
        for metric in sorted(set(found.metrics) | set(tables)):
            if metric in tables:
                rows.append({**base, "metric": metric, "count": found.outcomes["total"], "data": tables[metric]})
            else:
                summary = found.metrics[metric]
                rows.append({**base, "metric": metric, "mean": summary.mean, "std": summary.std,
                             "count": summary.count, "null_count": summary.null_count})
    return rows


def _outcome_counts(outcomes: dict | None) -> dict:
    if not outcomes:
        return {}
    return {
        f"outcome_{row['status']}_{row['reason']}" if row["reason"] else f"outcome_{row['status']}": row["count"]
        for row in outcomes["rows"]
    }


def named_source_columns(board: Leaderboard) -> dict[str, str]:
    """{named source's key: its column, success_<its name>} of every named source with verdicts in the board's
    runs; a name two sources share gets the source's id after it."""
    named = sorted({source for row in board.rows for source, summary in row.success_sources.items()
                    if named_source_id(source) is not None and summary.count}, key=named_source_id)
    taken = {column.name for column in LEADERBOARD_COLUMNS}
    found = {}
    for source in named:
        name = "success_" + slugify(board.source_labels.get(source, source)).replace("-", "_")
        if name in taken or f"{name}_count" in taken:
            name = f"{name}_{named_source_id(source)}"
        taken |= {name, f"{name}_count"}
        found[source] = name
    return found


def _shown_success(row, chosen: str, named: Iterable[str]) -> tuple[str, object]:
    """(source, rate) of the success a row's export gives: the chosen source's, else the first that has one."""
    for source in (chosen, COMBINED, *BUILT_IN_SOURCES, *named):
        summary = row.metrics.get("success") if source == chosen else row.success_sources.get(source)
        if summary is not None and summary.count:
            return source, summary
    return chosen, None


def leaderboard_frame(board: Leaderboard) -> pd.DataFrame:
    """The leaderboard's rows with success by every source that has verdicts in its runs, named sources included
    (a column pair each); `success` is never empty while some source has a verdict on the run."""
    scope = board.filters.subset or board.filters.site or "run"
    named = named_source_columns(board)
    columns = LEADERBOARD_COLUMNS + tuple(
        column for source, name in named.items() for column in (
            Column(name, "Float64", f"Success rate by {board.source_labels.get(source, source)} ({source})"),
            Column(f"{name}_count", "Int64", f"Tasks that {name} is the rate over")))
    rows = []
    for row in board.rows:
        record = {
            "run": row.name, "agent": row.agent, "model": row.model, "paradigm": row.paradigm,
            "benchmark": row.benchmark, "created_at": _iso(row.created_at), "trajectories": row.trajectories,
            "scored": row.scored, "partly_scored": row.partly_scored, "scope": scope,
        }
        if row.evaluation:
            record.update(evaluation=row.evaluation.job_id, judge=row.evaluation.judge,
                          evaluated_at=_iso(row.evaluation.finished_at))
        for metric, summary in row.metrics.items():
            record.update({metric: summary.mean, f"{metric}_std": summary.std, f"{metric}_count": summary.count,
                           f"{metric}_nulls": summary.null_count})
        record.update(_outcome_counts(row.outcomes))
        source, shown = _shown_success(row, board.filters.success_source, named)
        if source != board.filters.success_source:
            record.update(success=shown.mean, success_std=None, success_count=shown.count, success_nulls=None)
        record.update(success_from=source, results_only=row.results_only)
        for source, name in {**{source: f"success_{source}" for source in BUILT_IN_SOURCES}, **named}.items():
            summary = row.success_sources.get(source)
            if summary is not None and summary.count:
                record.update({name: summary.mean, f"{name}_count": summary.count})
        if row.failure_types is not None:
            record.update(failure_types_from=board.filters.failure_source,
                          failure_types="; ".join(f"{item.key} {item.share:.3f}" for item in row.failure_types))
        if row.lengths:
            record.update(mean_agent_steps=row.lengths["agent_steps"]["mean"],
                          mean_gold_steps=row.lengths["gold_steps"]["mean"], length_pairs=row.lengths["pairs"],
                          mean_length_difference=row.lengths["mean_difference"])
        rows.append(record)
    return frame_of(rows, columns)


def judges_frame(benchmark: str, report: JudgesVsHumans, only_run: str = "") -> pd.DataFrame:
    """One row per source (the human ceiling first) and run, then per source over all runs; `only_run`:
    that run's rows alone."""
    rows = []
    for run in (only_run,) if only_run else (*report.runs, ""):
        for row, cell in report.rows(run):
            rows.append({"benchmark": benchmark, "reference": report.reference_label, "run": run,
                         "source": row.source, "source_label": row.label, "kind": row.kind, **cell.to_dict()})
    return frame_of(rows, JUDGES_COLUMNS)


RUN_FRAMES = {"scores": scores_frame, "decisions": decisions_frame, "aggregates": aggregates_frame}


def run_rows(what: str, selection: Selection, subset: TaskSubset | None = None, *, viewer=None) -> Iterable[dict]:
    """One of RUN_EXPORTS, on a subset of tasks, as `viewer` may read it (see `decision_rows`)."""
    if what == "decisions":
        return decision_rows(selection, subset, viewer=viewer)
    return {"scores": score_rows, "aggregates": aggregate_rows}[what](selection, subset)


def run_stream(what: str, fmt: str, selection: Selection, subset: TaskSubset | None = None, *,
               viewer=None) -> Iterator[bytes]:
    return stream(run_rows(what, selection, subset, viewer=viewer), EXPORTS[what], fmt)


def export_filename(what: str, fmt: str, runs: Iterable[str] = ()) -> str:
    names = "-".join(runs)
    safe = "".join(char if char.isalnum() or char in "._-" else "_" for char in names)[:80]
    return f"{what}-{safe}.{fmt}" if safe else f"{what}.{fmt}"

