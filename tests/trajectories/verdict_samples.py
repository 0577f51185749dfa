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


# AgentRewardBench's judge files are not in ../shared either: they are written here as its
# `scripts/run_judge.py` writes them (McGill-NLP/agent-reward-bench), one per trajectory at
# `<benchmark>/<agent>/<judge>/<task id>.json`, the task named only by the file name: the trajectory's
# benchmark, goal and agent, the judge's name and model, the chat it was sent (its system prompt lists the
# answers it may give) and its chat completion as the OpenAI SDK dumps it. A request that failed leaves
# `<task id>_error.json` with the error and the chat instead.
JUDGE_AGENT, JUDGE_NAME, JUDGE_MODEL = "GenericAgent-gpt-4o-2024-11-20", "gpt-4o-noaxtree", "gpt-4o-2024-11-20"
JUDGE_SYSTEM_PROMPT = (
    "You are a Language Model specialized in judging the performance of web agents in web navigation tasks. ...\n"
    "Question 1: Was the sequence of actions below successful in achieving the goal?\n"
    "Choices: <success>Successful</success>, <success>Unsuccessful</success>\n...\n"
    "<reasoning>your reasoning here</reasoning>\n<success>answer</success>\n<side>answer</side>\n"
    "<optimal>answer</optimal>\n<loop>answer</loop>")


def judge_completion(success: str, side: str = "No", optimal: str = "4. Completely Optimal", loop: str = "No") -> str:
    return (f"<reasoning>The agent reached the page the goal asks for and stopped there.</reasoning>\n"
            f"<success>{success}</success>\n<side>{side}</side>\n<optimal>{optimal}</optimal>\n<loop>{loop}</loop>")


def _chat(goal: str) -> list[dict]:
    return [{"role": "system", "content": JUDGE_SYSTEM_PROMPT},
            {"role": "user", "content": [
                {"type": "text", "text": f"The user goal is: {goal}\n"},
                {"type": "text", "text": "The agent performed the following actions:\n-----\nStep: 1\nURL: "
                                         "http://localhost:7780/\nAction: click('42')\nReasoning: Open the menu.\n-----"},
                {"type": "text", "text": "Here is the screenshot of the last step."},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}},
                {"type": "text", "text": "Provide your reasoning and answer the four questions from the system "
                                         "prompt, using the specified format."}]}]


def judge_file(benchmark: str, goal: str, content: str | None, *, reward: float = 1.0) -> dict:
    """One judge file; `content` None: the file of a request that failed."""
    info = {"valid": True, "model": "gpt-4o-2024-11-20", "trajectory_dir": f"trajectories/cleaned/{benchmark}",
            "seed": 0, "model_args": {"model_name": "gpt-4o-2024-11-20", "temperature": 0.1},
            "flags": {"use_ax_tree": True, "use_screenshot": True},
            "summary_info": {"n_steps": 6, "cum_reward": reward, "err_msg": None, "stack_trace": None}}
    if content is None:
        return {"error": "Error code: 400 - {'error': {'message': 'context_length_exceeded'}}",
                "chat_messages": {"regular": _chat(goal), "pruned": _chat(goal)}, "trajectory_info": info}
    return {
        "benchmark": benchmark, "goal": goal, "agent": JUDGE_AGENT, "judge": JUDGE_NAME, "judge_model_name": JUDGE_MODEL,
        "provider": "openai", "judge_args": {"use_screenshot": True, "use_axtree": False, "invert_sys_prompt": False},
        "completion_args": {"max_completion_tokens": 1024, "temperature": 0.0, "seed": 0},
        "cost": {"input": 0.0125, "output": 0.0012, "total": 0.0137},
        "response": {
            "id": "chatcmpl-B1x", "created": 1741100000, "model": JUDGE_MODEL, "object": "chat.completion",
            "service_tier": "default", "system_fingerprint": "fp_f9f4fb6dbf",
            "choices": [{"finish_reason": "stop", "index": 0, "logprobs": None, "message": {
                "content": content, "refusal": None, "role": "assistant", "annotations": [], "audio": None,
                "function_call": None, "tool_calls": None}}],
            "usage": {"completion_tokens": 96, "prompt_tokens": 4977, "total_tokens": 5073}},
        "chat_messages": _chat(goal),
        "trajectory_info": info,
    }


def write_judgments(folder: Path, files: dict[str, dict]) -> Path:
    """`files` {path under the judgments folder: document}, written as run_judge.py lays them out."""
    for name, document in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(json.dumps(document))
    return folder
