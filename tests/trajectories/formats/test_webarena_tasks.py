import json

import pytest

from trajectories.formats.task_files import read_task_file
from trajectories.formats.webarena_tasks import TaskConfigError, parse_task_configs


def _task(**overrides):
    task = {
        "task_id": 1,
        "intent": "What is the top-1 best-selling product in 2022",
        "sites": ["shopping_admin"],
        "start_url": "__SHOPPING_ADMIN__",
        "eval": {"eval_types": ["string_match"], "reference_answers": {"exact_match": "Quest Lumaflex Band"}},
    }
    task.update(overrides)
    return task


def test_real_file_parses_every_task(shared_data):
    configs = read_task_file(shared_data / "webarena" / "test.raw.json").configs
    assert len(configs) == 812
    assert {c.benchmark for c in configs} == {"webarena"}
    assert sum(c.unachievable for c in configs) == 36
    by_id = {c.task_id: c for c in configs}
    assert by_id["0"].number == 0
    assert by_id["0"].eval_config["reference_answers"] == {"exact_match": "Quest Lumaflex™ Band"}
    assert by_id["0"].config["intent_template_id"] == 279


def test_requirements_come_from_must_include_then_list_fuzzy_match():
    configs = parse_task_configs(
        [
            _task(task_id=1, eval={"eval_types": ["string_match"], "reference_answers": {"must_include": ["a", "b"]}}),
            _task(task_id=2, eval={"eval_types": ["string_match"], "reference_answers": {"fuzzy_match": ["x", "y"]}}),
            _task(task_id=3, eval={"eval_types": ["string_match"], "reference_answers": {"fuzzy_match": "N/A"}}),
            _task(task_id=4, eval={"eval_types": ["program_html"], "reference_answers": None}),
        ],
        "t.json",
    )
    assert [(c.requirements, c.requirements_source, c.unachievable) for c in configs] == [
        (["a", "b"], "must_include", False),
        (["x", "y"], "fuzzy_match", False),
        ([], "", True),
        ([], "", False),
    ]


def test_webarena_lite_is_recognised_by_old_task_id():
    (config,) = parse_task_configs([_task(task_id=7, old_task_id=27)], "lite.json")
    assert config.benchmark == "webarena-lite"
    assert (config.task_id, config.old_task_id) == ("7", "27")


def test_a_single_task_object_is_one_task():
    (config,) = parse_task_configs(_task(task_id=5), "5.json")
    assert config.task_id == "5"


@pytest.mark.parametrize(
    ("entry", "field", "message"),
    [
        (_task(sites="shopping"), "sites", "expected a list of strings"),
        (_task(intent=""), "intent", "empty"),
        (_task(task_id=True), "task_id", "expected an integer or string, got bool"),
        (_task(eval={"eval_types": ["string_match"], "reference_answers": {"must_include": "a"}}),
         "eval.reference_answers.must_include", "expected a list of strings"),
        (_task(eval={"eval_types": ["visual_match"]}), "eval.eval_types", "unknown evaluator 'visual_match'"),
        ({k: v for k, v in _task().items() if k != "eval"}, "eval", "missing"),
    ],
)
def test_invalid_entry_names_task_and_field(entry, field, message):
    with pytest.raises(TaskConfigError) as error:
        parse_task_configs([_task(task_id=0), entry], "broken.json")
    (problem,) = error.value.problems
    assert (problem.entry, problem.field) == (2, field)
    assert message in problem.message
    assert f"field '{field}'" in str(error.value) and str(error.value).startswith("broken.json:")


def test_duplicate_task_ids_are_refused():
    with pytest.raises(TaskConfigError, match="duplicate of entry 1"):
        parse_task_configs([_task(task_id=3), _task(task_id=3)], "dup.json")


def test_invalid_json_names_line(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text('[\n{"task_id": 1,\n "intent": }\n]')
    with pytest.raises(TaskConfigError, match=r"bad.json: invalid JSON at line 3"):
        read_task_file(path)


def test_top_level_must_be_a_list(tmp_path):
    path = tmp_path / "x.json"
    path.write_text(json.dumps("tasks"))
    with pytest.raises(TaskConfigError, match="expected a list of task objects, got str"):
        read_task_file(path)
