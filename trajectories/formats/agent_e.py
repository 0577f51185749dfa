"""Agent-E's evaluation records (github.com/EmergenceAI/Agent-E, `test/evaluator_results/*.json`).

A JSON list, one record per WebVoyager task: `task_id` (Agent-E's own number of the task, its
position in WebVoyager's task list, read back as WebVoyager's `<site>--<n>` id),
`intent`, `start_url`, `last_statement` (the agent's final answer), `tct` (seconds),
`compute_cost {cost, prompt_tokens, completion_tokens}` (-1 where it was not counted: unknown), the
human evaluators' `score` / `reason`
and, where the file's LLM judge evaluated the task, `pred_score` / `pred_reason`. The steps were
not published: each record is a results-only trajectory carrying its two verdicts; neither is the
harness's, so `outcome.success` stays unset.
"""

import posixpath

from . import values
from .canonical import TASK_ID_MAX_LENGTH, Outcome, RunInfo, TaskRef, Trajectory, TrajectoryFormatError, Verdict
from .online_mind2web import host_of

FORMAT = "agent_e_evaluation"
BENCHMARK = "webvoyager"
AGENT = "Agent-E"
HUMAN = "Agent-E human evaluators"
_REQUIRED = {"task_id", "intent", "last_statement", "score"}
# WebVoyager's 643 tasks in the order Agent-E numbers them (its `test/tasks/webvoyager_test.json`,
# whose `task_alias` is WebVoyager's id): the first number of each site, the site, its host.
WEBVOYAGER_SITES = (
    (0, "Allrecipes", "allrecipes.com"), (45, "Amazon", "amazon.com"), (86, "Apple", "apple.com"),
    (129, "ArXiv", "arxiv.org"), (172, "BBC News", "bbc.com"), (214, "Booking", "booking.com"),
    (258, "Cambridge Dictionary", "dictionary.cambridge.org"), (301, "Coursera", "coursera.org"),
    (343, "ESPN", "espn.com"), (387, "GitHub", "github.com"), (428, "Google Flights", "google.com"),
    (470, "Google Map", "google.com"), (511, "Google Search", "google.com"), (554, "Huggingface", "huggingface.co"),
    (597, "Wolfram Alpha", "wolframalpha.com"),
)
WEBVOYAGER_TASKS = 643


def webvoyager_task_id(number: int | str, start_url: str) -> str:
    """WebVoyager's id of Agent-E's task `number` (`Allrecipes--0`), when the record's start URL is on
    that task's site; else Agent-E's number as it is."""
    if not isinstance(number, int) or isinstance(number, bool) or not 0 <= number < WEBVOYAGER_TASKS:
        return str(number).strip()
    first, site, host = next(entry for entry in reversed(WEBVOYAGER_SITES) if entry[0] <= number)
    start_host = host_of(start_url)
    if start_url and start_host != host:
        return str(number)
    return f"{site}--{number - first}"


def looks_like_records(document) -> bool:
    first = document[0] if isinstance(document, list) and document else None
    return isinstance(first, dict) and _REQUIRED <= first.keys()


def file_stem(name: str) -> str:
    """The file's name without folder and suffix (`vision_final_eval_gpt4o`): the run's name."""
    return posixpath.splitext(posixpath.basename(name.replace("\\", "/")))[0].removesuffix(".excerpt")


def judge_of(stem: str) -> tuple[str, str]:
    """(name, model) of the file's judge, from the file's name (`vision_final_eval_gpt4o`), as both
    readers of Agent-E's records name it."""
    model = "gpt-4o" if "gpt4o" in stem.replace("-", "").lower() else ""
    mode = "vision " if "vision" in stem.lower() else "text " if "text" in stem.lower() else ""
    return f"Agent-E {mode}{'GPT-4o ' if model else ''}judge", model


def read_task_id(record: dict) -> str:
    """The record's task, as both readers of Agent-E's records name it (`webvoyager_task_id`)."""
    task_id = record.get("task_id")
    if (isinstance(task_id, bool) or not isinstance(task_id, (int, str)) or not str(task_id).strip()
            or len(str(task_id).strip()) > TASK_ID_MAX_LENGTH):
        raise TrajectoryFormatError(f"expected a task id of at most {TASK_ID_MAX_LENGTH} characters, got "
                                    f"{str(task_id)[:80]!r}", where="task_id")
    return webvoyager_task_id(task_id, values.text(record, "start_url"))


def read_score(record: dict, name: str) -> tuple[bool | None, str, str]:
    """(success, label, problem) of a verdict field, as both readers of Agent-E's records read it:
    1 is success and 0 failure, as its evaluators mark them; another number is unsure, labelled with
    the score, and `problem` says so for the record's report. A value that is no number fails."""
    score = values.binary_score(record, name)
    if score is None:
        raise TrajectoryFormatError("expected 1 (success) or 0 (failure), got None", where=name)
    return score.success, score.label, score.problem


def parse_record(record, name: str) -> tuple[Trajectory, list[str]]:
    """One evaluation record, and what of it was read as unknown or unsure (a score off the scale)."""
    if not isinstance(record, dict):
        raise TrajectoryFormatError(f"expected an object, got {type(record).__name__}")
    task_id = read_task_id(record)
    stem = file_stem(name)
    human_success, human_label, problem = read_score(record, "score")
    problems = [problem] if problem else []
    verdicts = [Verdict(kind="human", name=HUMAN, success=human_success, label=human_label,
                        explanation=values.text(record, "reason"))]
    if record.get("pred_score") is not None:
        judge_success, judge_label, problem = read_score(record, "pred_score")
        problems += [problem] if problem else []
        judge_name, model = judge_of(stem)
        verdicts.append(Verdict(kind="llm_judge", name=judge_name, model=model, success=judge_success,
                                label=judge_label, explanation=values.text(record, "pred_reason")))
    cost = record.get("compute_cost") or {}
    if not isinstance(cost, dict):
        raise TrajectoryFormatError(f"expected an object, got {type(cost).__name__}", where="compute_cost")
    answer = values.text(record, "last_statement")
    last_url = values.text(record, "last_url")
    trajectory = Trajectory(
        task=TaskRef(task_id=task_id, benchmark=BENCHMARK, intent=values.text(record, "intent").strip()),
        steps=[],
        outcome=Outcome(status="answered" if answer.strip() else "no_stop",
                        message=f"last URL {last_url}" if last_url else ""),
        run=RunInfo(name=stem, agent=AGENT),
        final_answer=answer if answer.strip() else None,
        verdicts=verdicts,
        duration=values.quantity(record, "tct"),
        cost=values.quantity(cost, "cost", "compute_cost.cost"),
        tokens_in=values.quantity(cost, "prompt_tokens", "compute_cost.prompt_tokens", integer=True),
        tokens_out=values.quantity(cost, "completion_tokens", "compute_cost.completion_tokens", integer=True),
    )
    return trajectory, problems
