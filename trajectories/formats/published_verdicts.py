"""Read the verdicts that benchmarks and judges publish beside agents' runs (Django-free).

Each format names its source (kind, name, model, threshold) and yields one `VerdictRecord` per
(run, task[, grader]). The run a verdict is about comes from the file where it says so (one
column per agent, an agent/model field) and otherwise from the caller.

Formats, found by content:
- Online-Mind2Web `human_label.json`: one object per task, one `<Agent>_human_label` field per
  agent; "1" success, "0" failure, "2" the task could not be executed (no yes/no, label
  `not_executable`; success rates count it as not successful, as the benchmark does).
- WebJudge outputs (JSON lines): `predicted_label` with `evaluation_details`, `key_points` and
  `image_judge_record` kept as the explanation; model and threshold from the file name
  (`..._gpt-4o-mini_score_threshold_3_...`).
- browser-use `result.json` files with `judge{score, reasoning}`: a score of 0-100, success at or
  above the threshold.
- Agent-E evaluation records: human `score` / `reason` and judge `pred_score` / `pred_reason`.
- AgentRewardBench `annotations.csv` (one row per annotator and trajectory) and its judge files, one
  per trajectory and named after its task (`webarena.100.json`: `chat_messages`, the judge's chat
  completion `response`, `judge`, `judge_model_name`, `agent`, `benchmark`), alone or many in a zip or
  folder read as one file.
"""

import ast
import posixpath
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from .agent_e import file_stem, judge_of, read_score, read_task_id
from .canonical import TrajectoryFormatError
from .online_mind2web import JUDGE_NAME as BROWSER_USE_JUDGE, JUDGE_THRESHOLD as BROWSER_USE_THRESHOLD, judge_score
from .text import decode_utf8
from .values import InvalidJSON, lenient_text, load_json, shown
from .verdict_files import SUMMARY_LABELS, SummaryRow, VerdictFileError, place, read_rows

HUMAN, LLM_JUDGE, HARNESS, AGENT = "human", "llm_judge", "harness", "agent_self_report"
NOT_EXECUTABLE = "not_executable"
UNSURE = "unsure"


@dataclass(frozen=True)
class SourceRef:
    """Who gave a verdict: a named source of one kind, with its model and score threshold."""

    kind: str
    name: str
    model: str = ""
    threshold: float | None = None
    screenshot_threshold: float | None = None  # WebJudge's relevance cut-off (1-5) for screenshots, not success


@dataclass(frozen=True)
class RecordProblem:
    """A record that could not be read: where (line, or "item N"), the field, its value (a repr cut to
    80 characters) and why; the file's other records are read."""

    line: int | str
    field: str
    value: str
    reason: str


@dataclass(frozen=True)
class VerdictRecord:
    source: SourceRef
    task_id: str
    line: int | str
    success: bool | None
    run: str = ""
    grader: str = ""
    label: str = ""
    score: float | None = None
    explanation: str = ""
    benchmark: str = ""
    agent_model: str = ""
    intent: str = ""  # the task's text, where the file gives it
    # Further labels of the same judgement (AgentRewardBench: side effect, optimality, looping).
    labels: dict = field(default_factory=dict, hash=False)


@dataclass
class VerdictFile:
    format: str
    records: list[VerdictRecord]
    notes: list[str] = field(default_factory=list)
    summary_rows: list[SummaryRow] = field(default_factory=list)  # rows that summarise the others, skipped
    problems: list[RecordProblem] = field(default_factory=list)  # records left out, each named

    @property
    def sources(self) -> list[SourceRef]:
        return list(dict.fromkeys(record.source for record in self.records))


def _literal(value):
    """A field that some writers store as the Python repr of a list or dict: read as a literal,
    never evaluated; left as it is when it is not one."""
    if isinstance(value, str) and value[:1] in "[{":
        try:
            return ast.literal_eval(value)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            return value
    return value


# --- Online-Mind2Web human labels ------------------------------------------------------------

HUMAN_LABEL_SUFFIX = "_human_label"


def looks_like_human_labels(rows: list[tuple[int | str, dict]]) -> bool:
    return bool(rows) and any(key.endswith(HUMAN_LABEL_SUFFIX) for key in rows[0][1])


def _agent_name(column: str) -> str:
    """`Claude_Computer_Use_3.7_human_label` -> `Claude Computer Use 3.7`."""
    return column[: -len(HUMAN_LABEL_SUFFIX)].replace("_", " ").strip()


def human_labels(source: str, rows, source_name: str = "") -> VerdictFile:
    ref = SourceRef(HUMAN, source_name or "Online-Mind2Web human labels")
    records = []
    for line, row in rows:
        task_id = str(row.get("task_id", "")).strip()
        if not task_id:
            raise VerdictFileError(source, "task_id: missing", line)
        for column, value in row.items():
            if not column.endswith(HUMAN_LABEL_SUFFIX) or value in (None, ""):
                continue
            mark = str(value).strip()
            if mark not in ("0", "1", "2"):
                raise VerdictFileError(source, f"{column}: {value!r} is not 1 (success), 0 (failure) or "
                                               "2 (task not executable)", line)
            records.append(VerdictRecord(
                source=ref, task_id=task_id, line=line, run=_agent_name(column),
                success=None if mark == "2" else mark == "1", label=NOT_EXECUTABLE if mark == "2" else "",
                intent=lenient_text(row.get("confirmed_task"), words_unknown=True).strip()))
    return VerdictFile("online_mind2web_human_labels", records)


# --- WebJudge -------------------------------------------------------------------------------

_WEBJUDGE_NAME = re.compile(r"eval_(?P<model>.+?)_score_threshold_(?P<threshold>\d+(?:\.\d+)?)")


def looks_like_webjudge(rows) -> bool:
    return bool(rows) and all("predicted_label" in row for _, row in rows)


def webjudge(source: str, rows, *, source_name: str = "", run: str = "") -> VerdictFile:
    found = _WEBJUDGE_NAME.search(source.rsplit("/", 1)[-1])
    model = found["model"] if found else ""
    threshold = float(found["threshold"]) if found else None
    ref = SourceRef(LLM_JUDGE, source_name or f"WebJudge {model}".strip(), model, threshold)
    records = []
    for line, row in rows:
        task_id = str(row.get("task_id", "")).strip()
        if not task_id:
            raise VerdictFileError(source, "task_id: missing", line)
        label = row.get("predicted_label")
        if label not in (0, 1, "0", "1"):
            raise VerdictFileError(source, f"predicted_label: {label!r} is not 1 or 0", line)
        details = _literal(row.get("evaluation_details"))
        details = details.get("response", details) if isinstance(details, dict) else details
        images = _literal(row.get("image_judge_record")) or []
        scores = [item.get("Score") for item in images if isinstance(item, dict)] if isinstance(images, list) else []
        explanation = "\n\n".join(part for part in (
            lenient_text(details, words_unknown=True),
            f"Key points:{lenient_text(row.get('key_points'), words_unknown=True).rstrip()}"
            if row.get("key_points") else "",
            f"Screenshot scores: {', '.join(str(score) for score in scores)}" if scores else "",
        ) if part)
        records.append(VerdictRecord(source=ref, task_id=task_id, line=line, run=run,
                                     success=str(label) == "1", explanation=explanation))
    return VerdictFile("webjudge", records)


# --- browser-use judge ------------------------------------------------------------------------

def looks_like_browser_use_judge(rows) -> bool:
    return bool(rows) and all(isinstance(row.get("judge"), dict) and "score" in row["judge"] for _, row in rows)


def browser_use_judge(source: str, rows, *, source_name: str = "", run: str = "",
                      threshold: float | None = None, task_id: str = "") -> VerdictFile:
    threshold = BROWSER_USE_THRESHOLD if threshold is None else threshold
    ref = SourceRef(LLM_JUDGE, source_name or BROWSER_USE_JUDGE, threshold=threshold)
    records, notes, problems = [], [], []
    for line, row in rows:
        task = str(row.get("task_id") or task_id).strip()
        if not task:
            raise VerdictFileError(source, "task_id: missing", line)
        try:  # as `import_trajectories` reads the same results
            score = judge_score(row["judge"], threshold)
        except TrajectoryFormatError as error:
            problems.append(RecordProblem(line, error.where, shown(row["judge"].get("score")), error.message))
            continue
        if score.problem:
            notes.append(f"{place(line)} ({task}), {score.problem}")
        records.append(VerdictRecord(source=ref, task_id=task, line=line, run=run, success=score.success,
                                     label=score.label, score=float(score.value),
                                     explanation=lenient_text(row["judge"].get("reasoning"), words_unknown=True)))
    return VerdictFile("browser_use_judge", records, notes, problems=problems)


# --- Agent-E ----------------------------------------------------------------------------------

def looks_like_agent_e(rows) -> bool:
    return bool(rows) and all({"task_id", "score", "last_statement"} <= row.keys() for _, row in rows)


def agent_e(source: str, rows, *, run: str = "") -> VerdictFile:
    """Read as `import_trajectories` reads the same records (`agent_e.read_task_id`, `read_score`): a
    score off the scale is an unsure verdict, named in the notes; a record whose task id or score
    cannot be read is left out, named."""
    humans = SourceRef(HUMAN, "Agent-E human evaluators")
    judge = SourceRef(LLM_JUDGE, *judge_of(file_stem(source)))
    records, unjudged, notes, problems = [], 0, [], []
    for line, row in rows:
        try:
            task_id = read_task_id(row)
            human = read_score(row, "score")
            predicted = read_score(row, "pred_score") if row.get("pred_score") is not None else None
        except TrajectoryFormatError as error:
            problems.append(RecordProblem(line, error.where, shown(row.get(error.where)), error.message))
            continue
        for success, label, problem in (human, predicted or (None, "", "")):
            if problem:
                notes.append(f"{place(line)} ({task_id}), {problem}")
        records.append(VerdictRecord(source=humans, task_id=task_id, line=line, run=run, success=human[0],
                                     label=human[1], explanation=lenient_text(row.get("reason"), words_unknown=True)))
        if predicted is None:
            unjudged += 1
            continue
        records.append(VerdictRecord(source=judge, task_id=task_id, line=line, run=run, success=predicted[0],
                                     label=predicted[1],
                                     explanation=lenient_text(row.get("pred_reason"), words_unknown=True)))
    if unjudged:
        notes.append(f"{unjudged} record(s) without a judge score (pred_score): the judge's verdict is left out")
    return VerdictFile("agent_e", records, notes, problems=problems)


# --- AgentRewardBench -------------------------------------------------------------------------

AGENT_REWARD_BENCH_COLUMNS = {"annotator_name", "benchmark", "task_id", "model_name", "trajectory_success"}
_SUCCESS_WORDS = {"successful": True, "success": True, "yes": True,
                  "unsuccessful": False, "unsuccesful": False, "failure": False, "no": False}


def looks_like_agent_reward_bench(columns: Iterable[str]) -> bool:
    return AGENT_REWARD_BENCH_COLUMNS <= {column.strip() for column in columns}


def _success_word(value, source: str, line, column: str) -> tuple[bool | None, str]:
    word = str(value or "").strip().strip("'\"").lower()
    if word in ("", "unsure", "n/a"):
        return None, UNSURE
    if word not in _SUCCESS_WORDS:
        raise VerdictFileError(source, f"{column}: {value!r} is not Successful, Unsuccessful or Unsure", line)
    return _SUCCESS_WORDS[word], ""


def _side_labels(row: dict) -> dict:
    labels = {}
    for key, name in (("trajectory_side_effect", "side_effect"), ("trajectory_optimality", "optimality"),
                      ("trajectory_looping", "looping")):
        value = str(row.get(key) or "").strip()
        if value:
            labels[name] = value
    return labels


def agent_reward_bench_annotations(source: str, rows, *, source_name: str = "") -> VerdictFile:
    ref = SourceRef(HUMAN, source_name or "AgentRewardBench experts")
    records = []
    for line, row in rows:
        success, label = _success_word(row.get("trajectory_success"), source, line, "trajectory_success")
        task_id = str(row.get("task_id", "")).strip()
        if not task_id:
            raise VerdictFileError(source, "task_id: missing", line)
        records.append(VerdictRecord(
            source=ref, task_id=task_id, line=line, success=success, label=label,
            run=str(row.get("exp_name") or "").strip(), grader=str(row.get("annotator_name", "")).strip(),
            benchmark=str(row.get("benchmark", "")).strip(), agent_model=str(row.get("model_name", "")).strip(),
            labels=_side_labels(row)))
    return VerdictFile("agent_reward_bench_annotations", records)


# AgentRewardBench's judge files: `scripts/run_judge.py` writes one per trajectory, at
# `<benchmark>/<agent>/<judge>/<task id>.json` (`webarena.100.json`): the file's name is its task. Each holds
# the chat the judge was sent (`chat_messages`) and its chat completion (`response`), with the judge's name,
# model, agent and benchmark; a request that failed leaves `<task id>_error.json` with its `error` instead.
AGENT_REWARD_BENCH_JUDGE = "agent_reward_bench_judge"
JUDGE_COMPLETION = "response.choices[0].message.content"
_JUDGE_KEYS = frozenset({"chat_messages", "judge", "judge_model_name"})
_NO_VERDICT = ("no verdict in the judge's completion: AgentRewardBench reads <success>Successful</success> or "
               "<success>Unsuccessful</success> (or a last 'Status: success|failure' line, or 'Reward: 1-5')")


def looks_like_agent_reward_bench_judge_file(document: object) -> bool:
    """One judge file: a chat completion (`response` with its `choices`) beside the chat it answered or the
    judge's name; or the file a failed request leaves (`error` beside `chat_messages`)."""
    if not isinstance(document, dict) or not document.keys() & _JUDGE_KEYS:
        return False
    response = document.get("response")
    return (isinstance(response, dict) and "choices" in response) or (
        "chat_messages" in document and ("error" in document or "response" in document))


def looks_like_agent_reward_bench_judge(rows) -> bool:
    return bool(rows) and all(looks_like_agent_reward_bench_judge_file(row) for _, row in rows)


def _first_tag(tag: str, text: str) -> str | None:
    """The text inside the first `<tag>...</tag>`, as AgentRewardBench's `get_content_inside_tag` takes it."""
    found = re.search(rf"<{tag}>(.*?)</{tag}>", text, re.DOTALL)
    return found.group(1) if found else None


def _clean_word(value: str) -> str:
    return value.strip().lower().replace("'", "").replace('"', "")


def judge_answer(text: str) -> tuple[bool | None, dict]:
    """The success verdict and the other labels of a judge's completion, read as AgentRewardBench reads them:
    the first `<success>`, `<side>`, `<optimal>`, `<loop>` tags of its prompt; else (its AER judges) the last
    `Status: success|failure` line; else (its NNetNav judge) `Reward: N` on a 1-5 scale, a success from 4."""
    answer = _first_tag("success", text)
    if answer is not None:
        labels = {key: value.strip() for tag, key in (("side", "side_effect"), ("optimal", "optimality"),
                                                      ("loop", "looping"))
                  if (value := _first_tag(tag, text)) is not None and value.strip()}
        return _SUCCESS_WORDS.get(_clean_word(answer)), labels
    statuses = [line.split(":", 1)[1] for line in text.splitlines() if line.strip().lower().startswith("status:")]
    if statuses:
        return _SUCCESS_WORDS.get(_clean_word(statuses[-1])), {}
    if "Reward:" in text:
        reward = text.split("Reward:", 1)[1].strip()
        if reward.isdigit() and 1 <= int(reward) <= 5:
            return int(reward) >= 4, {}
    return None, {}


def _judge_completion(document: dict) -> str | None:
    response = document["response"]
    choices = response.get("choices") if isinstance(response, dict) else None
    if isinstance(choices, list) and choices and isinstance(choices[0], dict):
        message = choices[0].get("message")
        if isinstance(message, dict) and isinstance(message.get("content"), str):
            return message["content"]
    return None


def _field(document: dict, key: str) -> str:
    return lenient_text(document.get(key), words_unknown=True).strip()


def _judge_record(name: str, line: int | str, document: dict, source_name: str) -> VerdictRecord | RecordProblem:
    """The verdict of one judge file `name`, or why it has none."""
    if "response" not in document:
        return RecordProblem(line, "error", repr(document.get("error"))[:80],
                             "the judge's request failed: the file holds no completion to read")
    text = _judge_completion(document)
    if text is None:
        return RecordProblem(line, JUDGE_COMPLETION, repr(document["response"])[:80],
                             "no completion text in the judge's response")
    success, labels = judge_answer(text)
    if success is None:
        return RecordProblem(line, JUDGE_COMPLETION, repr(text)[:80], _NO_VERDICT)
    stem = posixpath.basename(name.replace("\\", "/"))
    task_id = _field(document, "task_id") or (stem[:-5] if stem.lower().endswith(".json") else stem)
    benchmark = _field(document, "benchmark") or (task_id.split(".", 1)[0] if "." in task_id else "")
    judge = _field(document, "judge")
    model = _field(document, "judge_model_name") or _field(document["response"], "model")
    ref = SourceRef(LLM_JUDGE, source_name or f"AgentRewardBench {judge or 'judge'}", model)
    info = document.get("trajectory_info") if isinstance(document.get("trajectory_info"), dict) else {}
    agent = _field(document, "agent") or _field(info, "model")
    return VerdictRecord(source=ref, task_id=task_id, line=line, success=success, benchmark=benchmark,
                         agent_model=agent, explanation=text, labels=labels, intent=_field(document, "goal"))


def _judge_file(records: list[tuple[str, int | str, dict]], source_name: str) -> VerdictFile:
    """Judge files (name, where, document) as one file of verdicts: a file without a verdict is that record's
    problem, and the others are read."""
    found, problems = [], []
    for name, line, document in records:
        record = _judge_record(name, line, document, source_name)
        (found if isinstance(record, VerdictRecord) else problems).append(record)
    return VerdictFile(AGENT_REWARD_BENCH_JUDGE, found, problems=problems)


def agent_reward_bench_judge(source: str, rows, *, source_name: str = "") -> VerdictFile:
    return _judge_file([(source, line, row) for line, row in rows], source_name)


def agent_reward_bench_judge_files(source: str, files: list[tuple[str, bytes]], *,
                                   source_name: str = "") -> VerdictFile:
    """A zip or folder of AgentRewardBench judge files (`source`, holding the files (name, bytes)) read as one
    file of verdicts, each record named by its file: a file that is not JSON or not a judge file is a problem of
    its own, as is one without a verdict; other kinds of files (not `.json`) are passed over and counted."""
    judged, problems, passed_over = [], [], 0
    for name, data in files:
        if not name.lower().endswith(".json"):
            passed_over += 1
            continue
        try:
            document = load_json(decode_utf8(data)[0])
        except TrajectoryFormatError as error:
            problems.append(RecordProblem(name, "(file)", repr(data[:40])[:80], f"not JSON: {error.message}"))
            continue
        if looks_like_agent_reward_bench_judge_file(document):
            judged.append((name, name, document))
        else:
            keys = sorted(document)[:8] if isinstance(document, dict) else type(document).__name__
            problems.append(RecordProblem(name, "(file)", repr(keys)[:80], "not an AgentRewardBench judge file (no "
                                          "response with choices beside chat_messages, judge or judge_model_name)"))
    if not judged:
        raise VerdictFileError(source, "no AgentRewardBench judge file in it: a zip or folder of verdicts is read as "
                                       "AgentRewardBench judge files, one per trajectory; import other verdict files "
                                       "one by one")
    found = _judge_file(judged, source_name)
    found.problems = problems + found.problems
    if passed_over:
        found.notes.append(f"{passed_over} file(s) other than .json passed over")
    return found


# --- entry point ------------------------------------------------------------------------------

def _json_lines(source: str, text: str) -> tuple[list[str], list[tuple[int, dict]]]:
    rows = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            item = load_json(line)
        except TrajectoryFormatError as error:
            raise VerdictFileError(source, error.message, number) from None
        if not isinstance(item, dict):
            raise VerdictFileError(source, "expected one JSON object per line", number)
        rows.append((number, item))
    return list(dict.fromkeys(key for _, row in rows for key in row)), rows


def _rows(source: str, data: bytes) -> tuple[list[str], list[tuple[int | str, dict]]]:
    """Rows as `read_rows` gives them, and also from one JSON object (a result.json) and from JSON
    lines in a file named .json (WebJudge writes its outputs so)."""
    text = data.decode("utf-8-sig", errors="replace")
    if text.lstrip()[:1] == "{":
        try:
            document = load_json(text)
        except InvalidJSON as error:
            if not error.extra_data:
                raise VerdictFileError(source, error.message, error.line) from None
            return _json_lines(source, text)
        except TrajectoryFormatError as error:
            raise VerdictFileError(source, error.message, error.line) from None
        if looks_like_agent_reward_bench_judge_file(document):
            return list(document), [(1, document)]
        if isinstance(document, dict) and not any(isinstance(value, list) and value and all(
                isinstance(item, dict) for item in value) and key not in ("image_judge_record",)
                for key, value in document.items()):
            return list(document), [(1, document)]
    return read_rows(source, data)


def read_verdict_file(source: str, data: bytes, *, source_name: str = "", run: str = "",
                      threshold: float | None = None, task_id: str = "") -> VerdictFile | None:
    """The published verdicts in `data`, or None when the file is none of these formats (the
    caller then reads it as a plain per-task table). Summary rows (task id `Win Rate`, `Average`)
    are skipped and named."""
    columns, rows = _rows(source, data)
    summaries = [SummaryRow(line, row["task_id"].strip()) for line, row in rows if _is_summary(row)]
    rows = [(line, row) for line, row in rows if not _is_summary(row)]
    found = _read(source, columns, rows, source_name=source_name, run=run, threshold=threshold, task_id=task_id)
    if found is not None:
        found.summary_rows = summaries
    return found


def _is_summary(row: dict) -> bool:
    value = row.get("task_id")
    return isinstance(value, str) and value.strip().lower() in SUMMARY_LABELS


def _read(source: str, columns, rows, *, source_name: str, run: str, threshold: float | None,
          task_id: str) -> VerdictFile | None:
    if looks_like_agent_reward_bench(columns):
        return agent_reward_bench_annotations(source, rows, source_name=source_name)
    if looks_like_human_labels(rows):
        return human_labels(source, rows, source_name)
    if looks_like_webjudge(rows):
        return webjudge(source, rows, source_name=source_name, run=run)
    if looks_like_browser_use_judge(rows):
        return browser_use_judge(source, rows, source_name=source_name, run=run, threshold=threshold,
                                 task_id=task_id)
    if looks_like_agent_reward_bench_judge(rows):
        return agent_reward_bench_judge(source, rows, source_name=source_name)
    if looks_like_agent_e(rows):
        return agent_e(source, rows, run=run)
    return None
