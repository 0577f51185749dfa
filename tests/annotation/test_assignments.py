import pytest
from django.core.management import CommandError, call_command

from annotation.models import Assignment
from annotation.services.assignments import parse_task_ids
from tests.factories import TaskFactory, UserFactory


def test_task_id_specs():
    assert parse_task_ids(["1-3,7", "9", "3", "abc"]) == ["1", "2", "3", "7", "9", "abc"]
    with pytest.raises(ValueError, match="runs backwards"):
        parse_task_ids(["5-2"])


@pytest.mark.django_db
def test_assign_tasks_command(annotator, capsys):
    for number in (1, 2, 3):
        TaskFactory(task_id=str(number), number=number)
    Assignment.objects.create(task=TaskFactory(task_id="4", number=4), annotator=annotator)

    call_command("assign_tasks", "alice", "1-2", "4,99")

    assert sorted(Assignment.objects.filter(annotator=annotator).values_list("task__task_id", flat=True)) == [
        "1", "2", "4"
    ]
    assert capsys.readouterr().out.strip() == "alice: 2 tasks assigned, 1 already assigned; no such tasks: 99"
    UserFactory(username="nobody")
    with pytest.raises(CommandError, match="'nobody' is not a user with the annotator role"):
        call_command("assign_tasks", "nobody", "1")
