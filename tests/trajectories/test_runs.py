import json

import pytest

from tests.factories import UserFactory
from trajectories.formats.canonical import RunInfo
from trajectories.models import AgentRun
from trajectories.services.runs import describe_run, get_or_create_run, read_run_description

pytestmark = pytest.mark.django_db


def test_a_new_run_takes_everything_an_existing_one_only_fills_blanks():
    user = UserFactory()
    run = get_or_create_run(" gpt4-cot ", agent="cot", paradigm="tree_search", user=user)
    assert (run.name, run.agent, run.model, run.paradigm, run.uploaded_by) == ("gpt4-cot", "cot", "", "tree_search",
                                                                            user)
    again = get_or_create_run("gpt4-cot", agent="other", model="gpt-4", paradigm="full_plan")
    assert again.pk == run.pk
    assert (again.agent, again.model, again.paradigm, again.uploaded_by) == ("cot", "gpt-4", "tree_search", user)
    assert AgentRun.objects.count() == 1


@pytest.mark.parametrize(("name", "paradigm", "message"), [("", "step_by_step", "needs a name"),
                                                         ("x", "waterfall", "unknown paradigm")])
def test_bad_run_arguments(name, paradigm, message):
    with pytest.raises(ValueError, match=message):
        get_or_create_run(name, paradigm=paradigm)


def test_describing_a_run_fills_defaults_and_keeps_metadata():
    run = get_or_create_run("r")
    assert describe_run(run, RunInfo(agent="a", model="m", paradigm="full_plan", meta={"prompt": "p1"}))
    assert not describe_run(run, RunInfo(agent="b", meta={"prompt": "p2"}))
    run.refresh_from_db()
    assert (run.agent, run.model, run.paradigm, run.metadata) == ("a", "m", "full_plan", {"meta": {"prompt": "p1"}})


def test_run_folders_describe_themselves(tmp_path):
    assert read_run_description(tmp_path) == {}
    (tmp_path / "run.json").write_text(json.dumps({"agent": "cot", "model": "llama", "paradigm": "step_by_step"}))
    assert read_run_description(tmp_path) == {"agent": "cot", "model": "llama", "paradigm": "step_by_step"}
    (tmp_path / "run.json").write_text(json.dumps({"agent": 3}))
    with pytest.raises(ValueError, match=r"run\.json: run\.agent: 3 is not of type 'string'"):
        read_run_description(tmp_path)

