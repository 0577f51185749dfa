"""Scoring of one trajectory against one gold trajectory: ask the judge, apply the metrics.

The judge is asked only what the metrics need, once per question kind per trajectory; the
pure metric functions of `metrics.definitions` turn the answers into numbers; everything is
returned as plain values for the evaluation service to store. The questions are built first
(`unit_inputs`), so that a chunk of units can have all of them settled at once.
"""

import hashlib
import json
from dataclasses import dataclass, field

from judges import questions as q
from judges.selectors import judge_step_from_agent, judge_step_from_gold
from judges.steps import JudgeStep
from metrics import definitions as md
from trajectories.formats.actions import extract_planned_action

# Columns of TrajectoryScore that a scoring fills, in the order METRICS.md gives them.
SCORE_FIELDS = (
    "step_success",
    "recovery",
    "repetitiveness",
    "element_accuracy",
    "partial_success",
    "grounded",
    "relevant",
    "correct",
    "success",
    "success_source",
    "check_success",
    "check_source",
    "plan_step_success",
    "key_node_completion",
    "outcome_status",
    "outcome_reason",
    "agent_steps",
    "gold_steps",
    "matched_steps",
    "deviations",
    "recoveries",
    "mean_recovery_cost",
)


KEY_NODES = "key_nodes"


class JudgeFailed(RuntimeError):
    """A judge question failed after its retries; the trajectory's score records why."""


@dataclass(frozen=True)
class Parameters:
    tau: float = md.DEFAULT_TAU
    window: int = 1
    ordered: bool = False

    @classmethod
    def from_dict(cls, raw: dict | None) -> "Parameters":
        raw = dict(raw or {})
        unknown = sorted(set(raw) - {"tau", "window", "ordered"})
        if unknown:
            raise ValueError(f"unknown evaluation parameter {unknown[0]!r} (known: tau, window, ordered)")
        params = cls(**raw)
        if isinstance(params.tau, bool) or not isinstance(params.tau, (int, float)) or not 0 <= params.tau <= 1:
            raise ValueError(f"parameter 'tau' must be a number in [0, 1], got {params.tau!r}")
        if isinstance(params.window, bool) or not isinstance(params.window, int) or params.window < 1:
            raise ValueError(f"parameter 'window' must be an integer >= 1, got {params.window!r}")
        if not isinstance(params.ordered, bool):
            raise ValueError(f"parameter 'ordered' must be true or false, got {params.ordered!r}")
        return cls(tau=float(params.tau), window=params.window, ordered=params.ordered)

    def to_dict(self) -> dict:
        return {"tau": self.tau, "window": self.window, "ordered": self.ordered}


@dataclass
class Scoring:
    values: dict = field(default_factory=dict)
    details: dict = field(default_factory=dict)
    decision_ids: set[int] = field(default_factory=set)


def inputs_fingerprint(trajectory, gold, params: Parameters, judge_identity: str) -> str:
    """What a score depends on besides judge decisions (whose overrules are tracked separately)."""
    task = trajectory.task
    parts = {
        "trajectory": trajectory.content_hash,
        "gold": [gold.pk, gold.version] if gold else None,
        "requirements": task.requirements,
        "eval": task.eval_config,
        "intent": task.intent,
        "success": trajectory.success,
        "params": params.to_dict(),
        "judge": judge_identity,
    }
    if task.key_nodes:  # only where present, so scores of other tasks keep their fingerprints
        parts["key_nodes"] = task.key_nodes
    encoded = json.dumps(parts, sort_keys=True, default=str).encode()
    return hashlib.sha256(encoded).hexdigest()


def _matrix(step_scores) -> md.ScoreMatrix | None:
    if step_scores.error:
        raise JudgeFailed(f"step matching: {step_scores.error}")
    return step_scores.matrix


def _verdict_score(verdict, what: str, result: Scoring) -> float:
    """The verdict's score, its decision recorded as one the scores used."""
    if verdict.decision_id is not None:
        result.decision_ids.add(verdict.decision_id)
    if verdict.score is None:
        raise JudgeFailed(f"{what}: {verdict.error or 'no answer'}")
    return verdict.score


@dataclass(frozen=True)
class UnitQuestions:
    """The judge questions of one unit, by the metric that asks them; None or [] when not asked."""

    step_match: q.Question | None = None
    plan_match: q.Question | None = None
    repetitions: list[q.Question] = field(default_factory=list)
    requirements: list[q.Question] = field(default_factory=list)
    answer_quality: list[q.Question] = field(default_factory=list)
    answer_matches: list[q.Question] = field(default_factory=list)
    key_nodes: list[q.Question] = field(default_factory=list)

    def all(self) -> list[q.Question]:
        matches = [question for question in (self.step_match, self.plan_match) if question is not None]
        return (matches + self.repetitions + self.requirements + self.answer_quality + self.answer_matches
                + self.key_nodes)


@dataclass(frozen=True)
class UnitInputs:
    """One trajectory and its gold as the metrics see them, with the questions for the judge.

    `gold` may be None (no gold for the task: gold metrics are null).
    """

    trajectory: object
    steps: list
    gold: object | None
    gold_steps: list
    last_url: str | None
    asked_requirements: tuple[str, ...]
    success_questions: tuple[md.AnswerQuestion, ...]
    questions: UnitQuestions
    visited: tuple[md.VisitedStep, ...] = ()
    key_node_questions: tuple[md.SemanticQuestion, ...] = ()


def unit_inputs(trajectory, steps, gold, gold_steps) -> UnitInputs:
    """Raises ValueError when the task's evaluation config cannot be read."""
    task, answer = trajectory.task, trajectory.final_answer
    last_url = steps[-1].url if steps else None
    gold_steps = gold_steps if gold is not None else []
    asked_requirements = md.requirements_needing_judge(task.requirements, answer)
    # The offline check is asked even when the harness has spoken, so the two verdicts can be set side by side.
    success_questions = md.task_success_questions(task.eval_config, final_answer=answer, last_url=last_url)
    agent = [judge_step_from_agent(step) for step in steps]
    reference = [judge_step_from_gold(step) for step in gold_steps]
    planned = [JudgeStep(text=text) for text in trajectory.plan or []] if gold is not None else []
    visited = tuple(md.VisitedStep(url=step.url, element_path=step.element_id, value=step.action_value)
                    for step in steps) if task.key_nodes else ()
    key_node_questions = md.key_node_questions(task.key_nodes, visited) if task.key_nodes else ()
    questions = UnitQuestions(
        step_match=q.trajectory_match(reference, agent) if reference and agent else None,
        plan_match=q.trajectory_match(reference, planned) if reference and planned else None,
        repetitions=q.repetitions(agent),
        requirements=q.requirements(task.intent, answer, list(asked_requirements)),
        answer_quality=(
            q.answer_quality(task.intent, answer, [step.observation for step in steps])
            if md.has_final_answer(answer) else []
        ),
        answer_matches=[q.fuzzy_answer(task.intent, answer or "", check.reference) for check in success_questions],
        key_nodes=[q.fuzzy_answer(task.intent, question.candidate, question.reference)
                   for question in key_node_questions],
    )
    return UnitInputs(trajectory, steps, gold, gold_steps, last_url, asked_requirements, success_questions,
                      questions, visited, key_node_questions)


def score_trajectory(unit: UnitInputs, judge, params: Parameters) -> Scoring:
    """Every metric of METRICS.md for one trajectory, from the judge's verdicts on its questions."""
    result = Scoring()
    trajectory, steps, gold, asks = unit.trajectory, unit.steps, unit.gold, unit.questions
    task, answer = trajectory.task, trajectory.final_answer
    n = len(steps)

    outcome = md.outcome_category(
        trajectory.outcome_status, trajectory.outcome_reason or None, n, len(unit.gold_steps) if gold else None
    )
    result.values.update(
        outcome_status=outcome.status, outcome_reason=outcome.reason, agent_steps=n,
        gold_steps=len(unit.gold_steps) if gold else None,
    )
    result.details["outcome"] = outcome.to_dict()

    if gold is not None:
        matrix = _step_matrix(judge, asks.step_match, len(unit.gold_steps), n, result)
        ssr = md.step_success(matrix, tau=params.tau, ordered=params.ordered)
        rec = md.recovery(matrix, tau=params.tau, window=params.window)
        result.values.update(
            step_success=ssr.value, matched_steps=len(ssr.matched), recovery=rec.value,
            deviations=rec.deviations, recoveries=rec.recoveries, mean_recovery_cost=rec.mean_recovery_cost,
        )
        result.details.update(step_success=ssr.to_dict(), recovery=rec.to_dict())
        if trajectory.plan:
            plan_matrix = _step_matrix(judge, asks.plan_match, len(unit.gold_steps), len(trajectory.plan), result)
            plan_ssr = md.step_success(plan_matrix, tau=params.tau, ordered=params.ordered)
            result.values["plan_step_success"] = plan_ssr.value
            result.details["plan_step_success"] = plan_ssr.to_dict()

    neighbour_scores = [
        _verdict_score(verdict, f"repetition of step {k}", result)
        for k, verdict in enumerate(judge.verdicts(asks.repetitions), start=2)
    ]
    rep = md.repetitiveness(neighbour_scores, n, tau=params.tau)
    result.values["repetitiveness"] = rep.value
    result.details["repetitiveness"] = rep.to_dict()

    planned_actions = [step.planned_action or extract_planned_action(step.reasoning) for step in steps]
    acc = md.element_accuracy(planned_actions, [step.action for step in steps])
    result.values["element_accuracy"] = acc.value
    result.details["element_accuracy"] = acc.to_dict()

    requirement_scores = {
        requirement: _verdict_score(verdict, f"requirement {requirement!r}", result)
        for requirement, verdict in zip(unit.asked_requirements, judge.verdicts(asks.requirements))
    }
    partial = md.partial_success(task.requirements, answer, requirement_scores, tau=params.tau)
    result.values["partial_success"] = partial.value
    result.details["partial_success"] = partial.to_dict()

    grounded_score = relevant_score = None
    if asks.answer_quality:
        grounded, relevant = judge.verdicts(asks.answer_quality)
        grounded_score = _verdict_score(grounded, "groundedness", result)
        relevant_score = _verdict_score(relevant, "relevance", result)
    quality = md.answer_quality(answer, grounded_score, relevant_score, tau=params.tau)
    result.values.update(grounded=quality.grounded, relevant=quality.relevant, correct=quality.correct)
    result.details["answer_quality"] = quality.to_dict()

    answer_scores = {
        check.reference: _verdict_score(verdict, f"{check.approach} {check.reference!r}", result)
        for check, verdict in zip(unit.success_questions, judge.verdicts(asks.answer_matches))
    }
    check = md.task_success(
        task.eval_config, final_answer=answer, last_url=unit.last_url, answer_scores=answer_scores, tau=params.tau,
    )
    success = md.task_success(
        task.eval_config, final_answer=answer, last_url=unit.last_url, harness_success=trajectory.success,
        answer_scores=answer_scores, tau=params.tau,
    )
    result.values.update(
        success=success.value, success_source=success.source if success.value is not None else "",
        check_success=check.value, check_source=check.source if check.value is not None else "",
    )
    result.details["success"] = check.to_dict()

    if task.key_nodes:
        semantic_scores = {
            question: _verdict_score(verdict, f"key node {question.kind} {question.reference!r}", result)
            for question, verdict in zip(unit.key_node_questions, judge.verdicts(asks.key_nodes))
        }
        completion = md.key_node_completion(task.key_nodes, unit.visited, semantic_scores, tau=params.tau)
        result.values["key_node_completion"] = completion.value
        result.details["key_node_completion"] = completion.to_dict()
        if success.value is None and completion.all_satisfied is not None:
            # WebCanvas's task success: every key node satisfied.
            result.values.update(success=completion.all_satisfied, success_source=KEY_NODES)
    return result


def _step_matrix(judge, question, gold_count: int, agent_count: int, result: Scoring) -> md.ScoreMatrix:
    """The step scores of a whole-trajectory question; no question when either side is empty."""
    if question is None:
        return md.ScoreMatrix(scores=tuple(() for _ in range(gold_count)), agent_steps=agent_count)
    scores = judge.step_scores_of(question)
    result.decision_ids.update(scores.decision_ids)
    return md.ScoreMatrix(scores=tuple(tuple(row) for row in _matrix(scores)), agent_steps=agent_count)
