import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command

from annotation.models import GoldTrajectory
from metrics.models import EvaluationJob, TrajectoryScore
from trajectories.models import AgentRun, Task, Trajectory


@pytest.mark.django_db(transaction=True)
def test_load_demo_loads_everything_once(capsys, caplog):
    call_command("load_demo")
    assert not [record for record in caplog.records if record.levelname == "WARNING"]  # e.g. kombu on a hostless URL
    call_command("load_demo")
    assert Task.objects.count() == 812
    assert set(AgentRun.objects.values_list("name", flat=True)) == {"gpt-4-turbo", "llama3-8b"}
    assert Trajectory.objects.count() == 3
    assert GoldTrajectory.objects.filter(status="approved").count() == 3
    demo = get_user_model().objects.get(username="demo")
    assert demo.is_superuser and demo.check_password("demo")
    for name, role in (("demo-annotator", "annotator"), ("demo-reviewer", "reviewer")):
        account = get_user_model().objects.get(username=name)
        assert account.check_password("demo") and list(account.groups.values_list("name", flat=True)) == [role]
    assert GoldTrajectory.objects.filter(annotator__username="demo-annotator").count() == 3
    assert EvaluationJob.objects.count() == 2
    assert set(EvaluationJob.objects.values_list("status", flat=True)) == {"done"}
    assert TrajectoryScore.objects.filter(error="").count() == 3
    scored = TrajectoryScore.objects.get(trajectory__task__task_id="3")
    assert scored.gold is not None and scored.step_success is not None
    assert scored.outcome_status == "early_stop" and scored.outcome_reason == "invalid_actions"
    assert "created admin account 'demo'" in capsys.readouterr().out
