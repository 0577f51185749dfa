import json

import pytest

from annotation.quality import TaskRecord, template_slots


@pytest.fixture(scope="module")
def webarena_intents(shared_data):
    tasks = json.loads((shared_data / "webarena" / "test.raw.json").read_text(encoding="utf-8"))
    return [TaskRecord(task["task_id"], str(task["task_id"]), task["intent"], task["intent_template_id"],
                               template_slots(task["instantiation_dict"]))
            for task in tasks]
