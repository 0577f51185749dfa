"""`openai`: an LLM judge behind any OpenAI-compatible endpoint (OpenAI, vLLM, Ollama, llama.cpp).

Cheap first: a question whose answer is certain without the model (identical steps, a
requirement found verbatim, an answer equal to the reference) is answered here with no call.
Few requests: the repetition questions asked together go in numbered lists of up to
`batch_size` pairs per request, the requirements of one answer likewise, and the two aspects
of a groundedness question share one request; each question still gets its own decision. The
outcome judge's questions (`judges.outcome`) go one per request, their images attached to it.
Otherwise: the kind's prompt file, temperature from the spec (0 by default), a JSON answer parsed
strictly and checked against its shape, one repair request when it is not valid, and bounded
retries with exponential backoff and full jitter on timeouts, connection errors, 429 and 5xx.
Requests go through a per-process concurrency limit and a rate limit shared by all workers
(Redis). Tokens, cost (from the price table) and latency are added up per request and booked
on the first decision it answered; the others of the same request record its latency only.

Options (`spec.options`): timeout (s), max_retries, backoff_base (s), backoff_cap (s),
concurrency, requests_per_minute (0 = none), burst, redis_url, json_mode, batch_size, prices
({model: {"input": USD per 1M tokens, "output": ...}}), screenshots (false: the model reads no
images, so the metrics ask it nothing about screenshots).
"""

import json
import random
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from decimal import Decimal
from functools import cache

import openai

from .. import elements, outcome
from .. import questions as q
from ..parsing import normalise, same_step
from ..prompts import load_prompt
from ..ratelimit import shared_rate_limiter
from ..verdicts import Answer
from .base import Backend, BackendSpec

DEFAULTS = {
    "timeout": 60.0,
    "max_retries": 4,
    "backoff_base": 1.0,
    "backoff_cap": 30.0,
    "concurrency": 8,
    "requests_per_minute": 0,
    "burst": 16,
    "redis_url": "",
    "json_mode": True,
    "batch_size": 20,
    "prices": {},
    "screenshots": True,
}
REPAIR_REQUEST = (
    "Your reply could not be used: {error}. Reply again with only the JSON object in the answer "
    "format given, and nothing else."
)
NOT_SENT = "Identical after normalisation; not sent to the model."


class MalformedAnswer(ValueError):
    pass


@cache
def _process_semaphore(endpoint: str, model: str, size: int) -> threading.BoundedSemaphore:
    """Every judge of this process that talks to one endpoint and model shares these slots."""
    return threading.BoundedSemaphore(size)


def _score(value, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
        raise MalformedAnswer(f"{where} must be a number from 0 to 1, not {value!r}")
    return float(value)


def _scored(data: dict, where: str = "answer") -> tuple[float, str]:
    if not isinstance(data, dict):
        raise MalformedAnswer(f"{where} must be a JSON object")
    rationale = data.get("rationale", "")
    if not isinstance(rationale, str):
        raise MalformedAnswer(f"{where}.rationale must be a string")
    return _score(data.get("score"), f"{where}.score"), rationale


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
        requirement = normalise(inputs["requirement"])
        if requirement and requirement in normalise(inputs["answer"]):
            return Answer(1.0, "The requirement is in the answer verbatim; not sent to the model.")
    elif question.kind == q.FUZZY_ANSWER:
        if normalise(inputs["answer"]) == normalise(inputs["reference"]):
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
    return answers[:1] + [
        Answer(a.score, a.rationale, a.output, a.error, latency_ms=a.latency_ms) for a in answers[1:]
    ]


def _numbered(lines: list[str]) -> str:
    return "\n".join(f"{number}. {line}" for number, line in enumerate(lines, start=1))


def _key_points_answer(data) -> Answer:
    points = outcome.read_key_points(data)
    return Answer(1.0, outcome.numbered(points), {"key_points": points})


def _relevance_answer(data) -> Answer:
    """Relevance 1-5 onto the decision's 0-1 score (1 -> 0, 5 -> 1)."""
    relevance, reasoning = outcome.read_relevance(data)
    return Answer((relevance - 1) / 4, reasoning, {"relevance": relevance})


def _verdict_answer(data) -> Answer:
    success, reasoning = outcome.read_verdict(data)
    return Answer(1.0 if success else 0.0, reasoning, {"success": success})


def _element_answer(data) -> Answer:
    """Intended element onto the decision's score (1 or 0), the element named in its output."""
    answer = elements.read_element(data)
    return Answer(1.0 if answer.intended else 0.0, f"{answer.element}: {answer.rationale}".rstrip(": "),
                  {"element": answer.element, "intended": answer.intended})


OUTCOME_READERS = {
    outcome.KEY_POINTS: _key_points_answer,
    outcome.SCREENSHOT: _relevance_answer,
    outcome.VERDICT: _verdict_answer,
}


class OpenAIBackend(Backend):
    name = "openai"

    def __init__(self, spec: BackendSpec):
        super().__init__(spec)
        self.options = {**DEFAULTS, **spec.options}
        if not spec.model:
            raise ValueError("the openai judge needs a model name")
        self._client = openai.OpenAI(
            base_url=spec.base_url or None,
            api_key=spec.api_key or "no-key",
            timeout=float(self.options["timeout"]),
            max_retries=0,
        )
        endpoint = spec.base_url or "default"
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
        return load_prompt(kind).version

    def answer(self, questions: list[q.Question]) -> list[Answer]:
        """Answer the questions in parallel requests (up to `concurrency` at once), in order."""
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
        if kind in outcome.KINDS:
            return [self._ask(kind, outcome.prompt_fields(first), OUTCOME_READERS[kind], first.images)] * len(questions)
        if kind == q.ELEMENT_AT_POINT:
            return [self._ask(kind, elements.prompt_fields(first), _element_answer, first.images)] * len(questions)
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
        reply = self._ask(kind, fields, lambda data: self._read_list(data, count))
        if reply.error:
            return [reply] * count
        usage = (reply.prompt_tokens, reply.completion_tokens, reply.cost, reply.latency_ms, reply.calls)
        return [Answer(item["score"], item["rationale"], {**item, "asked_with": count - 1}, "", *usage)
                for item in reply.output["answers"]]

    @staticmethod
    def _read_list(data: dict, count: int) -> Answer:
        """`{"answers": [{"number", "score", "rationale"}]}` with each number from 1 to `count` once."""
        if not isinstance(data, dict) or not isinstance(data.get("answers"), list):
            raise MalformedAnswer("answer must be an object with a list `answers`")
        items = {}
        for n, item in enumerate(data["answers"]):
            if not isinstance(item, dict):
                raise MalformedAnswer(f"answers[{n}] must be an object")
            number = item.get("number")
            if isinstance(number, bool) or not isinstance(number, int) or not 1 <= number <= count:
                raise MalformedAnswer(f"answers[{n}].number must be one of the numbers 1 to {count}, not {number!r}")
            if number in items:
                raise MalformedAnswer(f"answers[{n}].number {number} is answered twice")
            score, rationale = _scored(item, f"answers[{n}]")
            items[number] = {"number": number, "score": score, "rationale": rationale}
        missing = [number for number in range(1, count + 1) if number not in items]
        if missing:
            raise MalformedAnswer(f"answers must answer every number; missing {', '.join(map(str, missing))}")
        return Answer(0.0, "", {"answers": [items[number] for number in range(1, count + 1)]})

    @staticmethod
    def _aspect(answer: Answer, aspect: str) -> Answer:
        """One aspect of a groundedness answer (both aspects come from one request)."""
        if answer.error:
            return answer
        part = answer.output[aspect]
        return Answer(part["score"], part["rationale"], answer.output, "", answer.prompt_tokens,
                      answer.completion_tokens, answer.cost, answer.latency_ms, answer.calls)

    # --- one question ------------------------------------------------------------------------

    def _answer(self, kind: str, inputs: dict) -> Answer:
        if kind == q.STEP_MATCH:
            fields = {"gold": render_step(inputs["gold"]), "agent": render_step(inputs["agent"])}
            return self._ask(kind, fields, lambda data: Answer(*_scored(data), output=data))
        if kind == q.TRAJECTORY_MATCH:
            return self._trajectory(inputs["gold"], inputs["agent"])
        if kind == q.FUZZY_ANSWER:
            return self._ask(kind, inputs, lambda data: Answer(*_scored(data), output=data))
        raise ValueError(f"unknown question kind {kind!r}")

    def _groundedness(self, inputs: dict, images: tuple[str, ...] = ()) -> Answer:
        observations = "\n\n".join(f"[step {o['step']}]\n{o['text']}" for o in inputs["observations"])
        if inputs.get("screenshots"):
            steps = ", ".join(str(shot["step"]) for shot in inputs["screenshots"])
            observations = f"(no page text: the screenshots attached, of steps {steps}, show what the agent saw)"
        fields = {"intent": inputs["intent"], "answer": inputs["answer"], "observations": observations or "(none)"}
        return self._ask(q.GROUNDEDNESS, fields, self._read_groundedness, images)

    @staticmethod
    def _read_groundedness(data: dict) -> Answer:
        if not isinstance(data, dict):
            raise MalformedAnswer("answer must be a JSON object")
        output = {}
        for aspect in q.ASPECTS:
            score, rationale = _scored(data.get(aspect), aspect)
            output[aspect] = {"score": score, "rationale": rationale}
        return Answer(min(o["score"] for o in output.values()), "", output)

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
            summary = self._ask(q.TRAJECTORY_MATCH, fields, lambda data: self._read_pairs(data, set(asked), len(agent)))
            if summary.error:
                return summary
            for j, i, score in summary.output["pairs"]:
                matrix[j][i] = score
        best = [max(row, default=0.0) for row in matrix]
        settled = len(gold) - len(asked)
        rationale = "\n".join(filter(None, [f"{settled} gold steps had an identical agent step." if settled else "",
                                            summary.rationale]))
        return Answer(
            sum(best) / len(best) if best else 0.0, rationale, {"matrix": matrix, "asked": [j + 1 for j in asked]},
            "", summary.prompt_tokens, summary.completion_tokens, summary.cost, summary.latency_ms, summary.calls,
        )

    @staticmethod
    def _read_pairs(data: dict, asked: set[int], agent_count: int) -> Answer:
        if not isinstance(data, dict) or not isinstance(data.get("pairs"), list):
            raise MalformedAnswer("answer must be an object with a list `pairs`")
        pairs = []
        for n, pair in enumerate(data["pairs"]):
            if not isinstance(pair, dict):
                raise MalformedAnswer(f"pairs[{n}] must be an object")
            j, i = pair.get("gold"), pair.get("agent")
            if not isinstance(j, int) or j - 1 not in asked:
                raise MalformedAnswer(f"pairs[{n}].gold must be one of the gold step numbers given, not {j!r}")
            if not isinstance(i, int) or not 1 <= i <= agent_count:
                raise MalformedAnswer(f"pairs[{n}].agent must be an agent step number, not {i!r}")
            pairs.append((j - 1, i - 1, _score(pair.get("score"), f"pairs[{n}].score")))
        rationale = data.get("rationale", "")
        return Answer(0.0, rationale if isinstance(rationale, str) else "", {"pairs": pairs})

    # --- the request -------------------------------------------------------------------------

    def _ask(self, kind: str, fields: dict, read, images: tuple[str, ...] = ()) -> Answer:
        """Send one question, retrying and repairing as documented; never raises for the endpoint's faults."""
        messages = load_prompt(kind).messages(**fields)
        if images:
            messages[-1]["content"] = [{"type": "text", "text": messages[-1]["content"]}] + [
                {"type": "image_url", "image_url": {"url": image}} for image in images]
        usage = {"prompt_tokens": 0, "completion_tokens": 0, "calls": 0}
        started = time.monotonic()
        failures, repaired = 0, False
        while True:
            try:
                response = self._request(messages, usage)
            except (openai.APIConnectionError, openai.RateLimitError, openai.InternalServerError) as error:
                failures += 1
                if failures > int(self.options["max_retries"]):
                    return self._failed(f"gave up after {usage['calls']} requests: {self._describe(error)}", usage,
                                        started)
                time.sleep(self._backoff(failures, error))
                continue
            except openai.APIStatusError as error:
                return self._failed(f"request refused: {self._describe(error)}", usage, started)
            content = response.choices[0].message.content if response.choices else None
            try:
                data = json.loads(content or "")
                answer = read(data)
            except (json.JSONDecodeError, MalformedAnswer, outcome.MalformedOutcome,
                    elements.MalformedElement) as error:
                if repaired:
                    return self._failed(f"malformed answer after one repair request: {error}", usage, started)
                repaired = True
                messages = messages + [
                    {"role": "assistant", "content": content or ""},
                    {"role": "user", "content": REPAIR_REQUEST.format(error=error)},
                ]
                continue
            return Answer(
                answer.score, answer.rationale, answer.output, "", usage["prompt_tokens"], usage["completion_tokens"],
                self.cost(usage), self._elapsed_ms(started), usage["calls"],
            )

    def _request(self, messages: list[dict], usage: dict):
        extra = {"response_format": {"type": "json_object"}} if self.options["json_mode"] else {}
        if self._rate_limit:
            self._rate_limit.acquire()
        with self._slots:
            usage["calls"] += 1
            response = self._client.chat.completions.create(
                model=self.spec.model, messages=messages, temperature=self.spec.temperature, **extra
            )
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

    def _failed(self, error: str, usage: dict, started: float) -> Answer:
        return Answer.failed(
            error, prompt_tokens=usage["prompt_tokens"], completion_tokens=usage["completion_tokens"],
            cost=self.cost(usage), latency_ms=self._elapsed_ms(started), calls=usage["calls"],
        )
