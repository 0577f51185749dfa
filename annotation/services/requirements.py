"""Edits of a task's requirements: the phrases a complete final answer must contain."""

from django.db import transaction

from accounts.roles import ANNOTATOR, has_role
from annotation.errors import GoldPermissionDenied, GoldValidationError, RequirementsConflict
from trajectories.models import RequirementsSource, Task

MAX_REQUIREMENTS = 50


def clean_requirements(requirements: list[str]) -> list[str]:
    """Trimmed, blank ones dropped, duplicates (ignoring case) dropped, order kept."""
    seen, cleaned = set(), []
    for position, phrase in enumerate(requirements):
        if not isinstance(phrase, str):
            raise GoldValidationError({f"requirements[{position}]": "expected text"})
        phrase = " ".join(phrase.split())
        if phrase and phrase.casefold() not in seen:
            seen.add(phrase.casefold())
            cleaned.append(phrase)
    if len(cleaned) > MAX_REQUIREMENTS:
        raise GoldValidationError({"requirements": f"at most {MAX_REQUIREMENTS} requirements"})
    return cleaned


def check_may_edit_requirements(user) -> None:
    """Asked by the API before it reads the body, and by `update_requirements`."""
    if not has_role(user, ANNOTATOR):
        raise GoldPermissionDenied("editing requirements needs the annotator role")


def update_requirements(task_id: int, *, user, requirements: list[str], expected: list[str] | None = None) -> Task:
    """Store the annotator's requirements for a task; they win over WebArena's from now on.

    `expected` is the list the editor loaded: when the stored list differs, someone else
    changed it meanwhile and RequirementsConflict carries theirs instead of overwriting it.
    """
    check_may_edit_requirements(user)
    requirements = clean_requirements(requirements)
    with transaction.atomic():
        task = Task.objects.select_for_update().get(pk=task_id)
        if expected is not None and list(task.requirements) != list(expected):
            raise RequirementsConflict(list(task.requirements))
        if task.requirements != requirements or task.requirements_source != RequirementsSource.ANNOTATOR:
            task.requirements = requirements
            task.requirements_source = RequirementsSource.ANNOTATOR
            task.save(update_fields=["requirements", "requirements_source", "updated_at"])
    return task
