"""Writes of failure annotations by people and of the benchmark's failure types."""

from django.db import transaction

from trajectories.models import ResultOrigin, Trajectory

from ..models import AttributionSource, FailureAttribution, FailureTaxonomy, SourceKind
from ..selectors import taxonomy
from ..taxonomy import parse_types
from .themes import request_themes

HUMAN_GRADERS = "human graders"
NOTE_MAX_LENGTH = 2000
AGENT_MAX_LENGTH = 200


class AnnotationError(ValueError):
    """A failure annotation that cannot be kept; the message names the field."""


def human_source() -> AttributionSource:
    source, _ = AttributionSource.objects.get_or_create(kind=SourceKind.HUMAN, name=HUMAN_GRADERS, model="")
    return source


def _step(trajectory: Trajectory, raw) -> int:
    text = str(raw if raw is not None else "").strip()
    if not text.isdigit():
        raise AnnotationError(f"decisive step {text[:20]!r} is not a step number")
    step = int(text)
    if not 1 <= step <= trajectory.step_count:
        raise AnnotationError(f"decisive step {step} is not one of the trajectory's steps 1 to {trajectory.step_count}")
    return step


def record_failure_annotation(trajectory: Trajectory, user, *, step, failure_type: str, agent: str = "",
                              note: str = "", origin: str = ResultOrigin.WEB) -> FailureAttribution:
    """The user's decisive step, failure type, responsible agent and note for a failed trajectory;
    annotating again replaces their first annotation. The run's failure themes are asked for again."""
    if trajectory.success:
        raise AnnotationError("the trajectory succeeded by its harness verdict: only failures have a decisive step")
    step = _step(trajectory, step)
    failure_type = (failure_type or "").strip()
    keys = [item.key for item in taxonomy(trajectory.task.benchmark)]
    if failure_type not in keys:
        raise AnnotationError(f"failure type {failure_type[:60]!r} is not one of {trajectory.task.benchmark}'s: "
                              + ", ".join(keys))
    agent, note = (agent or "").strip(), (note or "").strip()
    if len(agent) > AGENT_MAX_LENGTH:
        raise AnnotationError(f"responsible agent is longer than {AGENT_MAX_LENGTH} characters")
    if len(note) > NOTE_MAX_LENGTH:
        raise AnnotationError(f"note is longer than {NOTE_MAX_LENGTH} characters")
    with transaction.atomic():
        annotation, _ = FailureAttribution.objects.update_or_create(
            trajectory=trajectory, source=human_source(), annotator_name=user.get_username(),
            defaults={"annotator": user, "step_index": step, "failure_type": failure_type, "agent": agent,
                      "note": note, "origin": origin, "source_name": ""},
        )
        request_themes(run=trajectory.run)
    return annotation


def save_taxonomy(benchmark: str, text: str) -> FailureTaxonomy:
    """The benchmark's failure types as typed (`key | name | definition` a line); raises
    `failures.taxonomy.TaxonomyError` naming the line at fault."""
    types = parse_types(text)
    row, _ = FailureTaxonomy.objects.update_or_create(
        benchmark=benchmark, defaults={"types": [{"key": t.key, "name": t.name, "definition": t.definition}
                                                 for t in types]})
    return row
