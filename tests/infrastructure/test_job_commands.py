"""The commands that start a background job: a job whose message cannot be sent is kept, and the command
says so, as an error when it is not told to wait."""

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from failures.models import AttributionJob
from judges.models import OutcomeJob
from tests.conftest import use_broker
from tests.factories import AgentRunFactory, StepFactory, TrajectoryFactory
from tests.judges.conftest import llm_server, openai_config  # noqa: F401

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.mark.parametrize(("command", "model"), [
    (["attribute_failures", "--method", "all_at_once"], AttributionJob),
    (["judge_outcomes"], OutcomeJob),
])
def test_a_job_the_workers_cannot_be_told_of_is_kept_and_the_command_fails_saying_so(
        command, model, openai_config, monkeypatch):  # noqa: F811
    StepFactory(trajectory=TrajectoryFactory(run=AgentRunFactory(name="shopper"), success=False), index=1)
    use_broker("redis://127.0.0.1:9/0", monkeypatch)  # the discard port: nothing listens

    with pytest.raises(CommandError, match="Background workers are unreachable: your .* is saved"):
        call_command(*command, "--run", "shopper", "--judge", openai_config.name)

    job = model.objects.get()
    assert (job.status, job.dispatched_at) == ("pending", None)
