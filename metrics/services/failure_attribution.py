"""The decisive step of a run's failures from gold: where each left the gold path of its latest
evaluation for good (`failures.gold_path`). It reads scores (metrics) and writes attributions
(failures), so it lives here, the app above both."""

from django.db import transaction

from failures.gold_path import decisive_step
from failures.models import AttributionSource, FailureAttribution, SourceKind
from metrics.models import TrajectoryScore
from metrics.selectors.latest_evaluations import latest_evaluations
from trajectories.models import AgentRun, ResultOrigin

FROM_GOLD = "gold path"


class NoEvaluation(ValueError):
    """The run has no finished evaluation against gold to read the gold path from."""


def gold_source() -> AttributionSource:
    source, _ = AttributionSource.objects.get_or_create(kind=SourceKind.GOLD, name=FROM_GOLD, model="")
    return source


def attribute_from_gold(run: AgentRun) -> tuple[int, int]:
    """Attribute the run's failed trajectories (harness verdict) from the gold path of its latest
    evaluation, replacing the earlier ones from gold; returns (attributed, failed trajectories scored
    against gold). A trajectory scored against several golds (policy `each`) takes its first gold's."""
    latest = latest_evaluations([run.pk]).get(run.pk)
    if latest is None:
        raise NoEvaluation(f"run {run.name!r} has no finished evaluation")
    scores = (TrajectoryScore.objects.filter(job_id=latest.job_id, trajectory__run=run, trajectory__success=False,
                                             gold__isnull=False)
              .order_by("trajectory_id", "gold_id").values_list("trajectory_id", "gold_id", "agent_steps", "details"))
    source, found, scored = gold_source(), {}, set()
    for trajectory_id, gold_id, agent_steps, details in scores.iterator():
        if trajectory_id in scored:
            continue
        scored.add(trajectory_id)
        events = (details.get("recovery") or {}).get("events") or []
        result = decisive_step(events, agent_steps or 0)
        if result is not None:
            found[trajectory_id] = FailureAttribution(
                trajectory_id=trajectory_id, source=source, step_index=result.step, origin=ResultOrigin.WEB,
                note=f"{result.reason} (gold #{gold_id}, evaluation job {latest.job_id})")
    with transaction.atomic():
        FailureAttribution.objects.filter(source=source, trajectory__run=run).delete()
        FailureAttribution.objects.bulk_create(found.values())
    return len(found), len(scored)
