"""Template filters for task and trajectory pages: WebArena-Verified evaluators, JSON values, icon
glyphs and what a step or a trajectory cost, shown escaped."""

import json
import re

from django import template
from django.utils.html import escape
from django.utils.safestring import mark_safe

from trajectories.formats.webarena_verified import agent_response_evaluator, network_requirements

register = template.Library()


@register.filter
def agent_response(eval_config) -> dict | None:
    return agent_response_evaluator(eval_config or {})


@register.filter(name="network_requirements")
def network_requirements_filter(eval_config) -> list[dict]:
    return network_requirements(eval_config or {})


@register.filter
def as_json(value) -> str:
    """Compact JSON text; autoescaping still applies where it is rendered."""
    return json.dumps(value, ensure_ascii=False)


@register.filter
def usage(item) -> str:
    """"1200 tokens in · 80 out · $0.0042 · 3.1 s" of a step or a trajectory, for what it records;
    empty when it records none."""
    parts = []
    if item.tokens_in is not None:
        parts.append(f"{item.tokens_in} tokens in")
    if item.tokens_out is not None:
        parts.append(f"{item.tokens_out} {'out' if parts else 'tokens out'}")
    if item.cost is not None:
        parts.append(f"${item.cost:.4f}")
    if item.duration is not None:
        parts.append(f"{item.duration:.1f} s")
    return " · ".join(parts)
# Icon-font glyphs from accessibility trees: private-use characters, or the harness's literal `\ue644`.
_GLYPH = re.compile(r"\\u[eEfF][0-9a-fA-F]{3}|[\ue000-\uf8ff]")


@register.filter
def visible_glyphs(text) -> str:
    """The text escaped, each icon glyph shown as a visible placeholder naming its code point."""
    parts, last = [], 0
    text = "" if text is None else str(text)
    for match in _GLYPH.finditer(text):
        glyph = match.group()
        code = glyph[2:].upper() if glyph.startswith("\\") else f"{ord(glyph):04X}"
        parts += [escape(text[last:match.start()]),
                  f'<span class="glyph" title="an icon (U+{code}) from the page\'s accessibility tree">[icon]</span>']
        last = match.end()
    parts.append(escape(text[last:]))
    return mark_safe("".join(parts))


# What an import report's entries are, in words: a count of files mixes trajectories with tables and logs.
_ENTRY_KINDS = {
    "trajectory": ("trajectory", "trajectories"),
    "results": ("results file", "results files"),
    "harness_verdict": ("harness verdict file", "harness verdict files"),
    "run_description": ("run description", "run descriptions"),
    "harness_config": ("harness configuration", "harness configurations"),
}


@register.filter
def report_counts(report: dict) -> list[tuple[str, str]]:
    """[(status, "2 trajectories imported")] of an import report (`ImportReport.to_dict`), each status
    counted per kind of entry; a status no entry has is said once ("0 failed")."""
    counted: dict[tuple[str, str], int] = {}
    for entry in report.get("files", []):
        key = (entry["status"], entry.get("kind", "trajectory"))
        counted[key] = counted.get(key, 0) + 1
    found = []
    for status in report.get("counts", {}):
        kinds = [(kind, count) for (each, kind), count in counted.items() if each == status]
        if not kinds:
            found.append(("none", f"0 {status}"))
        for kind, count in kinds:
            one, many = _ENTRY_KINDS.get(kind, ("other file", "other files"))
            found.append((status, f"{count} {one if count == 1 else many} {status}"))
    return found


# Formats in words, for pages: the codes (`browser_use_history`) stay in the API and the exports.
FORMAT_NAMES = {
    "webarena_render": "WebArena render HTML",
    "webarena_format_trace": "WebArena format trace",
    "webarena_html2json": "WebArena html2json",
    "webarena_results": "WebArena results log",
    "webarena_log_list": "WebArena list of logs",
    "webarena_config": "WebArena harness configuration",
    "trajectory_v1_json": "trajectory/v1 JSON",
    "trajectory_v1_jsonl": "trajectory/v1 JSONL",
    "trajectory_v1_run": "trajectory/v1 run description",
    "browsergym_agentlab": "BrowserGym / AgentLab episode",
    "agentlab_study_results": "AgentLab study results table",
    "browser_use_history": "browser-use history",
    "webarena_infinity_result": "WebArena-Infinity result",
    "webvoyager_messages": "WebVoyager messages",
    "online_mind2web_result": "Online-Mind2Web result",
    "online_mind2web_other": "Online-Mind2Web file",
    "agent_e_evaluation": "Agent-E evaluation record",
    "online_mind2web_human_labels": "Online-Mind2Web human labels",
    "webjudge": "WebJudge output",
    "browser_use_judge": "browser-use judge result",
    "agent_e": "Agent-E evaluation records",
    "agent_reward_bench_annotations": "AgentRewardBench annotations",
    "agent_reward_bench_judge": "AgentRewardBench judge file",
    "outcomes": "table of per-task results",
    "grades": "table of graders' marks",
}


@register.filter
def format_name(code: str) -> str:
    return FORMAT_NAMES.get(code, code)


# What a harness wrote about how it stopped, as `field: value`, for fields that need saying in words.
_HARNESS_FIELDS = {
    "result_status": "the agent's session ended with status “{}” (how the session ended, not whether the task was done)",
}


@register.filter
def harness_message(message: str) -> str:
    field, _, value = message.partition(": ")
    return _HARNESS_FIELDS[field].format(value) if field in _HARNESS_FIELDS and value else message
