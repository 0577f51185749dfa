"""A run folder in `trajectory/v1` carrying what the other tools' readers produce: a harness verdict
named by its source, verdicts of other sources, tokens, cost and time, and a trajectory that is an
outcome only (final answer and verdicts, no steps), on a benchmark whose task list is not imported."""

import json
from pathlib import Path

BENCHMARK = "miniwob"
CLICK_DIALOG = {
    "schema": "trajectory/v1",
    "run": {"name": "genericagent", "agent": "GenericAgent", "model": "gpt-4o-mini"},
    "task": {"benchmark": BENCHMARK, "task_id": "click-dialog", "intent": 'Close the dialog box by clicking the "x".'},
    "steps": [
        {"index": 1, "action": "click [30]", "url": "http://localhost/miniwob/click-dialog.html",
         "reasoning": "The dialog has an x button.", "tokens_in": 1200, "tokens_out": 80, "cost": 0.0021,
         "duration": 3.5},
        {"index": 2, "action": "stop [done]", "url": "http://localhost/miniwob/click-dialog.html",
         "tokens_in": 1300, "tokens_out": 20, "cost": 0.0019, "duration": 1.5},
    ],
    "final_answer": "done",
    "outcome": {"status": "answered", "success": True, "source": "BrowserGym reward"},
    "verdicts": [{"kind": "agent_self_report", "name": "agent self-report", "success": True}],
}
CLICK_CHECKBOXES = {
    "schema": "trajectory/v1",
    "run": {"name": "genericagent"},
    "task": {"benchmark": BENCHMARK, "task_id": "click-checkboxes", "intent": "Select nothing and click Submit."},
    "steps": [],
    "final_answer": "<b>Submitted</b> <script>alert(1)</script>",
    "outcome": {"status": "answered"},
    "verdicts": [
        {"kind": "human", "name": "expert graders", "success": False,
         "explanation": "<img src=x onerror=alert(1)> The box was ticked."},
        {"kind": "llm_judge", "name": "WebJudge", "model": "o4-mini", "success": True, "score": 4, "threshold": 3,
         "explanation": "Key points met."},
        {"kind": "agent_self_report", "name": "agent self-report", "success": None, "label": "not_executable"},
    ],
    "tokens_in": 900, "cost": 0.5, "duration": 12.0,
}


def write_verdict_run(folder: Path) -> Path:
    """The run folder: one file per trajectory, as a reader engineer's sample folder would be."""
    folder.mkdir(parents=True, exist_ok=True)
    for document in (CLICK_DIALOG, CLICK_CHECKBOXES):
        (folder / f"{document['task']['task_id']}.json").write_text(json.dumps(document))
    return folder
