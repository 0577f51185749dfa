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


# AgentRewardBench's annotations.csv carries no licence and is not in ../shared: rows are written here from its
# documented columns (SOURCES.md), one per annotator and trajectory, with WorkArena++ task ids as BrowserGym
# names them (`workarena.servicenow.<task>-l<level>`, 80 of the file's 451 ids longer than 64 characters, up
# to 106 with their prefix).
ANNOTATION_COLUMNS = ("annotator_name", "benchmark", "task_id", "model_name", "exp_name", "trajectory_success",
                      "trajectory_side_effect", "trajectory_optimality", "trajectory_looping")
GPT_WORKARENA, GPT_WEBARENA, CLAUDE_WORKARENA = (
    "GenericAgent-gpt-4o-2024-11-20_on_workarena_l2", "GenericAgent-gpt-4o-2024-11-20_on_webarena",
    "GenericAgent-claude-3.7-sonnet_on_workarena_l2")


def workarena_task_id(length: int, number: int) -> str:
    """A WorkArena++ task id of `length` characters, prefix included."""
    text = f"workarena.servicenow.dashboard-retrieve-catalog-and-order-{number}-" + "then-filter-and-sort-the-list-" * 4
    return text[:length - 3] + "-l2"


WORKARENA_IDS = tuple(workarena_task_id(length, number) for number, length in enumerate((80, 96, 106)))


def annotations_csv() -> str:
    """Seven rows: three WorkArena++ trajectories of gpt-4o (two labelled by a pair of annotators), one WebArena
    trajectory of gpt-4o, one WorkArena++ trajectory of Claude."""
    short, middle, longest = WORKARENA_IDS
    rows = [
        ("ann1", "workarena", short, "gpt-4o-2024-11-20", GPT_WORKARENA, "Successful", "No", "4. Optimal", "No"),
        ("ann2", "workarena", short, "gpt-4o-2024-11-20", GPT_WORKARENA, "Unsuccessful", "No", "3. Somewhat Optimal",
         "No"),
        ("ann1", "workarena", middle, "gpt-4o-2024-11-20", GPT_WORKARENA, "Unsuccessful", "Yes", "2. Suboptimal", "Yes"),
        ("ann1", "workarena", longest, "gpt-4o-2024-11-20", GPT_WORKARENA, "Unsure", "No", "4. Optimal", "No"),
        ("ann2", "workarena", longest, "gpt-4o-2024-11-20", GPT_WORKARENA, "Successful", "No", "4. Optimal", "No"),
        ("ann1", "webarena", "webarena.310", "gpt-4o-2024-11-20", GPT_WEBARENA, "Successful", "No", "4. Optimal", "No"),
        ("ann1", "workarena", longest, "claude-3.7-sonnet", CLAUDE_WORKARENA, "Unsuccessful", "Yes",
         "1. Complete Failure", "Yes"),
    ]
    return "\n".join(",".join(row) for row in (ANNOTATION_COLUMNS, *rows)) + "\n"
