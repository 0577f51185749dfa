import pytest

from tests.factories import AgentRunFactory
from trajectories.services.tasks import import_task_file


@pytest.fixture
def samples(shared_data):
    return shared_data / "trajectory-samples"


@pytest.fixture
def webarena_tasks(db, shared_data):
    """All 812 WebArena tasks, imported from the real config file."""
    import_task_file(shared_data / "webarena" / "test.raw.json")


@pytest.fixture
def run(db):
    return AgentRunFactory(name="llama-run", agent="", model="")
