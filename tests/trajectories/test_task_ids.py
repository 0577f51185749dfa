"""Task ids of up to 255 characters (AgentRewardBench's WorkArena++ ids run to 106): every bound on one agrees."""

import json

import pytest

from annotation.formats import GOLD_SCHEMA_PATH
from tests.factories import TaskFactory
from trajectories.formats.canonical import SCHEMA_PATH, TASK_ID_MAX_LENGTH
from trajectories.models import Task


def test_the_schemas_the_readers_and_the_columns_bound_a_task_id_alike():
    trajectory = json.loads(SCHEMA_PATH.read_text())["properties"]["task"]["properties"]["task_id"]
    gold = json.loads(GOLD_SCHEMA_PATH.read_text())["properties"]["gold"]["items"]["properties"]["task_id"]
    columns = {Task._meta.get_field(name).max_length for name in ("task_id", "old_task_id")}
    assert {trajectory["maxLength"], gold["maxLength"], TASK_ID_MAX_LENGTH} | columns == {255}


@pytest.mark.django_db
def test_a_task_id_of_255_characters_is_stored_and_found_whole():
    longest = "servicenow." + "x" * (TASK_ID_MAX_LENGTH - len("servicenow."))
    TaskFactory(benchmark="workarena", task_id=longest, number=None)
    assert Task.objects.get(benchmark="workarena", task_id=longest).task_id == longest
