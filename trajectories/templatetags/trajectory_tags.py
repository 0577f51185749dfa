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
