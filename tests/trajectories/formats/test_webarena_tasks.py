import json

import pytest

from trajectories.formats.task_files import read_task_file
from trajectories.formats.webarena_tasks import READ_AS_LIST, TaskConfigError, parse_task_configs


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
    ).configs
    assert [(c.requirements, c.requirements_source, c.unachievable) for c in configs] == [
        (["a", "b"], "must_include", False),
        (["x", "y"], "fuzzy_match", False),
        ([], "", True),
        ([], "", False),
    ]


def test_webarena_lite_is_recognised_by_old_task_id():
    (config,) = parse_task_configs([_task(task_id=7, old_task_id=27)], "lite.json").configs
    assert config.benchmark == "webarena-lite"
    assert (config.task_id, config.old_task_id) == ("7", "27")


def test_a_single_task_object_is_one_task():
    (config,) = parse_task_configs(_task(task_id=5), "5.json").configs
    assert config.task_id == "5"


@pytest.mark.parametrize(
    ("entry", "field", "message"),
    [
        (_task(sites=7), "sites", "expected a list of strings"),
        (_task(intent=""), "intent", "empty"),
        (_task(task_id=True), "task_id", "expected an integer or string, got bool"),
        (_task(eval={"eval_types": ["string_match"], "reference_answers": {"must_include": ["a", 1]}}),
         "eval.reference_answers.must_include", "expected a list of strings"),
        (_task(eval={"eval_types": ["visual_match"]}), "eval.eval_types", "unknown evaluator 'visual_match'"),
        ({k: v for k, v in _task().items() if k != "eval"}, "eval", "missing"),
        (_task(task_id=0), "task_id", "duplicate of entry 1"),
    ],
)
def test_an_unreadable_entry_is_skipped_naming_task_and_field(entry, field, message):
    read = parse_task_configs([_task(task_id=0), entry, _task(task_id=2)], "broken.json")

    assert [config.task_id for config in read.configs] == ["0", "2"]
    (problem,) = read.skipped
    assert (problem.entry, problem.field) == (2, field) and message in problem.message
    with pytest.raises(TaskConfigError) as error:
        read.checked("broken.json", strict=True)
    assert str(error.value).startswith("broken.json: 1 entry not read as written (refused by --strict)")
    assert f"(entry 2): field '{field}'" in str(error.value)


def test_a_file_with_no_readable_entry_is_refused_naming_every_problem():
    read = parse_task_configs([_task(intent=""), _task(task_id=3, sites=7)], "broken.json")

    with pytest.raises(TaskConfigError) as error:
        read.checked("broken.json")
    assert str(error.value).startswith("broken.json: 2 invalid task entries, nothing imported:")
    assert "task 3 (entry 2): field 'sites'" in str(error.value)


@pytest.mark.parametrize(("entry", "field", "read_as"), [
    (_task(sites="gitlab"), "sites", ["gitlab"]),
    (_task(eval={"eval_types": "string_match", "reference_answers": {"exact_match": "x"}}), "eval.eval_types",
     ["string_match"]),
    (_task(eval={"eval_types": ["string_match"], "reference_answers": {"must_include": "yjlou"}}),
     "eval.reference_answers.must_include", ["yjlou"]),
    (_task(eval={"eval_types": ["string_match"], "reference_answers": {"fuzzy_match": "yjlou"}}),
     "eval.reference_answers.fuzzy_match", ["yjlou"]),
])
def test_a_single_string_where_a_list_is_expected_is_a_one_item_list(entry, field, read_as):
    read = parse_task_configs([entry], "lite.json")

    (config,) = read.configs
    (note,) = read.notes
    assert (note.entry, note.field, note.message) == (1, field, READ_AS_LIST)
    value = config.config
    for part in field.split("."):
        value = value[part]
    assert value == read_as
    assert config.requirements in ([], read_as)
    with pytest.raises(TaskConfigError, match=rf"refused by --strict(?s:.*)field '{field}'"):
        read.checked("lite.json", strict=True)


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
