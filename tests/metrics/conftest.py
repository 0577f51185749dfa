import pytest
from django.core.cache import cache

from tests.factories import (
    AgentRunFactory,
    GoldStepFactory,
    GoldTrajectoryFactory,
    StepFactory,
    TaskFactory,
    TrajectoryFactory,
)


@pytest.fixture
def empty_cache():
    """Leaderboards, comparisons and charts are cached under their inputs: each test starts and ends without them."""
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def run():
    """One run of one one-step trajectory whose task has approved one-step gold; its final answer is markup."""
    run = AgentRunFactory(name="agent-a")
    task = TaskFactory()
    gold = GoldTrajectoryFactory(task=task, status="approved")
    GoldStepFactory(gold=gold, index=1, text="click [1]")
    trajectory = TrajectoryFactory(run=run, task=task, final_answer="<script>alert(1)</script>")
    StepFactory(trajectory=trajectory, index=1, action="click [1]", planned_action="click [1]")
    return run
