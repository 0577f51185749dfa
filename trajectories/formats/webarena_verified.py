"""WebArena-Verified task files (github.com/ServiceNow/webarena-verified): the 812 WebArena tasks re-audited.

A Verified task keeps its WebArena `task_id` and is stored as its own version of that task,
in the benchmark `webarena-verified`. What it adds: a `revision`, `start_urls` with site
placeholders (`__GITLAB__`), and an `eval` list of evaluators:
- `AgentResponseEvaluator` (exactly one): the structured answer expected of the agent,
  `{task_type, status, retrieved_data}`, with the `results_schema` of `retrieved_data` (absent
  where the status is not a success, as upstream reads it: null);
- `NetworkEventEvaluator` (any number): an HTTP request the agent's browser must have made.
Both are stored as published, under `eval_config["evaluators"]`; `eval_types` lists the
evaluator names in file order. `changes_against_webarena` says per task what the audit changed.
"""

import json
from dataclasses import dataclass

from .webarena_tasks import BenchmarkTasks, TaskConfig, TaskEntries, _Checker, _is_str_list, _type_name, checked_entries

BENCHMARK = "webarena-verified"
BASE_BENCHMARK = "webarena"
TASKS = BenchmarkTasks(BENCHMARK)
AGENT_RESPONSE = "AgentResponseEvaluator"
NETWORK_EVENT = "NetworkEventEvaluator"
EVALUATORS = (AGENT_RESPONSE, NETWORK_EVENT)
START_URL_SEPARATOR = " |AND| "  # as WebArena writes several start URLs
SUCCESS_STATUS = "success"


def is_verified_entry(raw) -> bool:
    """Verified entries carry `start_urls` and an `eval` list (WebArena: `start_url`, an `eval` object)."""
    return isinstance(raw, dict) and "start_urls" in raw and isinstance(raw.get("eval"), list)


def _check_agent_response(check: _Checker, where: str, evaluator: dict) -> None:
    expected = evaluator.get("expected")
    if not isinstance(expected, dict):
        check.fail(f"{where}.expected", f"expected an object, got {_type_name(expected)}")
        return
    for name in ("task_type", "status"):
        if not isinstance(expected.get(name), str) or not expected[name].strip():
            check.fail(f"{where}.expected.{name}", "expected a non-empty string")
    if "retrieved_data" not in expected:
        status = expected.get("status")
        if isinstance(status, str) and status.strip().lower() == SUCCESS_STATUS:
            check.fail(f"{where}.expected.retrieved_data", "missing (a successful answer names what it retrieved)")
        else:
            expected["retrieved_data"] = None  # upstream reads it so when nothing is to be retrieved
    schema = evaluator.get("results_schema")
    if schema is not None and not isinstance(schema, dict):
        check.fail(f"{where}.results_schema", f"expected an object, got {_type_name(schema)}")
    if "ordered" in evaluator and not isinstance(evaluator["ordered"], bool):
        check.fail(f"{where}.ordered", "expected true or false")


def _check_network_event(check: _Checker, where: str, evaluator: dict) -> None:
    expected = evaluator.get("expected")
    if not isinstance(expected, dict):
        check.fail(f"{where}.expected", f"expected an object, got {_type_name(expected)}")
        return
    url = expected.get("url")
    if not (isinstance(url, str) and url.strip()) and not (_is_str_list(url) and url):
        check.fail(f"{where}.expected.url", "expected a URL or a non-empty list of URLs")


def _check_eval(check: _Checker, raw_eval) -> None:
    if not isinstance(raw_eval, list) or not raw_eval:
        check.fail("eval", "expected a non-empty list of evaluators")
        return
    responses = 0
    for position, evaluator in enumerate(raw_eval):
        where = f"eval[{position}]"
        if not isinstance(evaluator, dict):
            check.fail(where, f"expected an object, got {_type_name(evaluator)}")
            continue
        name = evaluator.get("evaluator")
        if name == AGENT_RESPONSE:
            responses += 1
            _check_agent_response(check, where, evaluator)
        elif name == NETWORK_EVENT:
            _check_network_event(check, where, evaluator)
        else:
            check.fail(f"{where}.evaluator", f"unknown evaluator {name!r} (known: {', '.join(EVALUATORS)})")
    if responses != 1:
        check.fail("eval", f"expected exactly one {AGENT_RESPONSE}, found {responses}")


def agent_response_evaluator(eval_config: dict) -> dict | None:
    """The task's `AgentResponseEvaluator` entry, or None for a task that is not a Verified one."""
    for evaluator in eval_config.get("evaluators") or []:
        if isinstance(evaluator, dict) and evaluator.get("evaluator") == AGENT_RESPONSE:
            return evaluator
    return None


def network_requirements(eval_config: dict) -> list[dict]:
    """The `NetworkEventEvaluator` entries: requests the agent's browser must have made."""
    return [evaluator for evaluator in eval_config.get("evaluators") or []
            if isinstance(evaluator, dict) and evaluator.get("evaluator") == NETWORK_EVENT]


def parse_verified_tasks(entries: list) -> TaskEntries:
    """Verified entries as TaskConfigs of `webarena-verified`; problems name entry and field."""
    result = TaskEntries()

    def check_fields(check: _Checker, raw: dict) -> None:
        check.expect(raw, "intent", (str,), "a string", required=True)
        if isinstance(raw.get("intent"), str) and not raw["intent"].strip():
            check.fail("intent", "empty")
        check.expect(raw, "revision", (int,), "an integer", required=True)
        check.expect(raw, "intent_template", (str,), "a string")
        check.expect(raw, "intent_template_id", (int, type(None)), "an integer")
        check.expect(raw, "instantiation_dict", (dict, type(None)), "an object")
        if not check.string_list(raw, "sites", "sites"):
            check.fail("sites", "missing" if "sites" not in raw else "expected a list of strings")
        if not check.string_list(raw, "start_urls", "start_urls") or not raw["start_urls"]:
            check.fail("start_urls", "expected a non-empty list of strings")
        _check_eval(check, raw.get("eval"))

    for raw, key in checked_entries(entries, check_fields, result):
        task_id = raw["task_id"]
        evaluators = raw["eval"]
        eval_types = list(dict.fromkeys(evaluator["evaluator"] for evaluator in evaluators))
        response = agent_response_evaluator({"evaluators": evaluators})
        result.configs.append(TaskConfig(
            benchmark=BENCHMARK,
            task_id=key,
            number=task_id if isinstance(task_id, int) else (int(key) if key.isdigit() else None),
            old_task_id="",
            intent=raw["intent"].strip(),
            intent_template=raw.get("intent_template") or "",
            intent_template_id=raw.get("intent_template_id"),
            instantiation=raw.get("instantiation_dict") or {},
            sites=list(raw["sites"]),
            start_url=START_URL_SEPARATOR.join(raw["start_urls"]),
            require_login=bool(raw.get("require_login", False)),
            require_reset=bool(raw.get("require_reset", False)),
            eval_types=eval_types,
            eval_config={"eval_types": eval_types, "evaluators": evaluators},
            config=raw,
            unachievable=response["expected"]["status"].strip().lower() != SUCCESS_STATUS,
            revision=raw["revision"],
        ))
    return result


# What the audit changed ---------------------------------------------------------------------

# Which Verified evaluator does the work of each WebArena evaluator.
_EVALUATOR_OF = {"string_match": AGENT_RESPONSE, "url_match": NETWORK_EVENT, "program_html": NETWORK_EVENT}


@dataclass(frozen=True)
class TaskChange:
    """One aspect of a task as WebArena and as WebArena-Verified state it."""

    field: str  # intent | expected answer | evaluator
    webarena: str
    verified: str
    changed: bool


def _flat_strings(value) -> list[str]:
    if value is None:
        return []
    if isinstance(value, (list, tuple)):
        return [text for item in value for text in _flat_strings(item)]
    if isinstance(value, dict):
        return [text for item in value.values() for text in _flat_strings(item)]
    return [str(value)]


def _webarena_answers(eval_config: dict) -> list[str]:
    answers = eval_config.get("reference_answers") or {}
    values = []
    for approach in ("exact_match", "must_include", "fuzzy_match"):
        if approach in answers:
            values.extend(_flat_strings(answers[approach]))
    return values


def _describe_webarena_answer(eval_config: dict) -> str:
    parts = [f"{approach}: {json.dumps(value, ensure_ascii=False)}"
             for approach, value in (eval_config.get("reference_answers") or {}).items()]
    if eval_config.get("reference_url"):
        parts.append(f"reference_url: {eval_config['reference_url']}")
    return "; ".join(parts) or "(none)"


def _describe_verified_answer(eval_config: dict) -> str:
    response = agent_response_evaluator(eval_config) or {}
    parts = [json.dumps(response.get("expected"), ensure_ascii=False)]
    parts += [f"request {json.dumps(item.get('expected', {}).get('url'), ensure_ascii=False)}"
              for item in network_requirements(eval_config)]
    return "; ".join(parts)


def _normal(texts: list[str]) -> set[str]:
    return {" ".join(text.split()).casefold() for text in texts if text.strip()}


def changes_against_webarena(webarena: dict, verified: dict) -> list[TaskChange]:
    """Intent, expected answer and evaluators of one task in both versions.

    Each argument has the task's `intent`, `eval_types` and `eval_config`. The expected answer
    counts as changed when the answer strings differ as sets (ignoring case and spacing); the
    evaluators when WebArena's do not map onto Verified's (`string_match` is the agent
    response check, `url_match` and `program_html` are network-event checks).
    """
    verified_answers = _flat_strings((agent_response_evaluator(verified["eval_config"]) or {})
                                     .get("expected", {}).get("retrieved_data"))
    webarena_evaluators = sorted({_EVALUATOR_OF.get(name, name) for name in webarena["eval_types"]} | {AGENT_RESPONSE})
    verified_evaluators = sorted(set(verified["eval_types"]))
    return [
        TaskChange("intent", webarena["intent"], verified["intent"],
                   " ".join(webarena["intent"].split()) != " ".join(verified["intent"].split())),
        TaskChange("expected answer", _describe_webarena_answer(webarena["eval_config"]),
                   _describe_verified_answer(verified["eval_config"]),
                   _normal(_webarena_answers(webarena["eval_config"])) != _normal(verified_answers)),
        TaskChange("evaluator", ", ".join(webarena["eval_types"]), _describe_verified_evaluators(verified["eval_config"]),
                   webarena_evaluators != verified_evaluators),
    ]


def _describe_verified_evaluators(eval_config: dict) -> str:
    names = [item.get("evaluator") for item in eval_config.get("evaluators") or [] if isinstance(item, dict)]
    return ", ".join(f"{name} x{names.count(name)}" if names.count(name) > 1 else name
                     for name in dict.fromkeys(names))
