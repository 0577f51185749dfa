import pytest
from django.conf import settings

from trajectories.models import AgentRun
from trajectories.services.ingest import import_paths
from trajectories.services.runs import get_or_create_run, read_run_description

DEMO_RUNS = settings.BASE_DIR / "fixtures" / "demo" / "runs"


@pytest.mark.django_db
def test_the_demo_run_folders_import_cleanly(webarena_tasks):
    for folder in sorted(path for path in DEMO_RUNS.iterdir() if path.is_dir()):
        run = get_or_create_run(folder.name, **read_run_description(folder))
        report = import_paths([folder], run)
        assert report.ok, report.to_dict()
        assert run.agent and run.model
    llama = AgentRun.objects.get(name="llama3-8b")
    assert dict(llama.trajectories.values_list("task__task_id", "outcome_status")) == {"3": "early_stop", "6": "na"}
    gpt = AgentRun.objects.get(name="gpt-4-turbo").trajectories.get()
    assert (gpt.final_answer, gpt.step_count, gpt.outcome_status) == ("Quest Lumaflex™ Band", 2, "answered")
    assert not gpt.steps.filter(screenshot__isnull=False).exists()
