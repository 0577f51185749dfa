"""A small OpenAI-compatible chat server that answers from a script, on 127.0.0.1.

For tests, benchmarks and trying the `openai` judge without a model: queued replies are served
first (errors, delays, malformed bodies), then `responder(request)`, by default a well-formed
answer for whichever prompt was sent. `accepts`: the structured-output modes it takes (the
spellings of `response_format` of `judges.backends.llm`); a request in another is answered
`refusal_status` (400; llama-cpp-python's server answers 500) naming `response_format`.
"""

import json
import re
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Reply:
    """`content` is the assistant message (a dict is sent as JSON); `status` != 200 sends an error."""

    content: str | dict = ""
    status: int = 200
    delay: float = 0.0
    headers: dict = field(default_factory=dict)
    prompt_tokens: int = 100
    completion_tokens: int = 20
    finish_reason: str = "stop"


_NUMBERED = re.compile(r"^(\d+)\. ", re.M)
_LISTS = re.compile(r"^(?:Gold steps to match|Requirements|Pairs of steps):\n", re.M)


def _listed_numbers(user_message: str) -> list[int]:
    """The item numbers of the first numbered list the prompt gives (gold steps, requirements, pairs)."""
    start = _LISTS.search(user_message)
    items = user_message[start.end():].split("\n\nAgent steps:", 1)[0] if start else ""
    return [int(number) for number in _NUMBERED.findall(items)]


_TYPE_KEY = re.compile(r"^- ([a-z0-9_]+): ", re.M)
_LOG_STEP = re.compile(r"^Step (\d+) \(([^)]*)\):$", re.M)


def _attribution_reply(system: str, user: str) -> Reply:
    """The first failure type listed, and the first step shown: decisive, in the first half."""
    failure_type = _TYPE_KEY.search(user).group(1)
    if '"decisive"' in system:
        return Reply({"decisive": True, "failure_type": failure_type, "reason": "This step went wrong."})
    if '"half"' in system:
        return Reply({"half": "first", "failure_type": failure_type, "reason": "The first half went wrong."})
    step, agent = _LOG_STEP.search(user).groups()
    agents = user.split("\nAgents: ", 1)[1].split("\n", 1)[0]
    return Reply({"step": int(step), "agent": agent if agent in agents.split(", ") else "",
                  "failure_type": failure_type, "reason": "The first step went wrong."})


def well_formed_reply(request: dict) -> Reply:
    """A valid answer shaped for the prompt's answer format and for the items the request lists.

    A whole-trajectory request lists only the gold steps the judge could not settle itself, so
    the pair named is the first gold step listed, not gold step 1.
    """
    system, user = request["messages"][0]["content"], request["messages"][1]["content"]
    if '"failure_type"' in system:
        return _attribution_reply(system, user)
    if '"intended"' in system:
        return Reply({"element": "button 'Search'", "intended": True, "rationale": "The ring is on it."})
    if '"key_points"' in system:
        return Reply({"key_points": ["The task's requirement is met."]})
    if '"relevance"' in system:
        return Reply({"relevance": 4, "reasoning": "The page shows the requirement."})
    if '"success"' in system:
        return Reply({"success": True, "reasoning": "Every key point is met."})
    if '"pairs"' in system:
        first = _listed_numbers(user)[0]
        return Reply({"pairs": [{"gold": first, "agent": 1, "score": 1}], "rationale": "The first steps match."})
    if '"answers"' in system:
        return Reply(
            {"answers": [{"number": n, "score": 1, "rationale": "Equivalent."} for n in _listed_numbers(user)]}
        )
    if '"grounded"' in system:
        return Reply(
            {"grounded": {"score": 1, "rationale": "Observed."}, "relevant": {"score": 1, "rationale": "On task."}}
        )
    return Reply({"score": 1, "rationale": "Equivalent."})


def structured_output_mode(request: dict) -> str:
    """Which spelling of structured output a request uses."""
    answer_format = request.get("response_format")
    if not answer_format:
        return "none"
    if answer_format["type"] == "json_object":
        return "json_object_schema" if "schema" in answer_format else "json_object"
    return answer_format["type"]


ALL_MODES = ("json_schema", "json_object_schema", "json_object", "none")


class LocalLLMServer:
    def __init__(self, responder: Callable[[dict], Reply] = well_formed_reply, delay: float = 0.0,
                 accepts: tuple[str, ...] = ALL_MODES, refusal_status: int = 400):
        self.responder = responder
        self.delay = delay
        self.accepts = accepts
        self.refusal_status = refusal_status
        self.replies: deque[Reply] = deque()
        self.requests: list[dict] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_port}/v1"

    def queue(self, *replies: Reply) -> None:
        self.replies.extend(replies)

    def __enter__(self) -> "LocalLLMServer":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _next_reply(self, request: dict) -> Reply:
        with self._lock:
            self.requests.append(request)
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            if structured_output_mode(request) not in self.accepts:
                return Reply("response_format: this server does not take this spelling", status=self.refusal_status)
            queued = self.replies.popleft() if self.replies else None
        return queued or self.responder(request)

    def _handler(self):
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                reply = server._next_reply(request)
                try:
                    time.sleep(server.delay + reply.delay)
                    self._send(reply, request)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up waiting (an injected timeout)
                finally:
                    with server._lock:
                        server.in_flight -= 1

            def _send(self, reply: Reply, request: dict):
                if reply.status != 200:
                    body = {"error": {"message": reply.content or f"scripted {reply.status}", "type": "scripted",
                                      "code": reply.status}}
                else:
                    content = reply.content if isinstance(reply.content, str) else json.dumps(reply.content)
                    body = {
                        "id": "chatcmpl-local",
                        "object": "chat.completion",
                        "created": int(time.time()),
                        "model": request.get("model", ""),
                        "choices": [
                            {"index": 0, "message": {"role": "assistant", "content": content},
                             "finish_reason": reply.finish_reason}
                        ],
                        "usage": {
                            "prompt_tokens": reply.prompt_tokens,
                            "completion_tokens": reply.completion_tokens,
                            "total_tokens": reply.prompt_tokens + reply.completion_tokens,
                        },
                    }
                data = json.dumps(body).encode()
                self.send_response(reply.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for name, value in reply.headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        return Handler
