"""Judging whole trajectories for success with the outcome judge (`judges.outcome_questions`), its verdicts
stored as one more verdict source beside the published judges and the human graders.

A run is judged in chunks of trajectories: the chunk's key points, then its screenshots, then
its verdicts are each asked as one batch of the Judge, so cached decisions are reused (judging
a run again makes no request) and requests run in parallel under the judge's rate limit. A
question that failed leaves its trajectory without a new verdict (an earlier one stays) and is
reported; the next pass asks it again.
"""

import base64
from dataclasses import dataclass, field
from decimal import Decimal

from django.db import transaction
from django.db.models import Prefetch
from PIL import Image, UnidentifiedImageError

from infrastructure.jobs import check_job_limit, enqueue, run_job

from trajectories.models import AgentRun, Step, Trajectory, Verdict, VerdictKind, VerdictSource

from . import outcome_estimate, outcome_questions
from .backends.base import EndpointUnreachable
from .endpoint_checks import check_choosable
from .models import JudgeBackend, JudgeConfig, JudgeDecision, OutcomeJob
from .outcome_questions import OutcomeOptions
from .selectors import DecisionUsage, require_openai_backend
from .services import Judge, get_judge

CHUNK = 10
ESTIMATE_CHUNK = 200
ACTION_CHARS = 500


@dataclass
class OutcomeReport(DecisionUsage):
    total: int = 0
    judged: int = 0
    passed: int = 0
    errors: list[dict] = field(default_factory=list)  # {"task": task id, "error": why it has no verdict}


def check_outcome_judge(config: JudgeConfig) -> OutcomeOptions:
    """The options of a config fit to judge outcomes; ValueError saying why not."""
    require_openai_backend(config, "the outcome judge")
    return OutcomeOptions.of(config.options or {})


def outcome_source(config: JudgeConfig, options: OutcomeOptions) -> VerdictSource:
    source, _ = VerdictSource.objects.update_or_create(
        kind=VerdictKind.LLM_JUDGE, name=outcome_questions.SOURCE_NAME, model=config.model,
        defaults={"threshold": options.threshold},
    )
    return source


def judge_outcomes(run: AgentRun, config: JudgeConfig, *, progress=None) -> OutcomeReport:
    """Judge every trajectory of the run; `progress(report)` is called after each chunk."""
    options = check_outcome_judge(config)
    judge = get_judge(config)
    source = outcome_source(config, options)
    ids = list(run.trajectories.order_by("pk").values_list("pk", flat=True))
    report = OutcomeReport(total=len(ids))
    for start in range(0, len(ids), CHUNK):
        _judge_chunk(judge, run, source, options, ids[start:start + CHUNK], report, f"judge {config.name}")
        if progress:
            progress(report)
    return report


@transaction.atomic
def create_outcome_job(run: AgentRun, config: JudgeConfig, *, created_by=None, quiet: bool = False) -> OutcomeJob:
    """The job, stored and sent to the workers once committed (`quiet`: as `infrastructure.jobs.enqueue`);
    ValueError when the judge cannot judge outcomes or is not choosable (`check_choosable`)."""
    check_outcome_judge(config)
    check_choosable(config)
    job = OutcomeJob.objects.create(run=run, judge_config=config, total=run.trajectories.count(),
                                    created_by=created_by)
    enqueue(job, quiet=quiet)
    return job


def outcome_jobs_of_evaluation(runs, config: JudgeConfig, *, created_by=None) -> list[OutcomeJob]:
    """An evaluation with a judge whose option `judge_outcomes` is on also judges its runs' outcomes,
    each run in a job of its own beside the evaluation."""
    if not (config.options or {}).get("judge_outcomes"):
        return []
    return [create_outcome_job(run, config, created_by=created_by, quiet=True) for run in runs]


def outcome_judges():
    """The judge configurations that can run the outcome judge: those of the `openai` backend."""
    return JudgeConfig.objects.filter(backend=JudgeBackend.OPENAI).order_by("name")


NO_OUTCOME_JUDGE = ("no judge configuration can run the outcome judge: it needs an OpenAI-compatible one "
                    "(backend openai), which an admin adds in /admin/ (Judge configs) or with POST /api/judge-configs/")


def start_outcome_job(run: AgentRun, config: JudgeConfig, *, user) -> OutcomeJob:
    """Start a job for a user (a page, the API): within the account's job limit, and not beside an
    unfinished job of the same run and judge, which would ask the same questions at the same time.
    ValueError saying why not."""
    with transaction.atomic():
        list(AgentRun.objects.select_for_update().filter(pk=run.pk).values_list("pk"))  # one start at a time
        running = OutcomeJob.objects.filter(run=run, judge_config=config,
                                            status__in=OutcomeJob.unfinished_statuses).first()
        if running is not None:
            raise ValueError(f"outcome judging #{running.pk} of run {run.name} with judge {config.name} is still "
                             f"{running.status}: follow it rather than start another")
        if not run.trajectories.exists():
            raise ValueError(f"run {run.name} holds no trajectories: there is nothing to judge")
        check_job_limit(OutcomeJob, user)
        return create_outcome_job(run, config, created_by=user)


@dataclass(frozen=True)
class OutcomeJobEstimate:
    """What judging a run will ask and cost, told before it starts (`judges.outcome_estimate`)."""

    run: AgentRun
    config: JudgeConfig
    trajectories: int
    requests: outcome_estimate.Estimate
    cost: Decimal | None  # None: the model has no price in the price table
    unreadable: list[dict]  # {"task", "error"}: trajectories that will get no verdict
    basis: str  # how the estimate is made, in words


def estimate_outcome_job(run: AgentRun, config: JudgeConfig) -> OutcomeJobEstimate:
    """Requests (exact, from the decisions stored now), tokens and cost (estimated) of judging the
    run with the config; ValueError when the config cannot judge outcomes."""
    options = check_outcome_judge(config)
    judge = get_judge(config)
    ids = list(run.trajectories.order_by("pk").values_list("pk", flat=True))
    planned, unreadable = [], []
    for start in range(0, len(ids), ESTIMATE_CHUNK):
        chunk, failed = _planned_chunk(judge, options, ids[start:start + ESTIMATE_CHUNK])
        planned += chunk
        unreadable += failed
    price = judge.backend.options["prices"].get(config.model)
    image_rule = (price or {}).get("image_tokens")
    requests = outcome_estimate.estimate(planned, options, image_rule)
    basis = outcome_estimate.estimate_basis(options, image_rule)
    if price:
        cost = judge.backend.cost({"prompt_tokens": requests.prompt_tokens,
                                   "completion_tokens": requests.completion_tokens})
        basis += (f" Priced at ${price['input']} per million prompt tokens and ${price['output']} per million answer "
                  f"tokens ({config.model} in the price table, JUDGE_PRICES).")
    else:
        cost = None
        basis += (f" {config.model} has no price in the price table (JUDGE_PRICES): its requests are recorded "
                  "at no cost.")
    return OutcomeJobEstimate(run, config, len(ids), requests, cost, unreadable, basis)


def _planned_chunk(judge: Judge, options: OutcomeOptions,
                   ids: list[int]) -> tuple[list[outcome_estimate.PlannedTrajectory], list[dict]]:
    """The chunk's trajectories with what the cache decides of them, and those whose screenshots
    cannot be read (a pass fails them before asking anything)."""
    seen = judge.backend.sees_screenshots
    cases = [_Case(trajectory, [outcome_questions.Shot(step.index, step.screenshot.sha256, "")
                                for step in _distinct_screenshots(trajectory, seen)])
             for trajectory in _chunk_trajectories(ids)]
    intents = list({case.trajectory.task.intent for case in cases})
    decided = dict(zip(intents, judge.answered([outcome_questions.key_points_question(intent) for intent in intents])))
    for case in cases:
        decision = decided[case.trajectory.task.intent]
        case.key_points = decision.output["key_points"] if decision else []
    known = [case for case in cases if decided[case.trajectory.task.intent]]
    asked = {(case.trajectory.task.intent, shot.sha256): outcome_questions.screenshot_question(
        case.trajectory.task.intent, case.key_points, shot) for case in known for shot in case.shots}
    relevance = {key: outcome_questions.relevance_of(decision.effective_score)
                 for key, decision in zip(asked, judge.answered(list(asked.values()))) if decision}
    for case in known:
        case.scored = [(shot, relevance[(case.trajectory.task.intent, shot.sha256)], "") for shot in case.shots
                       if (case.trajectory.task.intent, shot.sha256) in relevance]
    whole = [case for case in known if len(case.scored) == len(case.shots)]
    verdicts = judge.answered([_verdict_question(case, options) for case in whole])
    verdict_decided = {case.trajectory.pk for case, decision in zip(whole, verdicts) if decision}

    planned, unreadable = [], []
    for case in cases:
        trajectory = case.trajectory
        if trajectory.pk in verdict_decided:
            continue  # asks nothing
        sizes, error = _image_sizes(trajectory, seen)
        if error:
            unreadable.append({"task": trajectory.task.task_id, "error": error})
            continue
        intent = trajectory.task.intent
        planned.append(outcome_estimate.PlannedTrajectory(
            intent=intent, answer=trajectory.final_answer,
            actions=tuple(_action(step) for step in trajectory.steps.all()),
            shots=tuple(outcome_estimate.PlannedShot(shot.step, shot.sha256, sizes[shot.sha256],
                                                     relevance.get((intent, shot.sha256))) for shot in case.shots),
            key_points=tuple(case.key_points) if decided[intent] else None,
        ))
    return planned, unreadable


def _image_sizes(trajectory: Trajectory, seen: bool) -> tuple[dict[str, tuple[int, int] | None], str]:
    """Each distinct screenshot's size in pixels (None where its header is not an image's), or why
    one cannot be read, as a pass says it."""
    sizes = {}
    for step in _distinct_screenshots(trajectory, seen):
        try:
            with step.screenshot.image.open("rb") as image:
                sizes[step.screenshot.sha256] = _size(image)
        except OSError as error:
            return {}, f"screenshot of step {step.index} could not be read: {error}"
    return sizes, ""


def _size(image) -> tuple[int, int] | None:
    """Read from the header alone; None for what the imaging library does not take for an image."""
    try:
        return Image.open(image).size
    except (UnidentifiedImageError, Image.DecompressionBombError, ValueError):
        return None


def run_outcome_job(job_id: int) -> OutcomeJob:
    """Run a pending or interrupted job (`infrastructure.jobs.run_job`)."""
    return run_job(OutcomeJob, job_id,
                   lambda job, progress: judge_outcomes(job.run, job.judge_config, progress=progress),
                   progress_fields=("judged", "passed", "errors"),
                   result_fields=("total", "judged", "passed", "errors", "calls", "cost"),
                   related=("run", "judge_config"), self_explaining=(EndpointUnreachable,))


@dataclass
class _Case:
    """One trajectory on its way through the three questions."""

    trajectory: Trajectory
    shots: list[outcome_questions.Shot]
    key_points: list[str] = field(default_factory=list)
    scored: list[tuple[outcome_questions.Shot, int, str]] = field(default_factory=list)
    error: str = ""


def _chunk_trajectories(ids: list[int]):
    steps = Step.objects.select_related("screenshot").only(
        "trajectory_id", "index", "action", "element_label", "screenshot__sha256", "screenshot__image",
        "screenshot__content_type").order_by("index")
    return (Trajectory.objects.filter(pk__in=ids).select_related("task")
            .prefetch_related(Prefetch("steps", queryset=steps)).order_by("pk"))


def _judge_chunk(judge: Judge, run: AgentRun, source: VerdictSource, options: OutcomeOptions, ids: list[int],
                 report: OutcomeReport, given_by: str) -> None:
    cases = [_case(trajectory, judge.backend.sees_screenshots) for trajectory in _chunk_trajectories(ids)]
    used: set[int] = set()

    intents = {case.trajectory.task.intent for case in cases if not case.error}
    asked = {intent: outcome_questions.key_points_question(intent) for intent in intents}
    answered = dict(zip(asked, judge.verdicts(list(asked.values()))))
    used |= {verdict.decision_id for verdict in answered.values()}
    outputs = JudgeDecision.objects.in_bulk([v.decision_id for v in answered.values() if v.score is not None])
    for case in _open(cases):
        verdict = answered[case.trajectory.task.intent]
        if verdict.error:
            case.error = f"key points: {verdict.error}"
        else:
            case.key_points = outputs[verdict.decision_id].output["key_points"]

    pending = [(case, shot, outcome_questions.screenshot_question(case.trajectory.task.intent, case.key_points, shot))
               for case in _open(cases) for shot in case.shots]
    for (case, shot, _), verdict in zip(pending, judge.verdicts([question for *_, question in pending])):
        used.add(verdict.decision_id)
        if verdict.error:
            case.error = case.error or f"screenshot of step {shot.step}: {verdict.error}"
        else:
            case.scored.append((shot, outcome_questions.relevance_of(verdict.score), verdict.rationale))

    judged = [(case, _verdict_question(case, options)) for case in _open(cases)]
    verdicts = judge.verdicts([question for _, question in judged])
    used |= {verdict.decision_id for verdict in verdicts}
    rows = []
    for (case, question), verdict in zip(judged, verdicts):
        if verdict.error:
            case.error = f"verdict: {verdict.error}"
            continue
        trajectory = case.trajectory
        rows.append(Verdict(run=run, task=trajectory.task, trajectory=trajectory, source=source,
                            success=verdict.score >= 0.5, explanation=_explanation(case, question, verdict, options),
                            source_name=given_by[:500]))
    with transaction.atomic():
        Verdict.objects.filter(run=run, source=source, task__in=[row.task for row in rows]).delete()
        Verdict.objects.bulk_create(rows)
    report.judged += len(rows)
    report.passed += sum(row.success for row in rows)
    report.errors += [{"task": case.trajectory.task.task_id, "error": case.error} for case in cases if case.error]
    report.add_usage(used - {None})


def _open(cases: list[_Case]) -> list[_Case]:
    return [case for case in cases if not case.error]


def _distinct_screenshots(trajectory: Trajectory, seen: bool) -> list[Step]:
    """The steps that show each distinct screenshot first; none for a judge that reads no images
    (option `screenshots` false), which then judges on the text alone."""
    steps, seen_shots = [], set()
    if not seen:
        return steps
    for step in trajectory.steps.all():
        if step.screenshot is not None and step.screenshot.sha256 not in seen_shots:
            seen_shots.add(step.screenshot.sha256)
            steps.append(step)
    return steps


def _case(trajectory: Trajectory, seen: bool) -> _Case:
    """The trajectory with each distinct screenshot at the first step that shows it."""
    shots = []
    for step in _distinct_screenshots(trajectory, seen):
        screenshot = step.screenshot
        try:
            with screenshot.image.open("rb") as image:
                data = base64.b64encode(image.read()).decode("ascii")
        except OSError as error:
            return _Case(trajectory, [], error=f"screenshot of step {step.index} could not be read: {error}")
        shots.append(outcome_questions.Shot(step.index, screenshot.sha256,
                                            f"data:{screenshot.content_type};base64,{data}"))
    return _Case(trajectory, shots)


def _action(step: Step) -> str:
    text = step.action.strip()
    label = step.element_label.strip()
    if label and label not in text:
        text = f"{text} ({label})"
    return text if len(text) <= ACTION_CHARS else f"{text[:ACTION_CHARS]} [...]"


def _verdict_question(case: _Case, options: OutcomeOptions):
    trajectory = case.trajectory
    shown = outcome_questions.top_screenshots([(shot, relevance) for shot, relevance, _ in case.scored],
                                    options.threshold, options.max_screenshots)
    actions = [_action(step) for step in trajectory.steps.all()]
    return outcome_questions.verdict_question(trajectory.task.intent, case.key_points, trajectory.final_answer,
                                              actions, shown)


def _explanation(case: _Case, question, verdict, options: OutcomeOptions) -> str:
    """Key points, each screenshot's relevance (marking those shown), then the verdict's reasoning."""
    lines = ["Key points:", outcome_questions.numbered(case.key_points), ""]
    if case.scored:
        shown = {shot["step"] for shot in question.inputs["screenshots"]}
        lines.append(f"Screenshots, relevance to the key points from 1 to 5 (shown to the judge: "
                     f"{options.threshold} or above, at most {options.max_screenshots}):")
        lines += [f"- step {shot.step}: {relevance}{' (shown)' if shot.step in shown else ''} {reasoning}".rstrip()
                  for shot, relevance, reasoning in case.scored]
    else:
        lines.append("No screenshots: judged on the task, the actions and the final answer alone.")
    lines += ["", f"Verdict: {'success' if verdict.score >= 0.5 else 'failure'}", verdict.rationale]
    return "\n".join(lines).strip()
