"""Scoring of one trajectory against one gold trajectory: ask the judge, apply the metrics.

The judge is asked only what the metrics need, once per question kind per trajectory; the
pure metric functions of `metrics.definitions` turn the answers into numbers; everything is
returned as plain values for the evaluation service to store. The questions are built first
(`unit_inputs`), so that a chunk of units can have all of them settled at once.
"""

import base64
import hashlib
import json
from dataclasses import dataclass, field, replace

from judges import elements
from judges import questions as q
from judges.parsing import parse_node
from judges.selectors import decision_outputs, judge_step_from_agent, judge_step_from_gold
from judges.steps import JudgeStep
from metrics import definitions as md
from metrics.registry import SCORE_REGISTRY
from trajectories.formats.actions import extract_planned_action

# Columns of TrajectoryScore that a scoring fills, in the order METRICS.md gives them.
SCORE_FIELDS = tuple(field.name for field in SCORE_REGISTRY)


KEY_NODES = "key_nodes"


class JudgeFailed(RuntimeError):
    """A judge question failed after its retries: the metrics that need it are null with its error."""

    def __init__(self, message: str, decision_ids=()):
        super().__init__(message)
        self.decision_ids = frozenset(decision_id for decision_id in decision_ids if decision_id is not None)


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


NULL_REASONS = "null_reasons"
NO_GOLD = "the task has no gold trajectory to compare with"
NO_PLAN = "not applicable: the agent stated no plan"
NO_KEY_NODES = "not applicable: the task has no key-node checkpoints"


@dataclass
class Scoring:
    values: dict = field(default_factory=dict)
    details: dict = field(default_factory=dict)
    decision_ids: set[int] = field(default_factory=set)
    # The judge's failed decisions this scoring needed (those metrics are null), and what each said.
    failed_questions: dict[int, str] = field(default_factory=dict)

    def failed(self, names: tuple[str, ...], failure: JudgeFailed) -> None:
        """The metrics `names` need a question that failed: null, with its error as their reason."""
        for name in names:
            self.values[name] = None
            self.details.pop(name, None)
            self.details.setdefault(NULL_REASONS, {})[name] = f"the judge's question failed: {failure}"
        self.failed_questions.update(dict.fromkeys(failure.decision_ids, str(failure)))

    def null(self, name: str, reason: str) -> None:
        """Why the score field `name` is null; kept in `details["null_reasons"]` while it is."""
        if reason:
            self.details.setdefault(NULL_REASONS, {})[name] = reason

    def record(self, name: str, metric) -> None:
        """A metric's result under `name`: its value, its details, and why it is null if it is."""
        self.values[name] = metric.value
        self.details[name] = metric.to_dict()
        self.null(name, metric.null_reason)

    def settle_null_reasons(self) -> None:
        """Keep the reasons of the fields that are null, in SCORE_FIELDS order; none is left empty."""
        reasons = self.details.pop(NULL_REASONS, {})
        kept = {name: reasons[name] for name in SCORE_FIELDS if name in reasons and self.values.get(name) is None}
        if kept:
            self.details[NULL_REASONS] = kept


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
        raise JudgeFailed(f"step matching: {step_scores.error}", step_scores.decision_ids)
    return step_scores.matrix


def _verdict_score(verdict, what: str, result: Scoring) -> float:
    """The verdict's score, its decision recorded as one the scores used."""
    if verdict.decision_id is not None:
        result.decision_ids.add(verdict.decision_id)
    if verdict.score is None:
        raise JudgeFailed(f"{what}: {verdict.error or 'no answer'}", [verdict.decision_id])
    return verdict.score


# The score fields each group of metrics fills: null together when a question they need failed.
STEP_FIELDS = ("step_success", "recovery", "matched_steps", "deviations", "recoveries", "mean_recovery_cost")
ANSWER_QUALITY_FIELDS = ("grounded", "relevant", "correct")


@dataclass(frozen=True)
class UnitQuestions:
    """The judge questions of one unit, by the metric that asks them; None or [] when not asked.

    `repetitions` are the questions of the neighbouring steps the structured rule does not decide;
    `elements` asks, by step number, what a step acting at a point acted on (a judge that sees
    screenshots only). When there are such questions, step matching waits for their answers
    (`step_match` is None and is asked while scoring, with the elements they name)."""

    step_match: q.Question | None = None
    plan_match: q.Question | None = None
    repetitions: list[q.Question] = field(default_factory=list)
    requirements: list[q.Question] = field(default_factory=list)
    answer_quality: list[q.Question] = field(default_factory=list)
    answer_matches: list[q.Question] = field(default_factory=list)
    key_nodes: list[q.Question] = field(default_factory=list)
    elements: dict[int, q.Question] = field(default_factory=dict)

    def all(self) -> list[q.Question]:
        matches = [question for question in (self.step_match, self.plan_match) if question is not None]
        return (matches + self.repetitions + self.requirements + self.answer_quality + self.answer_matches
                + self.key_nodes + list(self.elements.values()))


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
    # Per neighbouring pair, whether the later step repeats the earlier by the structured rule (None: ask the judge).
    repeats_by_rule: tuple[bool | None, ...] = ()
    planned_actions: tuple[str | None, ...] = ()
    observed: bool = True
    sees_screenshots: bool = False


def unit_inputs(trajectory, steps, gold, gold_steps, *, sees_screenshots: bool = False) -> UnitInputs:
    """Raises ValueError when the task's evaluation config cannot be read. `sees_screenshots`: the
    judge answers questions about screenshots (`judges.elements`)."""
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
    acted = [md.ActedStep(step.parts, step.url) for step in steps]
    repeats_by_rule = tuple(md.same_action(previous, step) for previous, step in zip(acted, acted[1:]))
    repetitions = q.repetitions(agent) if None in repeats_by_rule else []
    planned_actions = tuple(step.planned_action or extract_planned_action(step.reasoning) for step in steps)
    elements = _element_questions(steps, planned_actions) if sees_screenshots else {}
    observations = [step.observation for step in steps]
    observed = any(text.strip() for text in observations)
    shots = _last_screenshots(steps) if sees_screenshots and not observed and md.has_final_answer(answer) else []
    if not md.has_final_answer(answer):
        answer_quality = []
    elif observed:
        answer_quality = q.answer_quality(task.intent, answer, observations)
    elif shots:
        answer_quality, observed = q.answer_quality_on_screenshots(task.intent, answer, shots), True
    else:
        answer_quality = [q.groundedness("relevant", task.intent, answer, observations)]
    questions = UnitQuestions(
        step_match=q.trajectory_match(reference, agent) if reference and agent and not elements else None,
        plan_match=q.trajectory_match(reference, planned) if reference and planned else None,
        repetitions=[question for question, same in zip(repetitions, repeats_by_rule) if same is None],
        requirements=q.requirements(task.intent, answer, list(asked_requirements)),
        answer_quality=answer_quality,
        answer_matches=[q.fuzzy_answer(task.intent, answer or "", check.reference) for check in success_questions],
        key_nodes=[q.fuzzy_answer(task.intent, question.candidate, question.reference)
                   for question in key_node_questions],
        elements=elements,
    )
    return UnitInputs(trajectory, steps, gold, gold_steps, last_url, asked_requirements, success_questions,
                      questions, visited, key_node_questions, repeats_by_rule, planned_actions, observed,
                      sees_screenshots)


# A trajectory without page text is judged for groundedness on its last screenshots, this many at most.
GROUNDING_SCREENSHOTS = 3


def _last_screenshots(steps) -> list[tuple[int, str, str]]:
    """(step, sha256, data URI) of the trajectory's last distinct screenshots that can be read, in step order."""
    shots, seen = [], set()
    for step in reversed(steps):
        if len(shots) == GROUNDING_SCREENSHOTS:
            break
        if step.screenshot_id is None or step.screenshot_id in seen:
            continue
        seen.add(step.screenshot_id)
        screenshot = step.screenshot
        try:
            with screenshot.image.open("rb") as image:
                data = base64.b64encode(image.read()).decode("ascii")
        except OSError:
            continue
        shots.append((step.index, screenshot.sha256, f"data:{screenshot.content_type};base64,{data}"))
    return shots[::-1]


def _element_questions(steps, planned_actions) -> dict[int, q.Question]:
    """What is at the point of each step acting at a point, for the steps whose screenshot can be read."""
    wanted = md.points_to_resolve(planned_actions, [step.action for step in steps], [step.parts for step in steps])
    asked = {}
    for number in wanted:
        step = steps[number - 1]
        if step.screenshot_id is None:
            continue
        screenshot = step.screenshot
        try:
            with screenshot.image.open("rb") as image:
                crop = elements.crop_around(image.read(), step.point_x, step.point_y)
        except (OSError, elements.UnreadableScreenshot):
            continue
        asked[number] = elements.element_question(step.reasoning, step.action, step.point_x, step.point_y,
                                                  screenshot.sha256, crop)
    return asked


def score_trajectory(unit: UnitInputs, judge, params: Parameters) -> Scoring:
    """Every metric of METRICS.md for one trajectory, from the judge's verdicts on its questions;
    a metric left null says why in `details["null_reasons"]`. A judge question that failed leaves
    the metrics that need it null with its error, and is counted in `failed_questions`."""
    result = Scoring()
    _score_outcome(unit, result)
    element_failure = None
    try:
        point_scores, resolved = _elements_at_points(judge, unit.questions.elements, result, unit.sees_screenshots)
    except JudgeFailed as failure:
        point_scores, resolved, element_failure = {}, {}, failure
    _score_gold_paths(unit, judge, params, resolved, element_failure, result)
    _score_repetitiveness(unit, judge, params, result)
    if element_failure:
        result.failed(("element_accuracy",), element_failure)
    else:
        steps = unit.steps
        result.record("element_accuracy", md.element_accuracy(
            list(unit.planned_actions), [step.action for step in steps], [step.parts for step in steps],
            point_scores, tau=params.tau))
    _score_partial_success(unit, judge, params, result)
    _score_answer_quality(unit, judge, params, result)
    success = _score_success(unit, judge, params, result)
    _score_key_nodes(unit, judge, params, success, result)
    result.settle_null_reasons()
    return result


def _score_outcome(unit: UnitInputs, result: Scoring) -> None:
    """The outcome category and the lengths n and m, which need no judge."""
    trajectory, n = unit.trajectory, len(unit.steps)
    gold_steps = len(unit.gold_steps) if unit.gold else None
    outcome = md.outcome_category(trajectory.outcome_status, trajectory.outcome_reason or None, n, gold_steps)
    result.values.update(outcome_status=outcome.status, outcome_reason=outcome.reason, agent_steps=n,
                         gold_steps=gold_steps)
    result.details["outcome"] = outcome.to_dict()


def _score_gold_paths(unit: UnitInputs, judge, params: Parameters, resolved: dict[int, str],
                      element_failure: JudgeFailed | None, result: Scoring) -> None:
    """Step success and recovery of the steps, and step success of the stated plan, against the gold steps."""
    trajectory, asks = unit.trajectory, unit.questions
    if unit.gold is None:
        for name in ("step_success", "recovery", "plan_step_success"):
            result.null(name, NO_GOLD)
        return
    try:
        if element_failure and asks.step_match is None:
            raise element_failure  # the steps are matched with the elements the judge names
        _score_steps(unit, judge, params, resolved, result)
    except JudgeFailed as failure:
        result.failed(STEP_FIELDS, failure)
    if not trajectory.plan:
        result.null("plan_step_success", NO_PLAN)
        return
    try:
        plan_matrix = _step_matrix(judge, asks.plan_match, len(unit.gold_steps), len(trajectory.plan), result)
        result.record("plan_step_success", md.step_success(plan_matrix, tau=params.tau, ordered=params.ordered))
    except JudgeFailed as failure:
        result.failed(("plan_step_success",), failure)


def _score_repetitiveness(unit: UnitInputs, judge, params: Parameters, result: Scoring) -> None:
    """Structured steps repeat by rule; the judge is asked only about the others."""
    try:
        judged = iter(judge.verdicts(unit.questions.repetitions))
        neighbours = [same if same is not None else _verdict_score(next(judged), f"repetition of step {k}", result)
                      for k, same in enumerate(unit.repeats_by_rule, start=2)]
        result.record("repetitiveness", md.repetitiveness(neighbours, len(unit.steps), tau=params.tau))
    except JudgeFailed as failure:
        result.failed(("repetitiveness",), failure)


def _score_partial_success(unit: UnitInputs, judge, params: Parameters, result: Scoring) -> None:
    task = unit.trajectory.task
    try:
        requirement_scores = {
            requirement: _verdict_score(verdict, f"requirement {requirement!r}", result)
            for requirement, verdict in zip(unit.asked_requirements, judge.verdicts(unit.questions.requirements))
        }
        result.record("partial_success", md.partial_success(
            task.requirements, unit.trajectory.final_answer, requirement_scores, tau=params.tau))
    except JudgeFailed as failure:
        result.failed(("partial_success",), failure)


def _score_answer_quality(unit: UnitInputs, judge, params: Parameters, result: Scoring) -> None:
    """Grounded, relevant and correct: the final answer read against the observations and the task."""
    asks = unit.questions
    try:
        grounded_score = relevant_score = None
        if asks.answer_quality:
            *grounded, relevant = judge.verdicts(asks.answer_quality)
            grounded_score = _verdict_score(grounded[0], "groundedness", result) if grounded else None
            relevant_score = _verdict_score(relevant, "relevance", result)
        quality = md.answer_quality(unit.trajectory.final_answer, grounded_score, relevant_score, tau=params.tau,
                                    observed=unit.observed)
        result.values.update(grounded=quality.grounded, relevant=quality.relevant, correct=quality.correct)
        result.details["answer_quality"] = quality.to_dict()
        for name, reason in quality.null_reasons.items():
            result.null(name, reason)
    except JudgeFailed as failure:
        result.failed(ANSWER_QUALITY_FIELDS, failure)


def _score_key_nodes(unit: UnitInputs, judge, params: Parameters, success: bool | None, result: Scoring) -> None:
    """Key-node completion; with no other verdict on success, every key node reached is success (WebCanvas)."""
    task = unit.trajectory.task
    if not task.key_nodes:
        result.null("key_node_completion", NO_KEY_NODES)
        return
    try:
        semantic_scores = {
            question: _verdict_score(verdict, f"key node {question.kind} {question.reference!r}", result)
            for question, verdict in zip(unit.key_node_questions, judge.verdicts(unit.questions.key_nodes))
        }
        completion = md.key_node_completion(task.key_nodes, unit.visited, semantic_scores, tau=params.tau)
        result.values["key_node_completion"] = completion.value
        result.details["key_node_completion"] = completion.to_dict()
        if success is None and completion.all_satisfied is not None:
            result.values.update(success=completion.all_satisfied, success_source=KEY_NODES)
    except JudgeFailed as failure:
        result.failed(("key_node_completion",), failure)


def _score_steps(unit: UnitInputs, judge, params: Parameters, resolved: dict[int, str], result: Scoring) -> None:
    """Step success and recovery against the gold steps."""
    step_match, steps = unit.questions.step_match, unit.steps
    if step_match is None and resolved and unit.gold_steps:
        step_match = q.trajectory_match([judge_step_from_gold(step) for step in unit.gold_steps],
                                        [_with_element(step, resolved.get(k)) for k, step in
                                         enumerate(steps, start=1)])
    matrix = _step_matrix(judge, step_match, len(unit.gold_steps), len(steps), result)
    ssr = md.step_success(matrix, tau=params.tau, ordered=params.ordered)
    rec = md.recovery(matrix, tau=params.tau, window=params.window)
    result.values.update(
        step_success=ssr.value, matched_steps=len(ssr.matched), recovery=rec.value,
        deviations=rec.deviations, recoveries=rec.recoveries, mean_recovery_cost=rec.mean_recovery_cost,
    )
    result.details.update(step_success=ssr.to_dict(), recovery=rec.to_dict())
    result.null("step_success", ssr.null_reason)
    result.null("recovery", rec.null_reason)


def _score_success(unit: UnitInputs, judge, params: Parameters, result: Scoring) -> bool | None:
    """Task success (the harness's verdict first) and the offline check's; the check is null when
    a judge question on the answer failed, and success then too unless the harness has spoken."""
    trajectory, task, answer = unit.trajectory, unit.trajectory.task, unit.trajectory.final_answer
    try:
        answer_scores = {
            check.reference: _verdict_score(verdict, f"{check.approach} {check.reference!r}", result)
            for check, verdict in zip(unit.success_questions, judge.verdicts(unit.questions.answer_matches))
        }
    except JudgeFailed as failure:
        result.failed(("check_success",), failure)
        if trajectory.success is None:
            result.failed(("success",), failure)
            return None
        success = md.task_success(task.eval_config, final_answer=answer, harness_success=trajectory.success)
        result.values.update(success=success.value, success_source=success.source)
        return success.value
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
    result.null("check_success", check.null_reason)
    if success.value is None:
        result.null("success", f"no verdict from the harness, and {check.null_reason}")
    return success.value


def _elements_at_points(judge, questions: dict[int, q.Question], result: Scoring, sees_screenshots: bool
                        ) -> tuple[dict[int, float] | None, dict[int, str]]:
    """The judge's answers on the elements at points: its score that each is the one meant (None for a
    judge that sees no screenshots), and the element it named, by step number."""
    if not questions:
        return ({} if sees_screenshots else None), {}
    verdicts = dict(zip(questions, judge.verdicts(list(questions.values()))))
    scores = {step: _verdict_score(verdict, f"element at the point of step {step}", result)
              for step, verdict in verdicts.items()}
    outputs = decision_outputs([verdict.decision_id for verdict in verdicts.values()])
    named = {step: outputs.get(verdict.decision_id, {}).get("element", "") for step, verdict in verdicts.items()}
    return scores, {step: element for step, element in named.items() if element}


def _with_element(step, element: str | None) -> JudgeStep:
    """The step as the judge compares it, with the element a judge named from its screenshot."""
    judge_step = judge_step_from_agent(step)
    if not element:
        return judge_step
    role, name = parse_node(element)
    return replace(judge_step, element_role=role, element_name=name)


def _step_matrix(judge, question, gold_count: int, agent_count: int, result: Scoring) -> md.ScoreMatrix:
    """The step scores of a whole-trajectory question; no question when either side is empty."""
    if question is None:
        return md.ScoreMatrix(scores=tuple(() for _ in range(gold_count)), agent_steps=agent_count)
    scores = judge.step_scores_of(question)
    result.decision_ids.update(scores.decision_ids)
    return md.ScoreMatrix(scores=tuple(tuple(row) for row in _matrix(scores)), agent_steps=agent_count)
