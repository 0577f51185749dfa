"""Template filters for task and trajectory pages: WebArena-Verified evaluators, JSON values and what a
step or a trajectory cost, shown escaped."""

import json

from django import template

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
