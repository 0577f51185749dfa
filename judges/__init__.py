"""Judges: one interface over the `exact`, `offline` and `openai` backends, with a decision store.

`judges.get_judge(config=None)` is `judges.services.get_judge`, imported on first use so that
loading this app does not import its models early.
"""


def __getattr__(name):
    if name == "get_judge":
        from .services import get_judge

        return get_judge
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
