"""Who&When (ICML 2025, "Which Agent Causes Task Failures and When?", ag2ai/Agents_Failure_Attribution):
failed multi-agent logs, each with the decisive error labelled by the benchmark's annotators.

One failed task per JSON file: `history`, the conversation as messages `{content, role, name}`; the
hand-crafted layout (Magentic-One) names the speaker in `role` (`"Orchestrator (thought)"`,
`"WebSurfer"`), the algorithm-generated one (CaptainAgent expert teams) in `name`. `question` is the
task, `question_ID` its GAIA (a UUID) or AssistantBench (a SHA-256) id, `ground_truth` its reference
answer. `mistake_agent`, `mistake_step` (0-based index into `history`, as a string) and
`mistake_reason` become the trajectory's failure label; the hand-crafted layout's occasional
`mistake_type` is kept in its reason, since it is not a type of the platform's taxonomy.

One step per message: the speaker without its parenthesised aside is the step's agent (so that
"Orchestrator (thought)" is the Orchestrator that `mistake_agent` names), the speaker as written its
action, the message its reasoning, and the page a WebSurfer reports ("Here is a screenshot of
[title](url)") its URL. Every log is a failure by construction: the outcome is a failure, by the data set.
"""

import re

from .canonical import (TASK_ID_MAX_LENGTH, ActionParts, FailureLabel, Outcome, RunInfo, Step, TaskRef, Trajectory,
                        TrajectoryFormatError)

FORMAT = "who_and_when"
LABEL_SOURCE = "Who&When annotators"
VERDICT_BY = "Who&When (every log is a failed task)"
GAIA, ASSISTANTBENCH = "gaia", "assistantbench"
HAND_CRAFTED, ALGORITHM_GENERATED = "Magentic-One", "CaptainAgent"
MESSAGE = "message"
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_SHA256 = re.compile(r"[0-9a-f]{64}")
_ASIDE = re.compile(r"\s*\([^()]*\)\s*$")
_PAGE = re.compile(r"Here is a screenshot of \[[^\]]*\]\((https?://[^)\s]+)\)")
_FINAL_ANSWER = re.compile(r"FINAL ANSWER:[ \t]*([^\n]*)")


def looks_like_log(document: object) -> bool:
    return (isinstance(document, dict) and isinstance(document.get("history"), list)
            and {"question", "question_ID"} <= document.keys())


def _text(document: dict, key: str, where: str | None = None) -> str:
    value = document.get(key)
    if value is None:
        return ""
    if isinstance(value, (dict, list)):
        raise TrajectoryFormatError(f"expected text, got a {type(value).__name__}", where=where or key)
    return str(value)


def benchmark_of(question_id: str) -> str:
    """GAIA names its questions by UUID, AssistantBench by SHA-256."""
    if _UUID.fullmatch(question_id):
        return GAIA
    if _SHA256.fullmatch(question_id):
        return ASSISTANTBENCH
    raise TrajectoryFormatError(f"{question_id[:80]!r} is neither a GAIA id (a UUID) nor an AssistantBench id "
                                "(64 hexadecimal digits)", where="question_ID")


def speaker_agent(speaker: str) -> str:
    """"Orchestrator (-> WebSurfer)" is the Orchestrator speaking."""
    return _ASIDE.sub("", speaker).strip() or speaker.strip()


def _steps(history: list) -> list[Step]:
    steps = []
    for position, message in enumerate(history):
        where = f"history[{position}]"
        if not isinstance(message, dict):
            raise TrajectoryFormatError("expected a message object", where=where)
        speaker = (_text(message, "name", f"{where}.name") or _text(message, "role", f"{where}.role")).strip()
        if not speaker:
            raise TrajectoryFormatError("the message names no speaker (neither name nor role)", where=where)
        content = _text(message, "content", f"{where}.content")
        page = _PAGE.search(content)
        steps.append(Step(index=position + 1, action=speaker, reasoning=content, url=page.group(1) if page else "",
                          action_parts=ActionParts(type=MESSAGE), agent=speaker_agent(speaker)))
    return steps


def _label(document: dict, steps: list[Step]) -> list[FailureLabel]:
    raw = _text(document, "mistake_step").strip()
    if not raw and not document.get("mistake_agent"):
        return []
    if not raw.isdigit() or int(raw) >= len(steps):
        raise TrajectoryFormatError(f"{raw[:20]!r} is not the index of one of the {len(steps)} messages of history",
                                    where="mistake_step")
    reason = _text(document, "mistake_reason").strip()
    if mistake_type := _text(document, "mistake_type").strip():
        reason = f"{reason} (mistake type: {mistake_type})" if reason else f"mistake type: {mistake_type}"
    return [FailureLabel(source=LABEL_SOURCE, step=int(raw) + 1, agent=_text(document, "mistake_agent").strip(),
                         reason=reason)]


def _final_answer(history: list) -> str | None:
    """The team's last "FINAL ANSWER:", where one was given."""
    for message in reversed(history):
        found = _FINAL_ANSWER.search(str(message.get("content") or ""))
        if found:
            return found.group(1).strip()
    return None


def parse_log(document: dict) -> Trajectory:
    question_id = _text(document, "question_ID").strip()
    if not question_id or len(question_id) > TASK_ID_MAX_LENGTH:
        raise TrajectoryFormatError(f"a task id of 1 to {TASK_ID_MAX_LENGTH} characters is needed", where="question_ID")
    history = document["history"]
    if not history:
        raise TrajectoryFormatError("the conversation has no messages", where="history")
    steps = _steps(history)
    layout = ALGORITHM_GENERATED if any(isinstance(m, dict) and m.get("name") for m in history) else HAND_CRAFTED
    final_answer = _final_answer(history)
    meta = {"layout": "algorithm-generated" if layout == ALGORITHM_GENERATED else "hand-crafted"}
    if document.get("level") is not None:
        meta["gaia_level"] = _text(document, "level")
    return Trajectory(
        run=RunInfo(agent=layout, paradigm="other", meta=meta),
        task=TaskRef(task_id=question_id, benchmark=benchmark_of(question_id),
                     intent=_text(document, "question").strip(),
                     reference_answer=_text(document, "ground_truth").strip()),
        steps=steps,
        final_answer=final_answer,
        outcome=Outcome(status="answered" if final_answer is not None else "no_stop", success=False, source=VERDICT_BY),
        failure_labels=_label(document, steps),
    )
