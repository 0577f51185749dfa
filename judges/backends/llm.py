"""`openai`: an LLM judge behind any OpenAI-compatible endpoint (OpenAI, vLLM, Ollama, llama.cpp).

Cheap first: a question whose answer is certain without the model (identical steps, a
requirement found verbatim, an answer equal to the reference) is answered here with no call.
Few requests: the repetition questions asked together go in numbered lists of up to
`batch_size` pairs per request, the requirements of one answer likewise, and the two aspects
of a groundedness question share one request; each question still gets its own decision. The
outcome judge's questions (`judges.outcome_questions`) go one per request, their images attached to it, as
do the failure attribution questions (`judges.attribution`).
Otherwise: the kind's prompt file, temperature from the spec (0 by default), the answer asked
for as structured output (below) and read by its kind's schema (`judges.schema`), one repair
request when it does not fit, and bounded retries with exponential backoff and full jitter on
timeouts, 429 and 5xx. An endpoint that cannot be reached at all (a refused connection, an
unknown host) raises EndpointUnreachable at once: the job stops there with one message.
Requests go through a per-process concurrency limit and a rate limit shared by all workers
(Redis). Tokens, cost (from the price table) and latency are added up per request and booked
on the first decision it answered; the others of the same request record its latency only.

Structured output (option `structured_output`): how the answer's JSON schema is sent. `json_schema`
is OpenAI's `response_format` (also taken by vLLM, Ollama and recent llama.cpp servers),
`json_object_schema` llama.cpp's `{"type": "json_object", "schema": ...}`, `json_object` plain JSON
mode without a schema, `none` nothing. `auto` (the default) tries them in that order until the
endpoint accepts one (`_refuses_mode` says which answers mean it does not) and remembers the first accepted per
endpoint and model (`ModeMemory`, which the platform keeps in its database).

Options (`spec.options`): timeout (s), max_retries, backoff_base (s), backoff_cap (s),
concurrency, requests_per_minute (0 = none), burst, redis_url, structured_output, batch_size, prices
({model: {"input": USD per 1M tokens, "output": ...}}), screenshots (false: the model reads no
images, so the metrics ask it nothing about screenshots).
"""

import json
import random
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from decimal import Decimal
from functools import cache

import openai

from .. import attribution, elements, outcome_questions, schema
from .. import questions as q
from ..parsing import plain_text, same_step
from ..prompts import load_prompt
from ..ratelimit import shared_rate_limiter
from ..schema import MalformedAnswer
from ..answers import Answer
from .base import Backend, BackendSpec, EndpointUnreachable

DEFAULTS = {
    "timeout": 60.0,
    "max_retries": 4,
    "backoff_base": 1.0,
    "backoff_cap": 30.0,
    "concurrency": 8,
    "requests_per_minute": 0,
    "burst": 16,
    "redis_url": "",
    "structured_output": "auto",
    # Sent as `max_tokens` when above 0: a model that does not stop (a small one asked without a schema)
    # otherwise writes until its context is full, minutes a request on a CPU.
    "max_answer_tokens": 0,
    "batch_size": 20,
    "prices": {},
    "screenshots": True,
}
REPAIR_REQUEST = (
    "Your reply could not be used: {error}. Reply again with only the JSON object in the answer "
    "format given, and nothing else."
)
NOT_SENT = "Identical after normalisation; not sent to the model."
STRUCTURED_OUTPUT_MODES = ("json_schema", "json_object_schema", "json_object", "none")
STRUCTURED_OUTPUT = ("auto", *STRUCTURED_OUTPUT_MODES)


@cache
def _process_semaphore(endpoint: str, model: str, size: int) -> threading.BoundedSemaphore:
    """Every judge of this process that talks to one endpoint and model shares these slots."""
    return threading.BoundedSemaphore(size)


def response_format(mode: str, kind: str, bounds: dict | None) -> dict | None:
    """The `response_format` a mode sends for a question of `kind` (None: none is sent)."""
    if mode == "json_schema":
        return {"type": "json_schema", "json_schema": {
            "name": kind, "strict": True, "schema": schema.json_schema(kind, bounds, grammar=False)}}
    if mode == "json_object_schema":
        return {"type": "json_object", "schema": schema.json_schema(kind, bounds)}
    if mode == "json_object":
        return {"type": "json_object"}
    return None


def _refuses_mode(error: openai.APIStatusError) -> bool:
    """Whether the endpoint refused the request's structured-output spelling: a 400 or 422, or a
    server error that names `response_format` (llama-cpp-python's server answers 500 to a spelling
    it does not know)."""
    return error.status_code in (400, 422) or (error.status_code >= 500 and "response_format" in str(error))


def _scored(value: dict) -> Answer:
    return Answer(value["score"], value["rationale"], value)


def render_step(step: dict) -> str:
    text = step["text"]
    element = " ".join(part for part in (step["element_role"], f"'{step['element_name']}'") if part.strip("'"))
    details = [f"element: {element}"] if element else []
    if step["action_type"] and step["action_type"] not in text:
        details.append(f"action: {step['action_type']}")
    if step["value"] and step["value"] not in text:
        details.append(f"value: '{step['value']}'")
    return f"{text} ({'; '.join(details)})" if details else text


def answered_without_model(question: q.Question) -> Answer | None:
    """The answer when it is certain without asking: identical steps, a requirement found
    verbatim, an answer equal to the reference."""
    inputs = question.inputs
    if question.kind in (q.STEP_MATCH, q.REPETITION):
        first, second = _pair(question)
        if same_step(first["text"], second["text"]):
            return Answer(1.0, NOT_SENT)
    elif question.kind == q.REQUIREMENTS:
        requirement = plain_text(inputs["requirement"])
        if requirement and requirement in plain_text(inputs["answer"]):
            return Answer(1.0, "The requirement is in the answer verbatim; not sent to the model.")
    elif question.kind == q.FUZZY_ANSWER:
        if plain_text(inputs["answer"]) == plain_text(inputs["reference"]):
            return Answer(1.0, "Same as the reference after normalisation; not sent to the model.")
    return None


def _pair(question: q.Question) -> tuple[dict, dict]:
    inputs = question.inputs
    if question.kind == q.STEP_MATCH:
        return inputs["gold"], inputs["agent"]
    return inputs["previous"], inputs["step"]


def _request_key(question: q.Question) -> tuple:
    """Questions with the same key are asked in one request; a batched kind's key is its list."""
    inputs = question.inputs
    if question.kind == q.REPETITION:
        return (q.REPETITION,)
    if question.kind == q.REQUIREMENTS:
        return q.REQUIREMENTS, inputs["intent"], inputs["answer"]
    if question.kind == q.GROUNDEDNESS:
        inputs = {k: v for k, v in inputs.items() if k != "aspect"}
    return question.kind, json.dumps(inputs, sort_keys=True)


def _usage_booked_once(answers: list[Answer]) -> list[Answer]:
    """Answers sharing one request: its usage on the first, its latency on every one."""
    return answers[:1] + [replace(a, prompt_tokens=0, completion_tokens=0, cost=Decimal(0), calls=0)
                          for a in answers[1:]]


def _numbered(lines: list[str]) -> str:
    return "\n".join(f"{number}. {line}" for number, line in enumerate(lines, start=1))


def _key_points_answer(value: dict) -> Answer:
    points = value["key_points"]
    return Answer(1.0, outcome_questions.numbered(points), {"key_points": points})


def _relevance_answer(value: dict) -> Answer:
    """Relevance 1-5 onto the decision's 0-1 score (1 -> 0, 5 -> 1)."""
    return Answer((value["relevance"] - 1) / 4, value["reasoning"], {"relevance": value["relevance"]})


def _verdict_answer(value: dict) -> Answer:
    return Answer(1.0 if value["success"] else 0.0, value["reasoning"], {"success": value["success"]})


def _element_answer(value: dict) -> Answer:
    """Intended element onto the decision's score (1 or 0), the element named in its output."""
    element, intended = value["element"], value["intended"]
    return Answer(1.0 if intended else 0.0, f"{element}: {value['rationale']}".rstrip(": "),
                  {"element": element, "intended": intended})


def _attribution_answer(value: dict) -> Answer:
    """An attribution answer, whole in the decision's output; its score says, for a step-by-step
    question, whether the step is decisive, for a binary search one whether the first half holds
    the error, and is 1 for an all-at-once answer."""
    if "decisive" in value:
        score = 1.0 if value["decisive"] else 0.0
    elif "half" in value:
        score = 1.0 if value["half"] == attribution.FIRST else 0.0
    else:
        score = 1.0
    return Answer(score, value["reason"], value)


OUTCOME_READERS = {
    outcome_questions.KEY_POINTS: _key_points_answer,
    outcome_questions.SCREENSHOT: _relevance_answer,
    outcome_questions.VERDICT: _verdict_answer,
}


class OpenAIBackend(Backend):
    name = "openai"

    def __init__(self, spec: BackendSpec):
        super().__init__(spec)
        self.options = {**DEFAULTS, **spec.options}
        if not spec.model:
            raise ValueError("the openai judge needs a model name")
        if self.options["structured_output"] not in STRUCTURED_OUTPUT:
            raise ValueError(f"options.structured_output must be one of {', '.join(STRUCTURED_OUTPUT)}, "
                             f"not {self.options['structured_output']!r}")
        limit = self.options["max_answer_tokens"]
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 0:
            raise ValueError(f"options.max_answer_tokens must be a whole number of tokens (0: no limit), "
                             f"not {limit!r}")
        self._client = openai.OpenAI(
            base_url=spec.base_url or None,
            api_key=spec.api_key or "no-key",
            timeout=float(self.options["timeout"]),
            max_retries=0,
        )
        endpoint = spec.base_url or "default"
        self._endpoint = endpoint
        # Under `auto`: the mode found for this endpoint and model (recalled, or found by a request).
        self._found_mode: str | None = None
        self._slots = _process_semaphore(endpoint, spec.model, int(self.options["concurrency"]))
        self._rate_limit = shared_rate_limiter(
            f"{endpoint}|{spec.model}",
            float(self.options["requests_per_minute"]),
            int(self.options["burst"]),
            self.options["redis_url"],
        )

    @property
    def sees_screenshots(self) -> bool:
        return self.options["screenshots"] is not False

    def version(self, kind: str) -> str:
        """The prompt's version, and the structured-output mode when one is given: an answer asked
        without a schema is not served to a judge that asks with one, nor the other way round.
        `auto` keeps the prompt's version alone (what it finds is recorded on each decision)."""
        mode = self.options["structured_output"]
        return load_prompt(kind).version + ("" if mode == "auto" else f"+{mode}")

    def answer(self, questions: list[q.Question]) -> list[Answer]:
        """Answer the questions in parallel requests (up to `concurrency` at once), in order; under
        `auto`, the mode found is recalled first and remembered after (in this thread)."""
        memory = self.spec.mode_memory if self.options["structured_output"] == "auto" else None
        recalled = memory.recall(self._endpoint, self.spec.model) if memory is not None else None
        self._found_mode = recalled if recalled in STRUCTURED_OUTPUT_MODES else None
        answers = self._answer_all(questions)
        if memory is not None and self._found_mode is not None and self._found_mode != recalled:
            memory.remember(self._endpoint, self.spec.model, self._found_mode)
        return answers

    def _answer_all(self, questions: list[q.Question]) -> list[Answer]:
        answers: list[Answer | None] = [answered_without_model(question) for question in questions]
        asked: dict[tuple, list[int]] = {}
        for position, (question, answer) in enumerate(zip(questions, answers)):
            if answer is None:
                asked.setdefault(_request_key(question), []).append(position)
        requests = []
        for key, positions in asked.items():
            if key[0] in (q.REPETITION, q.REQUIREMENTS):
                size = max(1, int(self.options["batch_size"]))
                requests += [positions[start : start + size] for start in range(0, len(positions), size)]
            else:
                requests.append(positions)
        workers = max(1, min(int(self.options["concurrency"]), len(requests)))
        with ThreadPoolExecutor(max_workers=workers) as pool:
            replies = pool.map(lambda positions: self._ask_together([questions[p] for p in positions]), requests)
            for positions, reply in zip(requests, replies):
                for position, answer in zip(positions, _usage_booked_once(reply)):
                    answers[position] = answer
        return answers

    def _ask_together(self, questions: list[q.Question]) -> list[Answer]:
        """One request answering `questions`, all of one kind (a batch, or one question)."""
        kind, first = questions[0].kind, questions[0]
        if kind == q.REPETITION:
            return self._ask_list(kind, {"pairs": self._pairs(questions)}, len(questions))
        if kind == q.REQUIREMENTS:
            fields = {"intent": first.inputs["intent"], "answer": first.inputs["answer"],
                      "requirements": _numbered([question.inputs["requirement"] for question in questions])}
            return self._ask_list(kind, fields, len(questions))
        if kind == q.GROUNDEDNESS:
            answer = self._groundedness(first.inputs, first.images)
            return [self._aspect(answer, question.inputs["aspect"]) for question in questions]
        if kind in outcome_questions.KINDS:
            fields = outcome_questions.prompt_fields(first)
            return [self._ask(kind, fields, OUTCOME_READERS[kind], first.images)] * len(questions)
        if kind == q.ELEMENT_AT_POINT:
            return [self._ask(kind, elements.prompt_fields(first), _element_answer, first.images)] * len(questions)
        if kind in attribution.KINDS:
            return [self._ask(kind, attribution.prompt_fields(first), _attribution_answer,
                              bounds=attribution.bounds(first))] * len(questions)
        return [self._answer(kind, first.inputs)] * len(questions)

    @staticmethod
    def _pairs(questions: list[q.Question]) -> str:
        pairs = []
        for number, question in enumerate(questions, start=1):
            previous, step = _pair(question)
            pairs.append(f"{number}. Previous step: {render_step(previous)}\n   This step: {render_step(step)}")
        return "\n".join(pairs)

    def _ask_list(self, kind: str, fields: dict, count: int) -> list[Answer]:
        """One request for `count` numbered items; every item fails with the request."""
        reply = self._ask(kind, fields, self._read_list, bounds={"count": count})
        if reply.error:
            return [reply] * count
        return [replace(reply, score=item["score"], rationale=item["rationale"],
                        output={**item, "asked_with": count - 1}) for item in reply.output["answers"]]

    @staticmethod
    def _read_list(value: dict) -> Answer:
        """The schema's `count` answers, each number from 1 to `count` once, in number order."""
        items = {}
        for n, item in enumerate(value["answers"]):
            if item["number"] in items:
                raise MalformedAnswer(f"answers[{n}].number {item['number']} is answered twice")
            items[item["number"]] = item
        return Answer(0.0, "", {"answers": [items[number] for number in sorted(items)]})

    @staticmethod
    def _aspect(answer: Answer, aspect: str) -> Answer:
        """One aspect of a groundedness answer (both aspects come from one request)."""
        if answer.error:
            return answer
        part = answer.output[aspect]
        return replace(answer, score=part["score"], rationale=part["rationale"])

    # --- one question ------------------------------------------------------------------------

    def _answer(self, kind: str, inputs: dict) -> Answer:
        if kind == q.STEP_MATCH:
            fields = {"gold": render_step(inputs["gold"]), "agent": render_step(inputs["agent"])}
            return self._ask(kind, fields, _scored)
        if kind == q.TRAJECTORY_MATCH:
            return self._trajectory(inputs["gold"], inputs["agent"])
        if kind == q.FUZZY_ANSWER:
            return self._ask(kind, inputs, _scored)
        raise ValueError(f"unknown question kind {kind!r}")

    def _groundedness(self, inputs: dict, images: tuple[str, ...] = ()) -> Answer:
        observations = "\n\n".join(f"[step {o['step']}]\n{o['text']}" for o in inputs["observations"])
        if inputs.get("screenshots"):
            steps = ", ".join(str(shot["step"]) for shot in inputs["screenshots"])
            observations = f"(no page text: the screenshots attached, of steps {steps}, show what the agent saw)"
        fields = {"intent": inputs["intent"], "answer": inputs["answer"], "observations": observations or "(none)"}
        return self._ask(q.GROUNDEDNESS, fields, self._read_groundedness, images)

    @staticmethod
    def _read_groundedness(value: dict) -> Answer:
        return Answer(min(value[aspect]["score"] for aspect in q.ASPECTS), "", value)

    def _trajectory(self, gold: list[dict], agent: list[dict]) -> Answer:
        """Gold steps with an identical agent step are settled here; the rest go in one request."""
        matrix = [[1.0 if same_step(g["text"], a["text"]) else 0.0 for a in agent] for g in gold]
        asked = [j for j, row in enumerate(matrix) if not any(row)]
        summary = Answer(0.0)
        if asked and agent:
            fields = {
                "gold": "\n".join(f"{j + 1}. {render_step(gold[j])}" for j in asked),
                "agent": "\n".join(f"{i + 1}. {render_step(step)}" for i, step in enumerate(agent)),
            }
            summary = self._ask(q.TRAJECTORY_MATCH, fields, self._read_pairs,
                                bounds={"gold": [j + 1 for j in asked], "agent_count": len(agent),
                                        "most_pairs": len(asked) * len(agent)})
            if summary.error:
                return summary
            for j, i, score in summary.output["pairs"]:
                matrix[j][i] = score
        best = [max(row, default=0.0) for row in matrix]
        settled = len(gold) - len(asked)
        rationale = "\n".join(filter(None, [f"{settled} gold steps had an identical agent step." if settled else "",
                                            summary.rationale]))
        return replace(summary, score=sum(best) / len(best) if best else 0.0, rationale=rationale,
                       output={"matrix": matrix, "asked": [j + 1 for j in asked]})

    @staticmethod
    def _read_pairs(value: dict) -> Answer:
        pairs = [(pair["gold"] - 1, pair["agent"] - 1, pair["score"]) for pair in value["pairs"]]
        return Answer(0.0, value["rationale"], {"pairs": pairs})

    # --- the request -------------------------------------------------------------------------

    def _ask(self, kind: str, fields: dict, read, images: tuple[str, ...] = (), bounds: dict | None = None) -> Answer:
        """Send one question, retrying and repairing as documented; raises only EndpointUnreachable, when
        the endpoint cannot be reached at all (a refused connection, an unknown host).
        `read` makes the Answer of the schema-read value; `bounds` are the schema's bounds for this request."""
        messages = load_prompt(kind).messages(**fields)
        if images:
            messages[-1]["content"] = [{"type": "text", "text": messages[-1]["content"]}] + [
                {"type": "image_url", "image_url": {"url": image}} for image in images]
        usage = {"prompt_tokens": 0, "completion_tokens": 0, "calls": 0}
        started = time.monotonic()
        failures, repairs = 0, 0
        while True:
            try:
                response, mode = self._request(messages, usage, kind, bounds)
            except (openai.APIConnectionError, openai.RateLimitError, openai.InternalServerError) as error:
                if isinstance(error, openai.APIConnectionError) and not isinstance(error, openai.APITimeoutError):
                    raise EndpointUnreachable(str(self._client.base_url).rstrip("/"),
                                              str(error.__cause__ or error)) from error
                failures += 1
                if failures > int(self.options["max_retries"]):
                    return self._failed(f"gave up after {usage['calls']} requests: {self._describe(error)}", usage,
                                        started, repairs)
                time.sleep(self._backoff(failures, error))
                continue
            except openai.APIStatusError as error:
                return self._failed(f"request refused: {self._describe(error)}", usage, started, repairs)
            content = response.choices[0].message.content if response.choices else None
            try:
                reading = schema.parse(kind, content, bounds)
                answer = read(reading.value)
            except MalformedAnswer as error:
                if response.choices and response.choices[0].finish_reason == "length":
                    limit = self.options["max_answer_tokens"]
                    error = MalformedAnswer(f"{error} (the answer stopped at "
                                            f"{f'the limit of {limit} tokens' if limit else 'the endpoint limit'})")
                if repairs:
                    return self._failed(f"malformed answer after one repair request: {error}", usage, started,
                                        repairs, mode)
                repairs += 1
                messages = messages + [
                    {"role": "assistant", "content": content or ""},
                    {"role": "user", "content": REPAIR_REQUEST.format(error=error)},
                ]
                continue
            return replace(answer, prompt_tokens=usage["prompt_tokens"], completion_tokens=usage["completion_tokens"],
                           cost=self.cost(usage), latency_ms=self._elapsed_ms(started), calls=usage["calls"],
                           coerced=reading.coerced, repairs=repairs, structured_output=mode)

    def _modes(self) -> list[str]:
        """The structured-output modes to try, in order: the one configured, or for `auto` the one
        found for this endpoint and model first, then those after it."""
        chosen = self.options["structured_output"]
        if chosen != "auto":
            return [chosen]
        found = self._found_mode
        return list(STRUCTURED_OUTPUT_MODES[STRUCTURED_OUTPUT_MODES.index(found) if found else 0:])

    def _request(self, messages: list[dict], usage: dict, kind: str, bounds: dict | None):
        """The response and the structured-output mode it was asked with. Under `auto`, a mode the
        endpoint refuses (400, 422) gives way to the next; the first accepted one is remembered."""
        *tried_first, last = self._modes()
        for mode in tried_first:
            try:
                return self._send(messages, usage, kind, bounds, mode), mode
            except openai.APIStatusError as error:
                if not _refuses_mode(error):
                    raise
        return self._send(messages, usage, kind, bounds, last), last

    def _send(self, messages: list[dict], usage: dict, kind: str, bounds: dict | None, mode: str):
        answer_format = response_format(mode, kind, bounds)
        extra = {"response_format": answer_format} if answer_format else {}
        if self.options["max_answer_tokens"]:
            extra["max_tokens"] = self.options["max_answer_tokens"]
        if self._rate_limit:
            self._rate_limit.acquire()
        with self._slots:
            usage["calls"] += 1
            response = self._client.chat.completions.create(
                model=self.spec.model, messages=messages, temperature=self.spec.temperature, **extra
            )
        if self.options["structured_output"] == "auto" and self._found_mode is None:
            self._found_mode = mode  # the first accepted; requests racing it find the same
        if response.usage:
            usage["prompt_tokens"] += response.usage.prompt_tokens or 0
            usage["completion_tokens"] += response.usage.completion_tokens or 0
        return response

    def _backoff(self, failures: int, error: Exception) -> float:
        ceiling = min(float(self.options["backoff_cap"]), float(self.options["backoff_base"]) * 2 ** (failures - 1))
        response = getattr(error, "response", None)
        retry_after = response.headers.get("retry-after") if response is not None else None
        if retry_after:
            try:
                return min(float(self.options["backoff_cap"]), max(float(retry_after), 0.0))
            except ValueError:
                pass
        return random.uniform(0, ceiling)

    def cost(self, usage: dict) -> Decimal:
        price = self.options["prices"].get(self.spec.model)
        if not price:
            return Decimal(0)
        million = Decimal(1_000_000)
        return (
            Decimal(str(price["input"])) * usage["prompt_tokens"] / million
            + Decimal(str(price["output"])) * usage["completion_tokens"] / million
        ).quantize(Decimal("0.000001"))

    @staticmethod
    def _describe(error: Exception) -> str:
        status = getattr(error, "status_code", None)
        kind = "timeout" if isinstance(error, openai.APITimeoutError) else type(error).__name__
        return f"HTTP {status} ({kind})" if status else kind

    @staticmethod
    def _elapsed_ms(started: float) -> int:
        return int((time.monotonic() - started) * 1000)

    def _failed(self, error: str, usage: dict, started: float, repairs: int, mode: str = "") -> Answer:
        return Answer.failed(
            error, prompt_tokens=usage["prompt_tokens"], completion_tokens=usage["completion_tokens"],
            cost=self.cost(usage), latency_ms=self._elapsed_ms(started), calls=usage["calls"], repairs=repairs,
            structured_output=mode,
        )
