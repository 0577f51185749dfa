"""One step as a judge sees it, from either side of a comparison (Django-free)."""

from dataclasses import dataclass


@dataclass(frozen=True)
class JudgeStep:
    """A gold step (free text, optionally structured) or an agent step (executed action).

    For an agent step, `text` is the executed action string and `observation` the accessibility
    tree the agent saw at that step, used to resolve `element_id` into a role and a name.
    """

    text: str
    action_type: str = ""
    element_id: str = ""
    element_role: str = ""
    element_name: str = ""
    value: str = ""
    observation: str = ""
    url: str = ""
