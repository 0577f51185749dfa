"""Attribution sources run over a run's failed trajectories and stored as their attributions."""

from django.db import transaction

from trajectories.models import AgentRun, ResultOrigin, Step

from ..models import AttributionSource, FailureAttribution, SourceKind
from ..rules import RULES_NAME, RULES_VERSION, StepText, attribute


def rules_source() -> AttributionSource:
    source, _ = AttributionSource.objects.get_or_create(kind=SourceKind.RULE, name=RULES_NAME, model=RULES_VERSION)
    return source


def _step_texts(trajectory_ids: list[int]) -> dict[int, list[StepText]]:
    texts = {pk: [] for pk in trajectory_ids}
    rows = (Step.objects.filter(trajectory_id__in=trajectory_ids).order_by("trajectory_id", "index")
            .values_list("trajectory_id", "index", "action", "agent", "action_type", "element_id", "action_value",
                         "reasoning"))
    for trajectory_id, index, action, agent, action_type, element, value, reasoning in rows.iterator():
        texts[trajectory_id].append(StepText(index, action, agent, action_type, element, value, reasoning))
    return texts


def attribute_by_rules(run: AgentRun) -> int:
    """The offline rules' decisive step of each failed trajectory of the run (harness verdict),
    replacing their earlier attributions there; returns how many were attributed."""
    source = rules_source()
    failed = list(run.trajectories.filter(success=False).values_list("pk", flat=True))
    found = {pk: attribute(steps) for pk, steps in _step_texts(failed).items()}
    rows = [FailureAttribution(trajectory_id=pk, source=source, step_index=result.step, agent=result.agent,
                               note=f"{result.rule}: {result.reason}", origin=ResultOrigin.WEB)
            for pk, result in found.items() if result is not None]
    with transaction.atomic():
        FailureAttribution.objects.filter(source=source, trajectory__run=run).delete()
        FailureAttribution.objects.bulk_create(rows)
    return len(rows)
