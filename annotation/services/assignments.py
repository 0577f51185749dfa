"""Putting tasks in an annotator's queue (the queue's "assigned to me")."""

from dataclasses import dataclass

from django.contrib.auth import get_user_model
from django.db import transaction

from accounts.roles import ANNOTATOR, has_role
from annotation.models import Assignment
from trajectories.models import Task


@dataclass
class AssignmentReport:
    annotator: str
    assigned: int
    already_assigned: int
    missing_tasks: list[str]

    def __str__(self):
        text = f"{self.annotator}: {self.assigned} tasks assigned, {self.already_assigned} already assigned"
        if self.missing_tasks:
            text += f"; no such tasks: {', '.join(self.missing_tasks)}"
        return text


def parse_task_ids(specs: list[str]) -> list[str]:
    """'1-3,7' and '9' -> ['1', '2', '3', '7', '9']; ranges only between numbers."""
    ids = []
    for spec in specs:
        for part in filter(None, (piece.strip() for piece in spec.split(","))):
            first, dash, last = part.partition("-")
            if dash and first.isdigit() and last.isdigit():
                if int(last) < int(first):
                    raise ValueError(f"task range {part!r} runs backwards")
                ids.extend(str(number) for number in range(int(first), int(last) + 1))
            else:
                ids.append(part)
    return list(dict.fromkeys(ids))


@transaction.atomic
def assign_tasks(annotator: str, task_ids: list[str], *, benchmark: str = "webarena",
                 assigned_by=None) -> AssignmentReport:
    user = get_user_model().objects.filter(username=annotator).first()
    if user is None or not has_role(user, ANNOTATOR):
        raise ValueError(f"{annotator!r} is not a user with the annotator role")
    tasks = {task.task_id: task for task in Task.objects.filter(benchmark=benchmark, task_id__in=task_ids)}
    taken = set(Assignment.objects.filter(annotator=user, task__in=tasks.values()).values_list("task_id", flat=True))
    new = [Assignment(task=task, annotator=user, assigned_by=assigned_by)
           for task in tasks.values() if task.pk not in taken]
    Assignment.objects.bulk_create(new)
    return AssignmentReport(
        annotator=annotator,
        assigned=len(new),
        already_assigned=len(taken),
        missing_tasks=[task_id for task_id in task_ids if task_id not in tasks],
    )
