"""LLM attribution sources: one of the Who&When methods (`failures.llm_methods`) over a run's failed
trajectories (harness verdict), asked of an OpenAI-compatible judge, stored as the attributions of
the source "LLM <method>" with the judge's model, beside the offline ones.

Every question goes through the judge's decision store (`judges.services.Judge`): an answer once
given is never asked again (attributing a run again makes no request), requests share the judge's
rate limit and are costed from its price table. A human verdict on a step-by-step or binary-search
question wins over the model's, as everywhere. A trajectory whose walk got no usable answer keeps
its earlier attribution by the source and is reported; one where step by step judged no step
decisive is left without one.
"""

import json
from dataclasses import dataclass, field

from django.db import transaction

from infrastructure.jobs import check_job_limit, enqueue, run_job
from judges import attribution
from judges.backends.base import EndpointUnreachable
from judges.endpoint_checks import check_choosable
from judges.models import JudgeConfig, JudgeDecision
from judges.selectors import DecisionUsage, require_openai_backend
from judges.services import Judge, get_judge
from trajectories.models import AgentRun, ResultOrigin, Step, Trajectory

from ..llm_methods import METHODS, Case, Unanswered, attribute
from ..models import AttributionJob, AttributionSource, FailureAttribution, SourceKind
from ..selectors import taxonomy

CHUNK = 10


@dataclass
class AttributionReport(DecisionUsage):
    total: int = 0
    attributed: int = 0
    errors: list[dict] = field(default_factory=list)  # {"trajectory", "task", "error"}


def check_method(method: str) -> None:
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(METHODS)}, not {method[:40]!r}")


def check_attribution_judge(config: JudgeConfig) -> None:
    """ValueError saying why the config cannot attribute failures."""
    require_openai_backend(config, "attributing failures")


def llm_source(method: str, config: JudgeConfig) -> AttributionSource:
    source, _ = AttributionSource.objects.get_or_create(kind=SourceKind.JUDGE, name=f"LLM {METHODS[method]}",
                                                        model=config.model)
    return source


def _reference(trajectory: Trajectory) -> str:
    answers = trajectory.task.reference_answers
    return json.dumps(answers, ensure_ascii=False) if answers else ""


def _cases(ids: list[int]) -> list[tuple[Trajectory, Case]]:
    steps = {pk: [] for pk in ids}
    rows = (Step.objects.filter(trajectory_id__in=ids).order_by("trajectory_id", "index")
            .values_list("trajectory_id", "index", "agent", "action", "reasoning"))
    for trajectory_id, index, agent, action, reasoning in rows.iterator():
        text = "\n".join(part for part in (action.strip(), reasoning.strip()) if part)
        steps[trajectory_id].append(attribution.shown_step(index, agent, text))
    types = {}
    cases = []
    for trajectory in Trajectory.objects.filter(pk__in=ids).select_related("task").order_by("pk"):
        benchmark = trajectory.task.benchmark
        if benchmark not in types:
            types[benchmark] = [vars(item) for item in taxonomy(benchmark)]
        cases.append((trajectory, Case(trajectory.task.intent, _reference(trajectory), steps[trajectory.pk],
                                       types[benchmark])))
    return cases


def _asker(judge: Judge, used: set[int]):
    """`ask` of `failures.llm_methods`: the answer's fields, a human verdict's score winning over the
    model's yes or no."""

    def ask(question) -> dict:
        [verdict] = judge.verdicts([question])
        used.add(verdict.decision_id)
        if verdict.error:
            raise Unanswered(verdict.error)
        answer = dict(JudgeDecision.objects.values_list("output", flat=True).get(pk=verdict.decision_id))
        if question.kind == attribution.STEP:
            answer["decisive"] = verdict.score >= 0.5
        elif question.kind == attribution.HALVES:
            answer["half"] = attribution.FIRST if verdict.score >= 0.5 else attribution.SECOND
        return answer

    return ask


def _attribute_one(judge: Judge, method: str, source: AttributionSource, trajectory: Trajectory, case: Case,
                   given_by: str, used: set[int]) -> str:
    """Attribute one trajectory in its own transaction; why it got no attribution, or ""."""
    if not case.steps:
        return "the trajectory has no steps"
    try:
        found = attribute(method, case, _asker(judge, used))
    except Unanswered as error:
        return str(error)
    with transaction.atomic():
        FailureAttribution.objects.filter(trajectory=trajectory, source=source).delete()
        if found.step is None:
            return found.reason
        FailureAttribution.objects.create(
            trajectory=trajectory, source=source, step_index=found.step, agent=found.agent[:200],
            failure_type=found.failure_type, note=found.reason, origin=ResultOrigin.WEB, source_name=given_by[:500])
    return ""


def attribute_by_llm(run: AgentRun, config: JudgeConfig, method: str, *, progress=None) -> AttributionReport:
    """Attribute every failed trajectory of the run; `progress(report)` is called after each chunk.
    Raises EndpointUnreachable when the endpoint does not answer at all."""
    check_method(method)
    check_attribution_judge(config)
    judge = get_judge(config)
    source = llm_source(method, config)
    ids = list(run.trajectories.filter(success=False).order_by("pk").values_list("pk", flat=True))
    report = AttributionReport(total=len(ids))
    for start in range(0, len(ids), CHUNK):
        used: set[int] = set()
        for trajectory, case in _cases(ids[start:start + CHUNK]):
            why = _attribute_one(judge, method, source, trajectory, case, f"judge {config.name}", used)
            if why:
                report.errors.append({"trajectory": trajectory.pk, "task": trajectory.task.task_id, "error": why})
            else:
                report.attributed += 1
        report.add_usage(used - {None})
        if progress:
            progress(report)
    return report


@transaction.atomic
def create_attribution_job(run: AgentRun, config: JudgeConfig, method: str, *, created_by=None,
                           quiet: bool = False) -> AttributionJob:
    """The job, stored and sent to the workers once committed; ValueError when the method is unknown or the
    judge cannot attribute failures or is not choosable (`check_choosable`)."""
    check_method(method)
    check_attribution_judge(config)
    check_choosable(config)
    job = AttributionJob.objects.create(run=run, judge_config=config, method=method, created_by=created_by,
                                        total=run.trajectories.filter(success=False).count())
    enqueue(job, quiet=quiet)
    return job


def start_attribution_job(run: AgentRun, config: JudgeConfig, method: str, *, user) -> AttributionJob:
    """Start a job for a user (the run page, the API): within the account's job limit, and not beside an
    unfinished job of the same run, judge and method. ValueError saying why not."""
    with transaction.atomic():
        list(AgentRun.objects.select_for_update().filter(pk=run.pk).values_list("pk"))  # one start at a time
        running = AttributionJob.objects.filter(run=run, judge_config=config, method=method,
                                                status__in=AttributionJob.unfinished_statuses).first()
        if running is not None:
            raise ValueError(f"failure attribution #{running.pk} of run {run.name} ({METHODS[method]}, judge "
                             f"{config.name}) is still {running.status}: follow it rather than start another")
        if not run.trajectories.filter(success=False).exists():
            raise ValueError(f"run {run.name} holds no failed trajectory: there is nothing to attribute")
        check_job_limit(AttributionJob, user)
        return create_attribution_job(run, config, method, created_by=user)


def run_attribution_job(job_id: int) -> AttributionJob:
    """Run a pending or interrupted job (`infrastructure.jobs.run_job`)."""
    return run_job(AttributionJob, job_id,
                   lambda job, progress: attribute_by_llm(job.run, job.judge_config, job.method, progress=progress),
                   progress_fields=("attributed", "errors"),
                   result_fields=("total", "attributed", "errors", "calls", "cost"),
                   related=("run", "judge_config"), self_explaining=(EndpointUnreachable,))
