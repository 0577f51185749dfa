"""Task files beyond WebArena, read from the real excerpts of FORMATS.md section 5."""

import json

import pytest

from trajectories.formats import webarena_verified
from trajectories.formats.task_files import benchmark_tasks, parse_subset_ids, parse_task_file, read_task_file
from trajectories.formats.webarena_tasks import READ_AS_LIST, TaskConfigError

MORE = "more-benchmarks"


@pytest.fixture(scope="module")
def verified_entries(shared_data):
    return json.loads((shared_data / MORE / "webarena-verified.excerpt.json").read_text(encoding="utf-8"))


def test_verified_tasks_keep_their_ids_revision_placeholders_and_evaluators(shared_data):
    parsed = read_task_file(shared_data / MORE / "webarena-verified.excerpt.json")
    assert parsed.kind == "webarena-verified" and not parsed.subsets
    by_id = {config.task_id: config for config in parsed.configs}
    assert sorted(by_id, key=int) == ["0", "3", "44", "102", "398", "506", "524", "526"]
    assert {config.benchmark for config in parsed.configs} == {"webarena-verified"}
    first = by_id["0"]
    assert (first.revision, first.start_url, first.number) == (2, "__SHOPPING_ADMIN__", 0)
    assert first.eval_types == ["AgentResponseEvaluator"]
    response = webarena_verified.agent_response_evaluator(first.eval_config)
    assert response["expected"] == {"task_type": "retrieve", "status": "SUCCESS",
                                    "retrieved_data": ["Quest Lumaflex™ Band"]}
    assert by_id["524"].eval_types == ["AgentResponseEvaluator", "NetworkEventEvaluator"]
    requests = webarena_verified.network_requirements(by_id["524"].eval_config)
    assert len(requests) == 8 and requests[0]["expected"]["url"] == "__GITLAB__/umano/AndroidSlidingUpPanel/toggle_star.json"
    assert not any(config.unachievable for config in parsed.configs)


def test_a_bad_verified_entry_is_skipped_naming_the_file_entry_and_field(verified_entries):
    broken = json.loads(json.dumps(verified_entries))
    broken[2]["eval"][1]["expected"] = {"http_method": "POST"}
    del broken[5]["revision"]
    broken[6]["eval"][0]["expected"]["status"] = ""

    parsed = parse_task_file(broken, "verified.json")

    assert [config.task_id for config in parsed.configs] == ["0", "3", "102", "398", "526"]
    skipped = [str(problem) for problem in parsed.skipped]
    assert skipped[0].startswith("task 44 (entry 3): field 'eval[1].expected.url'")
    assert "task 506 (entry 6): field 'revision': missing" in skipped
    assert skipped[2].startswith("task 524 (entry 7): field 'eval[0].expected.status'")
    with pytest.raises(TaskConfigError) as caught:
        parse_task_file(broken, "verified.json", strict=True)
    assert str(caught.value).startswith("verified.json: 3 entries not read as written (refused by --strict)")
    assert "task 506 (entry 6): field 'revision': missing" in str(caught.value)


def test_a_verified_task_needs_exactly_one_agent_response_evaluator(verified_entries):
    entry = json.loads(json.dumps(verified_entries[0]))
    entry["eval"].append(dict(entry["eval"][0]))
    with pytest.raises(TaskConfigError, match=r"field 'eval': expected exactly one AgentResponseEvaluator, found 2"):
        parse_task_file([entry], "two.json")


def test_what_the_audit_changed_against_webarena(shared_data, verified_entries):
    webarena = {str(raw["task_id"]): raw for raw in
                json.loads((shared_data / "webarena" / "test.raw.json").read_text(encoding="utf-8"))}
    verified = {config.task_id: config for config in parse_task_file(verified_entries, "v.json").configs}

    def changes(task_id):
        base, new = webarena[task_id], verified[task_id]
        return {change.field: change for change in webarena_verified.changes_against_webarena(
            {"intent": base["intent"], "eval_types": base["eval"]["eval_types"], "eval_config": base["eval"]},
            {"intent": new.intent, "eval_types": new.eval_types, "eval_config": new.eval_config})}

    task_0 = changes("0")
    assert task_0["intent"].changed and task_0["intent"].verified == "Get the top-1 best-selling product name(s) in 2022"
    assert not task_0["expected answer"].changed  # the same product, written with and without "™" spacing
    assert not task_0["evaluator"].changed  # string_match became the structured answer check
    task_3 = changes("3")
    assert task_3["expected answer"].changed  # alternatives for the tied second product
    assert "Cruise Stasis Ball 65 cm" in task_3["expected answer"].verified
    assert "NetworkEventEvaluator x8" in changes("524")["evaluator"].verified


def test_lite_tasks_define_the_webarena_lite_subset_by_old_task_id(shared_data):
    parsed = read_task_file(shared_data / MORE / "webarena-lite.excerpt.json")
    assert parsed.kind == "webarena-lite"
    assert [config.benchmark for config in parsed.configs] == ["webarena-lite"] * 5
    (subset,) = parsed.subsets
    assert (subset.name, subset.benchmark, subset.task_ids) == ("webarena-lite", "webarena", ("4", "7", "15", "20", "23"))


def test_mind2web_live_tasks_carry_key_nodes_and_reference_length(shared_data):
    parsed = read_task_file(shared_data / MORE / "mind2web-live.excerpt.json")
    assert parsed.kind == "mind2web-live"
    first, _, imdb = parsed.configs
    assert (first.task_id, first.reference_length, first.sites) == ("0", 8, ["gamestop.com"])
    assert first.intent.startswith("Find the store location and hours of the closest Gamestop")
    assert [node["match_function_name"] for node in first.key_nodes] == ["url_included_match", "url_exactly_match"]
    assert len(imdb.key_nodes) == 5 and imdb.key_nodes[2]["content"]["netloc"] == "imdb"


def test_a_bad_key_node_names_the_entry_and_field(shared_data):
    entries = json.loads((shared_data / MORE / "mind2web-live.excerpt.json").read_text(encoding="utf-8"))
    entries[1]["evaluation"][2]["match_function_name"] = "url_fuzzy_match"
    entries[2]["reference_task_length"] = "8"
    assert [config.task_id for config in parse_task_file(entries, "live.json").configs] == ["0"]
    with pytest.raises(TaskConfigError) as caught:
        parse_task_file(entries, "live.json", strict=True)
    message = str(caught.value)
    assert "task 1 (entry 2): field 'evaluation[2].match_function_name': unknown match function 'url_fuzzy_match'" in message
    assert "task 2 (entry 3): field 'reference_task_length': expected an integer, got str" in message


@pytest.mark.parametrize("text, ids", [
    (b"[4, 7, 15]", ("4", "7", "15")),
    (b'{"task_ids": ["4", 7]}', ("4", "7")),
    (b"4\n7, 15\n4\n", ("4", "7", "15")),
    (b'{"name": "webarena-verified-hard", "description": "hard", "task_ids": [4, 7], "checksum": "x"}', ("4", "7")),
    (b'[{"task_id": 4, "intent": "..."}, {"task_id": 7}]', ("4", "7")),
])
def test_id_lists_in_every_accepted_shape(text, ids):
    read = parse_subset_ids(text, "hard.txt")
    assert (read.task_ids, read.skipped, read.notes) == (ids, (), ())


def test_a_bad_id_is_skipped_naming_the_entry():
    read = parse_subset_ids(b'[1, {"id": 2}, 3]', "hard.json")
    assert read.task_ids == ("1", "3")
    assert [str(problem) for problem in read.skipped] == [
        "task {'id': 2} (entry 2): field 'task_id': expected an integer or an id of letters, digits, _.:-"]
    with pytest.raises(TaskConfigError, match=r"(?s)hard.json: 1 entry not read as written \(refused by --strict\)"
                                              r".*\(entry 2\): field 'task_id'"):
        parse_subset_ids(b'[1, {"id": 2}, 3]', "hard.json", strict=True)
    with pytest.raises(TaskConfigError, match=r"(?s)hard.json: 1 invalid task entry.*\(entry 1\): field 'task_id'"):
        parse_subset_ids(b'[{"id": 2}]', "hard.json")
    with pytest.raises(TaskConfigError, match="hard.json: no task ids"):
        parse_subset_ids(b"[]", "hard.json")


def test_a_single_id_where_a_list_is_expected_is_a_one_item_list():
    read = parse_subset_ids(b'{"name": "one", "task_ids": "44"}', "one.json")
    assert read.task_ids == ("44",)
    assert [(note.field, note.message) for note in read.notes] == [("task_ids", READ_AS_LIST)]
    with pytest.raises(TaskConfigError, match="refused by --strict"):
        parse_subset_ids(b'{"name": "one", "task_ids": "44"}', "one.json", strict=True)


def test_each_task_file_reader_says_where_its_benchmarks_tasks_come_from():
    listed = ("webarena", "webarena-lite", "webarena-verified", "mind2web-live")
    assert [name for name in listed if benchmark_tasks(name).from_task_list] == list(listed)
    assert not any(benchmark_tasks(name).named_by_results or benchmark_tasks(name).original_task_id for name in listed)
    online = benchmark_tasks("online-mind2web")
    assert (online.from_task_list, online.named_by_results) == (False, True)
    assert online.original_task_id("5b2c6a1e_110325") == "5b2c6a1e"
    # A benchmark without a reader of its task file: tasks from its results, no versions.
    unknown = benchmark_tasks("workarena")
    assert (unknown.from_task_list, unknown.named_by_results, unknown.original_task_id) == (False, False, None)
