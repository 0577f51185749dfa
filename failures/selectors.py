"""Reads of failure annotations: the trajectory page's panel (blind as grades are), the queue of
failures to annotate, and agreement between people."""

from collections import defaultdict
from dataclasses import dataclass

from django.db.models import Count, Q

from accounts.roles import ANNOTATOR, has_role
from trajectories.models import Step, Trajectory

from .agreement import Label, StepAgreement, annotator_pairs, step_agreement
from .models import FailureAttribution, FailureTaxonomy, SourceKind
from .taxonomy import DEFAULT_TYPES, FailureType

QUEUE_LENGTH = 100
HUMAN_KINDS = (SourceKind.HUMAN, SourceKind.IMPORTED)


def taxonomy(benchmark: str) -> tuple[FailureType, ...]:
    """The benchmark's failure types: its own where it has them, else the default ones."""
    row = FailureTaxonomy.objects.filter(benchmark=benchmark).first()
    if row is None:
        return DEFAULT_TYPES
    return tuple(FailureType(item["key"], item["name"], item["definition"]) for item in row.types)


def has_own_taxonomy(benchmark: str) -> bool:
    return FailureTaxonomy.objects.filter(benchmark=benchmark).exists()


@dataclass(frozen=True)
class FailurePanel:
    """What the trajectory page shows of its failure annotations to one user: other people's stay
    hidden from an annotator until they have annotated it themselves."""

    can_annotate: bool
    mine: FailureAttribution | None
    attributions: list  # every source's attributions, empty while blind
    hidden: int
    types: tuple[FailureType, ...]
    agents: list[str]

    @property
    def blind(self) -> bool:
        return self.hidden > 0

    @property
    def type_names(self) -> dict[str, str]:
        return {item.key: item.name for item in self.types}


def step_agents(trajectory: Trajectory) -> list[str]:
    """The agents that speak in the trajectory, in order of first appearance."""
    seen = dict.fromkeys(Step.objects.filter(trajectory=trajectory).exclude(agent="")
                         .order_by("index").values_list("agent", flat=True))
    return list(seen)


def failure_panel(trajectory: Trajectory, user) -> FailurePanel:
    attributions = list(FailureAttribution.objects.filter(trajectory=trajectory).select_related("source")
                        .order_by("source__kind", "source__name", "created_at", "pk"))
    can_annotate = has_role(user, ANNOTATOR) and not trajectory.success
    mine = next((item for item in attributions if item.annotator_id == user.pk and item.source.kind == SourceKind.HUMAN),
                None) if user.is_authenticated else None
    types, agents = taxonomy(trajectory.task.benchmark), step_agents(trajectory)
    if can_annotate and mine is None:
        return FailurePanel(True, None, [], len(attributions), types, agents)
    return FailurePanel(can_annotate, mine, attributions, 0, types, agents)


def annotation_queue(user, run_id: int | None = None) -> list[Trajectory]:
    """Failed trajectories the user has not annotated, those with fewest human annotations first."""
    failed = Trajectory.objects.filter(success=False).exclude(
        failure_attributions__annotator_id=user.pk, failure_attributions__source__kind=SourceKind.HUMAN)
    if run_id is not None:
        failed = failed.filter(run_id=run_id)
    return list(failed.annotate(annotations=Count("failure_attributions",
                                                  filter=Q(failure_attributions__source__kind__in=HUMAN_KINDS)))
                .select_related("run", "task").order_by("annotations", "run__name", "task__benchmark", "task__task_id")
                [:QUEUE_LENGTH])


def human_labels(run_id: int | None = None, benchmark: str = "") -> dict[int, list[Label]]:
    """Per trajectory, every person's attribution (graders here and imported annotators), each
    annotator named with their source."""
    rows = FailureAttribution.objects.filter(source__kind__in=HUMAN_KINDS)
    if run_id is not None:
        rows = rows.filter(trajectory__run_id=run_id)
    if benchmark:
        rows = rows.filter(trajectory__task__benchmark=benchmark)
    labels = defaultdict(list)
    for trajectory_id, source, annotator, step, agent, failure_type in rows.values_list(
            "trajectory_id", "source__name", "annotator_name", "step_index", "agent", "failure_type"):
        who = f"{source}: {annotator}" if annotator else source
        labels[trajectory_id].append(Label(who, step, agent, failure_type))
    return labels


def human_agreement(run_id: int | None = None, benchmark: str = "") -> StepAgreement:
    return step_agreement(annotator_pairs(human_labels(run_id, benchmark).values()))
