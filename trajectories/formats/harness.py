"""What the WebArena harness writes beside the render files: result logs and the run's `config.json`."""

import re
from dataclasses import dataclass, field

from .canonical import TASK_ID_MAX_LENGTH, TrajectoryFormatError, check_depth

# "2024-05-01 10:00:00,000 - INFO - [Result] (PASS) config_files/3.json"
_RESULT = re.compile(r"\[Result\]\s*\(?(PASS|FAIL)\)?\s+(\S*?)([^/\\\s]+?)\.json\b")
# Arguments that never describe the agent and may hold credentials or local paths.
_PRIVATE = re.compile(r"key|token|secret|password|credential", re.I)


def parse_results(text: str) -> dict[str, bool]:
    """Task id -> passed, from every `[Result] PASS|FAIL config_files/<id>.json` line (the last one wins)."""
    return {match.group(3): match.group(1) == "PASS" for match in _RESULT.finditer(text)
            if len(match.group(3)) <= TASK_ID_MAX_LENGTH}


@dataclass
class HarnessConfig:
    """The run's `config.json`: the harness's command-line arguments."""

    model: str = ""
    prompt: str = ""
    arguments: dict = field(default_factory=dict)


def parse_harness_config(document: object) -> HarnessConfig:
    if not isinstance(document, dict):
        raise TrajectoryFormatError("expected a JSON object of the harness's arguments", where="(document)")
    check_depth(document)
    arguments = {key: value for key, value in document.items() if not _PRIVATE.search(str(key))}
    model, prompt = arguments.get("model", ""), arguments.get("instruction_path", "")
    return HarnessConfig(
        model=model if isinstance(model, str) else "",
        prompt=prompt if isinstance(prompt, str) else "",
        arguments=arguments,
    )
