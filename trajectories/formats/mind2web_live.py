"""Mind2Web-Live task files (github.com/iMeanAI/WebCanvas): live-web tasks with key-node checkpoints.

Each entry `{index, task, reference_task_length, evaluation: [{match_function_name, content}]}`
becomes a task of the benchmark `mind2web-live`: id = `index`, intent = `task`, site = the host
of the first checkpoint URL, `reference_length` = the human path's length and `key_nodes` =
`evaluation` as published (Key-node Completion reads them).
"""

import urllib.parse

from .webarena_tasks import BenchmarkTasks, TaskConfig, TaskEntries, _Checker, _type_name, checked_entries

BENCHMARK = "mind2web-live"
TASKS = BenchmarkTasks(BENCHMARK)
MATCH_FUNCTIONS = (
    "url_included_match",
    "url_exactly_match",
    "url_semantic_match",
    "element_path_exactly_match",
    "element_value_exactly_match",
    "element_value_semantic_match",
)


def is_mind2web_live_entry(raw) -> bool:
    return isinstance(raw, dict) and "evaluation" in raw and "reference_task_length" in raw


def _check_key_node(check: _Checker, where: str, node) -> None:
    if not isinstance(node, dict):
        check.fail(where, f"expected an object, got {_type_name(node)}")
        return
    name = node.get("match_function_name")
    if name not in MATCH_FUNCTIONS:
        check.fail(f"{where}.match_function_name",
                   f"unknown match function {name!r} (known: {', '.join(MATCH_FUNCTIONS)})")
    content = node.get("content")
    if not isinstance(content, dict):
        check.fail(f"{where}.content", f"expected an object, got {_type_name(content)}")
        return
    if not isinstance(content.get("reference_answer"), str):
        check.fail(f"{where}.content.reference_answer",
                   f"expected a string, got {_type_name(content.get('reference_answer'))}")
    for optional in ("url", "key", "netloc"):
        if optional in content and not isinstance(content[optional], str):
            check.fail(f"{where}.content.{optional}", f"expected a string, got {_type_name(content[optional])}")


def _site(nodes: list[dict]) -> list[str]:
    for node in nodes:
        host = urllib.parse.urlparse(node["content"].get("url") or "").hostname or ""
        if host:
            return [host.removeprefix("www.")]
    return []


def parse_mind2web_live_tasks(entries: list) -> TaskEntries:
    result = TaskEntries()

    def check_fields(check: _Checker, raw: dict) -> None:
        check.expect(raw, "task", (str,), "a string", required=True)
        if isinstance(raw.get("task"), str) and not raw["task"].strip():
            check.fail("task", "empty")
        check.expect(raw, "reference_task_length", (int,), "an integer", required=True)
        if isinstance(raw.get("reference_task_length"), int) and raw["reference_task_length"] < 0:
            check.fail("reference_task_length", "negative")
        nodes = raw.get("evaluation")
        if not isinstance(nodes, list) or not nodes:
            check.fail("evaluation", "expected a non-empty list of key nodes")
        else:
            for position, node in enumerate(nodes):
                _check_key_node(check, f"evaluation[{position}]", node)

    for raw, key in checked_entries(entries, check_fields, result, id_field="index", id_types=(int,),
                                    id_expected="an integer"):
        index, nodes = raw["index"], raw["evaluation"]
        result.configs.append(TaskConfig(
            benchmark=BENCHMARK, task_id=key, number=index, old_task_id="", intent=raw["task"].strip(),
            intent_template="", intent_template_id=None, instantiation={}, sites=_site(nodes), start_url="",
            require_login=False, require_reset=False, eval_types=[], eval_config={}, config=raw,
            key_nodes=nodes, reference_length=raw["reference_task_length"],
        ))
    return result
