"""Template filters for task pages: WebArena-Verified evaluators and JSON values, shown escaped."""

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
